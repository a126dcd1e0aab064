"""How close the recommendations are to the query's text: a strength label per result and a weak-match flag.

Closeness is the cosine between the query and a paper under the encoder that served the query: the "dense"
score component of a `Recommendation`. It is on an absolute scale (unlike the fused score, which mixes BM25
scaled to the best hit of each query, and unlike a learned reranker's score), so a query with no close paper
in the corpus shows as one. A non-English query answered through the multilingual field (its components then
hold a "gloss" cosine too) is judged on the multilingual encoder's own, lower, scale.

The thresholds are calibrated by `bench/confidence.py` on the demo corpus (docs/benchmarks.md,
"Weak-match threshold"): real queries built from the corpus's abstracts and titles against random letter
strings, word salads and off-topic text.
"""
from __future__ import annotations

from typing import Sequence

from .query import Recommendation

# Below this cosine a paper is not close to the query; when no result reaches it, the whole match is weak.
# bench/confidence.py: balanced accuracy 0.99 (English) and 1.00 (multilingual) on its check half.
WEAK_MATCH_COSINE = {"english": 0.34, "multilingual": 0.29}
# From this cosine a paper is close in meaning (the line explanations use for "close in meaning"); the best
# result of 96-99% of the benchmark's citation passages reaches it in English, Chinese and German alike.
STRONG_MATCH_COSINE = {"english": 0.50, "multilingual": 0.50}
STRENGTHS = ("strong", "fair", "weak")


def scale(rec: Recommendation) -> str:
    """"multilingual" when a non-English query was answered through the multilingual field, else "english"."""
    return "multilingual" if "gloss" in rec.components else "english"


def closeness(rec: Recommendation) -> float | None:
    """The query–paper cosine; None when the pipeline ran without the dense signal."""
    value = rec.components.get("dense")
    return None if value is None else float(value)


def strength(rec: Recommendation) -> str | None:
    """"strong", "fair" or "weak" (one of `STRENGTHS`); None when closeness is unknown."""
    value = closeness(rec)
    if value is None:
        return None
    if value >= STRONG_MATCH_COSINE[scale(rec)]:
        return "strong"
    return "fair" if value >= WEAK_MATCH_COSINE[scale(rec)] else "weak"


def best_closeness(recs: Sequence[Recommendation]) -> float | None:
    """The highest closeness among the recommendations; None when none is known."""
    known = [v for v in (closeness(r) for r in recs) if v is not None]
    return max(known) if known else None


def is_weak_match(recs: Sequence[Recommendation]) -> bool:
    """True when no recommendation is close to the query (every known closeness below the weak threshold);
    False for an empty list or when closeness is unknown."""
    best = best_closeness(recs)
    return best is not None and best < WEAK_MATCH_COSINE[scale(recs[0])]
