"""The candidate-retrieval interface: BM25 and nearest neighbours within a query's filters.

A backend answers two kinds of search over one index's papers, each restricted by `Filters`:
    lexical(texts, filters)          BM25 of weighted query texts (each text's scores scaled to its best, summed)
    nearest(field, vector, filters)  cosine of a unit query vector in a dense field ("dense", "tuned", "multilingual")
Both return `Scores`: one query's score for any paper, asked for the best n allowed papers (`top`) or for given
papers (`of`, e.g. those graph expansion adds). Everything after retrieval (fusion, expansion, reranking,
selection, explanations) runs on these candidates and scores, whichever backend produced them.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from recommender.pipeline.retrieve import allowed
from recommender.query import Query


class BackendError(RuntimeError):
    """A retrieval backend that cannot serve this index: unreachable, missing, or built for another index or
    encoder. The message names the problem and what to do."""


@dataclass(frozen=True, eq=False)
class Filters:
    """What a query may return, both as a mask over the index's positions (`mask`) and as the conditions it
    came from, for a backend that filters by itself.

    year_min / year_max: publication years (year_max leaves out undated papers); max_date: YYYYMMDD, papers dated
    no later than it (a paper with only a year counts by its year); venues: lower-case parts of venue names, any
    of which a paper's venue must contain; exclude: positions never returned.
    """

    mask: np.ndarray
    year_min: int | None = None
    year_max: int | None = None
    max_date: int | None = None
    venues: tuple[str, ...] = ()
    exclude: tuple[int, ...] = ()

    @classmethod
    def of(cls, query: Query, index) -> "Filters":
        """The filters of a query over an index (`retrieve.allowed` gives the mask)."""
        limit = int(query.max_date.replace("-", "")[:8]) if query.max_date else None
        exclude = sorted(index.position[pid] for pid in query.exclude if pid in index.position)
        return cls(allowed(index, query), query.year_min, query.year_max, limit,
                   tuple(v.lower() for v in query.venues), tuple(exclude))

    @property
    def restrictive(self) -> bool:
        """Whether any condition is set (else every paper is allowed)."""
        return any(value is not None for value in (self.year_min, self.year_max, self.max_date)) or \
            bool(self.venues or self.exclude)


class Scores(ABC):
    """One query's scores in one retriever."""

    @abstractmethod
    def top(self, n: int) -> np.ndarray:
        """The (at most) n allowed positions with the highest positive scores, best first."""

    @abstractmethod
    def of(self, positions: np.ndarray) -> np.ndarray:
        """The scores (float32) of the papers at `positions` (0 for a paper the query shares nothing with)."""

    def best(self) -> float:
        """The highest score among the allowed papers (0 when none scores above 0)."""
        first = self.top(1)
        return float(self.of(first)[0]) if len(first) else 0.0


class Backend(ABC):
    """Candidate retrieval over one index; `name` says which (for messages and benchmarks)."""

    name: str = ""

    @abstractmethod
    def lexical(self, texts: list[tuple[str, float]], filters: Filters) -> Scores:
        """BM25 of (text, weight) pairs: the sum of each text's scores, scaled to that text's best score over the
        whole corpus, times its weight."""

    @abstractmethod
    def nearest(self, field: str, vector: np.ndarray, filters: Filters) -> Scores:
        """Cosine of a unit vector with the papers' vectors in a dense field."""

    def clear_caches(self) -> None:
        """Forget remembered answers (benchmarks: every timed run pays for its own; nothing by default)."""

    def close(self) -> None:
        """Release connections (nothing to release by default)."""
