"""Today's engine as a backend: BM25 (bm25s) and the dense fields (their clusters, or exact cosine) of the index in this
process. The default; the other backends are measured against it."""
from __future__ import annotations

import numpy as np

from recommender.backends.base import Backend, Filters, Scores
from recommender.pipeline.retrieve import DenseRetriever, scaled, top_positions


class ArrayScores(Scores):
    """Scores held as one value per paper of the corpus."""

    def __init__(self, scores: np.ndarray, mask: np.ndarray):
        self.scores, self.mask = scores, mask

    def top(self, n: int) -> np.ndarray:
        return top_positions(self.scores, self.mask, n)

    def of(self, positions: np.ndarray) -> np.ndarray:
        return self.scores[positions].astype(np.float32)


class NearestScores(Scores):
    """Cosines with a query vector in one dense field, computed for the papers asked about."""

    def __init__(self, retriever: DenseRetriever, vector: np.ndarray, mask: np.ndarray):
        self.retriever, self.vector, self.mask = retriever, vector, mask

    def top(self, n: int) -> np.ndarray:
        return self.retriever.search(self.vector, self.mask, n)

    def of(self, positions: np.ndarray) -> np.ndarray:
        return self.retriever.similarity(self.vector, positions)


class InProcessBackend(Backend):
    """The index's own BM25 and `dense` retrievers (`retrieve.dense_retrievers`: one per dense field)."""

    name = "in-process"

    def __init__(self, index, dense: dict[str, DenseRetriever]):
        self.index, self.dense = index, dense

    def lexical(self, texts: list[tuple[str, float]], filters: Filters) -> Scores:
        total = None
        for text, weight in texts:
            part = weight * scaled(self.index.lexical.scores(text))
            total = part if total is None else total + part
        return ArrayScores(total if total is not None else np.zeros(len(self.index), np.float32), filters.mask)

    def nearest(self, field: str, vector: np.ndarray, filters: Filters) -> Scores:
        return NearestScores(self.dense[field], vector, filters.mask)
