"""Retracted papers of an index: never recommended silently.

A corpus paper counts as retracted when its record carries `is_retracted: true` (corpora built from OpenAlex
keep the flag) or when the imported Retraction Watch store (`references.retractions`) flags its DOI (a retraction
or an expression of concern not followed by a reinstatement). The recommender leaves them out of its answers by
default (its pool and every other paper's score unchanged: they are only passed over when the final list is
chosen) and says how many it left out; shown on request, each carries its mark.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from recommender.corpus.identifiers import normalize_doi
from recommender.paper import Paper
from recommender.references.retractions import RetractionStore

MARK_KEY = "retraction"  # Paper.extra key of the mark (exports write it into the entry's note)


class RetractedPapers:
    """The retracted papers of one index, found on first use (the index's column of flagged papers, then the
    store's DOIs against the index's DOI column)."""

    def __init__(self, index, store: RetractionStore | None = None):
        self.index, self._store, self._store_given = index, store, store is not None

    @property
    def store(self) -> RetractionStore | None:
        if not self._store_given:
            self._store, self._store_given = RetractionStore.open(), True
        return self._store

    @cached_property
    def flagged(self) -> set[int]:
        """Positions whose record says `is_retracted: true`: the index's column, or, for an index built before
        it had one, a pass over the records (seconds at 10^6 papers)."""
        if self.index.flagged_retracted is not None:
            return set(self.index.flagged_retracted.tolist())
        return {pos for pos, (flag,) in enumerate(self.index.record_fields("is_retracted")) if flag == 1}

    @cached_property
    def positions(self) -> np.ndarray:
        """Sorted positions of every retracted paper of the index."""
        found = set(self.flagged)
        store = self.store
        if store is not None:
            dois = store.dois()
            found |= {pos for pos, doi in enumerate(self.index.dois) if doi and normalize_doi(doi) in dois}
        return np.asarray(sorted(found), dtype=np.int64)

    def __contains__(self, position: int) -> bool:
        positions = self.positions
        at = int(np.searchsorted(positions, position))
        return at < len(positions) and int(positions[at]) == int(position)

    def mask(self, positions: np.ndarray) -> np.ndarray:
        """True where a position is retracted."""
        return np.isin(np.asarray(positions, dtype=np.int64), self.positions)

    def describe(self, position: int) -> str:
        """The mark of a retracted paper ("" for one that is not): its notice, as far as known."""
        if position not in self:
            return ""
        store = self.store
        record = store.find(doi=self.index.dois[position]) if store is not None and self.index.dois[position] \
            else None
        if record is not None and record.retraction is not None:
            notice = record.retraction
            what = "Retracted" if notice.nature == "retraction" else notice.nature.capitalize()
            parts = [f"{what} {notice.date}".strip()]
            if notice.notice_doi:
                parts.append(f"notice https://doi.org/{notice.notice_doi}")
            return f"{'; '.join(parts)} ({notice.source})"
        return "Retracted (flagged in the corpus record)"

    def mark(self, papers: list[Paper], positions: list[int]) -> list[Paper]:
        """The papers with the mark of each retracted one in `extra["retraction"]` (what exports write)."""
        for paper, position in zip(papers, positions):
            mark = self.describe(position)
            if mark:
                paper.extra[MARK_KEY] = mark
        return papers
