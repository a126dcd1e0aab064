"""How close the recommendations are to the query's text: a strength per result and a weak-match flag.

Closeness is the cosine between the query and a paper under a fixed base encoder: all-MiniLM-L6-v2 for a
query answered by the English pipeline, multilingual USE for one answered through the multilingual field.
It is an absolute scale, unlike the fused score (BM25 scaled to each query's best hit, graph support) or a
learned reranker's score, so a query with no close paper in the corpus shows as one. When a citation-tuned
encoder head (`train`) ranked the papers, closeness is still measured with the base encoder: the tuned
cosines run higher (bench/confidence.py on a trained demo index) and would need their own thresholds per index.

The weak-match thresholds are calibrated by `bench/confidence.py` on the demo corpus (docs/benchmarks.md, "Weak-match
threshold"): real queries (abstract sentences, titles, the benchmark's citation passages in three languages)
against random letter strings, word salads and off-topic text. The English strong ("close") threshold is calibrated
by `bench/match_labels.py` on the ACM-CR development passages (docs/benchmarks.md, "What the closeness labels
mean"): a result labelled close is one its authors cited at least twice as often as one labelled partial.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from recommender.query import Query, RecommendResult

# Below this cosine a paper is not close to the query; when no result reaches it, the whole match is weak.
# bench/confidence.py: balanced accuracy 0.99 (English) and 1.00 (multilingual) on its check half.
WEAK_MATCH_COSINE = {"english": 0.34, "multilingual": 0.29}
# From this cosine a paper is close to the query: likely one to cite (the line explanations use for "close in
# meaning"). English, bench/match_labels.py on ACM-CR dev passages: precision@10 of close 2.7 times partial's on
# the check half. Multilingual: not calibrated on relevance (no dev index with that field); the best result of
# 96-99% of the demo's Chinese and German citation passages reaches it.
STRONG_MATCH_COSINE = {"english": 0.73, "multilingual": 0.50}
STRENGTHS = ("strong", "fair", "weak")


@dataclass(frozen=True)
class Match:
    """How close one recommended paper is to the query."""

    closeness: float  # cosine under the scale's base encoder
    strength: str     # one of STRENGTHS


@dataclass(frozen=True)
class MatchReport:
    """Closeness of every recommendation of one query, in rank order."""

    scale: str  # "english" or "multilingual"
    matches: list[Match]

    @property
    def best(self) -> float | None:
        return max((m.closeness for m in self.matches), default=None)

    @property
    def weak(self) -> bool:
        """True when no recommendation is close to the query (False when there are none)."""
        return bool(self.matches) and all(m.strength == "weak" for m in self.matches)


def strength(closeness: float, scale: str) -> str:
    """"strong", "fair" or "weak" for a cosine on a scale ("english" or "multilingual")."""
    if closeness >= STRONG_MATCH_COSINE[scale]:
        return "strong"
    return "fair" if closeness >= WEAK_MATCH_COSINE[scale] else "weak"


class Engine(Protocol):
    """What `assess` asks of a `Recommender` (named so, not imported: explain.py, which the recommender runs,
    imports this module)."""

    index: Any

    def query_vector(self, query: Query, field: str = "dense") -> np.ndarray: ...

    def similarity(self, vector: np.ndarray, positions: np.ndarray, field: str = "dense") -> np.ndarray: ...


def assess(engine: Engine, query: Query, result: RecommendResult) -> MatchReport:
    """The closeness of each recommendation `engine` gave for `query`. The query's vector comes from the
    engine's cache, which already holds it: the cost is one dot product per result."""
    field, scale = ("multilingual", "multilingual") if result.route.multilingual else ("dense", "english")
    positions = np.array([engine.index.position[r.paper_id] for r in result], dtype=np.int64)
    cosines = engine.similarity(engine.query_vector(query, field), positions, field)
    return MatchReport(scale, [Match(float(c), strength(float(c), scale)) for c in cosines])
