"""The sentences of a passage that cite: a paragraph cites different papers in different sentences, so retrieval
also scores each paper by the citing sentence it matches best (`pool.gather`) and the local reranker reads them
(`local_features`)."""
from __future__ import annotations

from .claims import split_sentences
from .query import CITATION_MARK, Query


def citing_sentences(query: Query) -> list[str]:
    """The sentences of the passage that hold a [CIT] placeholder, without it (the whole passage when none with a
    word does)."""
    found = [Query(context=sentence).context_text for _, _, sentence in split_sentences(query.context)
             if CITATION_MARK in sentence.upper()]
    return [text for text in found if _has_words(text)] or [query.context_text]


def focus_sentences(query: Query) -> list[str]:
    """The citing sentences of a passage of several sentences, which retrieval scores papers by one at a time;
    none when the passage is a single sentence (the passage itself is the citing sentence) or has no [CIT]."""
    if not query.is_local or CITATION_MARK not in query.context.upper():
        return []
    if sum(_has_words(sentence) for _, _, sentence in split_sentences(query.context)) < 2:
        return []
    sentences = citing_sentences(query)
    return [] if sentences == [query.context_text] else sentences


def _has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in Query(context=text).context_text)
