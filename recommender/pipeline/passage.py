"""The sentences of a passage that cite: a paragraph cites different papers in different sentences, so retrieval
also scores each paper by the citing sentence it matches best (`pool.gather`) and the local reranker reads them
(`local_features`)."""
from __future__ import annotations

import re

from recommender.query import CITATION_MARK, MARK_RE, Query
from recommender.review.claims import split_sentences

PHRASE_WORDS = 4  # words before a [CIT] that name what it cites ("the Qulac dataset [CIT]", "LambdaMART [CIT]")
_WORD_RE = re.compile(r"[\w'-]+")


def citing_sentences(query: Query) -> list[str]:
    """The sentences of the passage that hold a [CIT] placeholder, without it (the whole passage when none with a
    word does)."""
    return [text for text, cites in _sentences(query) if cites] or [query.context_text]


def focus_sentences(query: Query) -> list[str]:
    """The citing sentences of a passage of several sentences, which retrieval scores papers by one at a time;
    none when the passage is a single sentence (the passage itself is the citing sentence) or has no [CIT]."""
    if not query.is_local or CITATION_MARK not in query.context.upper():
        return []
    sentences = _sentences(query)
    return [text for text, cites in sentences if cites] if len(sentences) >= 2 else []


def cited_phrases(query: Query) -> list[str]:
    """The last few words before each [CIT] of the passage (after the previous [CIT]): what the writer names as
    cited, often a method, dataset or task named in the cited paper's title; a placeholder with no word before it
    gives none."""
    parts = MARK_RE.split(query.context)
    phrases = (" ".join(_WORD_RE.findall(before)[-PHRASE_WORDS:]) for before in parts[:-1])
    return [phrase for phrase in phrases if phrase]


def _sentences(query: Query) -> list[tuple[str, bool]]:
    """Each sentence of the passage that has a word, without its placeholders, and whether it held one."""
    found = []
    for _, _, sentence in split_sentences(query.context):
        text = Query(context=sentence).context_text
        if any(ch.isalnum() for ch in text):
            found.append((text, CITATION_MARK in sentence.upper()))
    return found
