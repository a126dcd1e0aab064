"""Today's engine as a backend: BM25 (bm25s) and the dense fields (their clusters, or exact cosine) of the index in this
process. The default; the other backends are measured against it."""
from __future__ import annotations

import threading
from collections import OrderedDict

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
    REMEMBERED, REMEMBERED_BYTES = 8, 64 << 20  # the BM25 scores kept: of at most 8 texts and about 64 MiB (2 texts
    # at least): a draft's title and abstract recur at each of its places

    def __init__(self, index, dense: dict[str, DenseRetriever]):
        self.index, self.dense = index, dense
        self._remembered: OrderedDict[str, np.ndarray] = OrderedDict()  # text -> its scaled scores, latest last
        self._keep = max(2, min(self.REMEMBERED, self.REMEMBERED_BYTES // (4 * max(len(index), 1))))  # float32s
        self._lock = threading.Lock()

    def lexical(self, texts: list[tuple[str, float]], filters: Filters) -> Scores:
        total = None
        for text, weight in texts:
            part = weight * self._scaled_lexical(text)
            total = part if total is None else total + part
        return ArrayScores(total if total is not None else np.zeros(len(self.index), np.float32), filters.mask)

    def _scaled_lexical(self, text: str) -> np.ndarray:
        """A text's BM25 scores scaled to their best (read-only), computed once for the last few texts asked: in
        local mode every place of a draft asks for the draft's title and abstract again, which at 3·10⁶ papers
        costs as much as a global query's BM25."""
        with self._lock:
            found = self._remembered.get(text)
            if found is not None:
                self._remembered.move_to_end(text)
                return found
        found = scaled(self.index.lexical.scores(text))
        found.flags.writeable = False
        with self._lock:
            self._remembered[text] = found
            while len(self._remembered) > self._keep:
                self._remembered.popitem(last=False)
        return found

    def clear_caches(self) -> None:
        with self._lock:
            self._remembered.clear()

    def nearest(self, field: str, vector: np.ndarray, filters: Filters) -> Scores:
        return NearestScores(self.dense[field], vector, filters.mask)
