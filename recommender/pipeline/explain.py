"""Short "why this paper" texts built from the evidence behind a score."""
from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN_PLUS

from recommender.paper import Paper
from recommender.pipeline.confidence import STRONG_MATCH_COSINE
from recommender.store.lexical import LexicalIndex, analyze, lexical_text

_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_WORD_RE = re.compile(r"\w+(?:'\w+)?")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?)。，；：！？）])")
MAX_TERMS = 5
MAX_SENTENCE = 220
MAX_FITS = 90  # characters of the user's citing sentence quoted in an explanation
# A term shown as evidence is specific: at most 1 paper in 50 holds it, or at most FEW_PAPERS (a small corpus).
# Words the corpus uses widely ("previous", "investigate", an IR corpus's "ranking") say nothing of one paper.
MAX_TERM_SHARE = 0.02
FEW_PAPERS = 2
GENERIC_WORDS = frozenset(STOPWORDS_EN_PLUS)


def surface_words(text: str) -> dict[str, str]:
    """Map each stem of `text` to the first word in it that produced the stem."""
    words: dict[str, str] = {}
    for word in _WORD_RE.findall(text):
        for stem in analyze(word):
            words.setdefault(stem, word.lower())
    return words


def specific_terms(lexical: LexicalIndex, text: str) -> set[str]:
    """The terms of `text` that few papers of the index hold (at most MAX_TERM_SHARE of them, or FEW_PAPERS)."""
    limit = max(FEW_PAPERS, MAX_TERM_SHARE * lexical.documents)
    return {term for term, papers in lexical.document_frequencies(text).items() if papers <= limit}


def shown_word(word: str) -> bool:
    """A word an explanation may quote: no stop word, single character ("e.g." gives "g") or bare number."""
    return word not in GENERIC_WORDS and len(word) > 1 and not word.isdigit()


def matched_terms(query_weights: dict[str, float], specific: set[str], paper: Paper,
                  surface: dict[str, str]) -> list[str]:
    """The query's specific terms (`specific_terms`) found in the paper, most specific (highest IDF) first, as
    the query wrote them."""
    stems = set(analyze(lexical_text(paper)))
    hits = sorted((s for s in specific if s in stems and shown_word(surface.get(s, s))),
                  key=lambda s: (-query_weights[s], s))
    return [surface.get(s, s) for s in hits[:MAX_TERMS]]


def closest_sentence(query_weights: dict[str, float], paper: Paper) -> str:
    """The abstract sentence sharing the most (IDF-weighted) terms with the query, or ''."""
    best, best_score = "", 0.0
    for sentence in _SENTENCE_RE.split(paper.abstract):
        score = sum(query_weights.get(s, 0.0) for s in sorted(set(analyze(sentence))))
        if score > best_score:
            best, best_score = sentence.strip(), score
    return shorten(best, MAX_SENTENCE)


def shorten(text: str, limit: int) -> str:
    """The text cut at a word boundary to at most `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def explanation(terms: list[str], sentence: str, via_title: str | None, components: dict[str, float],
                fits: str | None = None) -> str:
    """One or two readable sentences naming the strongest evidence; `fits`: the citing sentence of the user's
    paragraph that the paper fits best."""
    parts = []
    if components.get("dense", 0.0) >= STRONG_MATCH_COSINE["english"]:  # where a result is labelled close
        parts.append(f"Close in meaning to your text (cosine {components['dense']:.2f})")
    if terms:
        parts.append("shares the terms " + ", ".join(f"“{t}”" for t in terms))
    if via_title:
        parts.append(f"cited by “{via_title}”, which matches your text")
    if components.get("own", 0.0) > 0:
        parts.append("written by one of your authors")
    text = "; ".join(parts) or "Related by topic"
    if fits:
        quoted = shorten(_SPACE_BEFORE_PUNCTUATION.sub(r"\1", fits), MAX_FITS)  # "[CIT]." left "word ."
        text = f"For the citation in “{quoted}”: {text[0].lower() + text[1:]}"
    text = text[0].upper() + text[1:] + "."
    if sentence:
        text += f" Closest passage: “{sentence}”"
    return text


class Explainer:
    """Explanations for the results of one query; `query_text` is what BM25 saw of it, `lexical` the index's
    BM25 (for the IDF and document frequency of its terms)."""

    def __init__(self, query_text: str, lexical: LexicalIndex):
        self.weights = lexical.term_weights(query_text)
        self.specific = specific_terms(lexical, query_text)
        self.surface = surface_words(query_text)

    def explain(self, paper: Paper, components: dict[str, float], via_title: str | None = None,
                drivers: list[str] | None = None, fits: str | None = None) -> str:
        """`explanation` for one paper; `drivers`: the evidence a learned rerank weighed most; `fits`: the citing
        sentence of the query's paragraph it fits best."""
        text = explanation(matched_terms(self.weights, self.specific, paper, self.surface),
                           closest_sentence(self.weights, paper), via_title, components, fits)
        if drivers:
            text += f" Ranked by the learned model, mostly for: {', '.join(drivers)}."
        return text
