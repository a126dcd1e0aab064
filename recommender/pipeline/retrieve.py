"""Candidates of a query: the papers its filters allow, the texts BM25 is asked, nearest papers in a dense field
(the in-process search behind `backends.inprocess`), and the earlier papers of the query's own authors."""
from __future__ import annotations

import numpy as np

from recommender.config import DENSE_OVERFETCH, EXACT_SEARCH_SHARE, PipelineConfig
from recommender.corpus.authors import author_key
from recommender.pipeline.prepare import QueryPreparer
from recommender.query import Query, Route

SAMPLE_PER_RESULT = 256  # sampled scores per result wanted, when `top_positions` cuts a long array first


def allowed(index, query: Query) -> np.ndarray:
    """Boolean mask of the papers the query may return (years, date cut-off, venues, exclusions)."""
    mask = np.ones(len(index), dtype=bool)
    if query.year_min is not None:
        mask &= index.years >= query.year_min
    if query.year_max is not None:
        mask &= (index.years <= query.year_max) & (index.years > 0)
    if query.max_date:
        limit = int(query.max_date.replace("-", "")[:8])
        dated = index.dates > 0
        undated_ok = (index.years == 0) | (index.years <= limit // 10000)  # papers with no date at all stay
        mask &= np.where(dated, index.dates <= limit, undated_ok)
    if query.venues:
        wanted, verdicts = {v.lower() for v in query.venues}, {}

        def kept(venue: str) -> bool:  # each distinct venue of the index judged once
            if venue not in verdicts:
                verdicts[venue] = any(w in venue.lower() for w in wanted)
            return verdicts[venue]

        mask &= np.fromiter(map(kept, index.venues), dtype=bool, count=len(index))
    for pid in query.exclude:
        pos = index.position.get(pid)
        if pos is not None:
            mask[pos] = False
    return mask


def top_positions(scores: np.ndarray, allowed: np.ndarray, n: int) -> np.ndarray:
    """The (at most) n allowed positions with the highest positive scores, best first (ties in position order).
    Over a long array only the positions that reach a threshold are compared: a value that at least n allowed
    scores reach, estimated from an evenly spaced sample of `SAMPLE_PER_RESULT` scores per result wanted."""
    size = len(scores)
    candidates = None
    if n > 0 and size > 16 * SAMPLE_PER_RESULT * n:
        sample = np.sort(scores[::size // (SAMPLE_PER_RESULT * n)])
        threshold = sample[-int(np.ceil(4 * n * len(sample) / size))]  # about 4n scores reach it
        if threshold > 0:
            candidates = np.flatnonzero((scores >= threshold) & allowed)
            candidates = candidates if len(candidates) >= n else None
    if candidates is None:
        candidates = np.flatnonzero(allowed & (scores > 0))
    values = scores[candidates]
    if len(candidates) > n > 0:
        kth = np.partition(values, len(values) - n)[len(values) - n]
        above = np.flatnonzero(values > kth)
        keep = np.concatenate([above, np.flatnonzero(values == kth)[:n - len(above)]])
        candidates, values = candidates[keep], values[keep]
    elif n <= 0:
        return np.zeros(0, dtype=np.int64)
    return candidates[np.lexsort((candidates, -values))].astype(np.int64)


def scaled(values: np.ndarray) -> np.ndarray:
    """Values divided by their maximum (zeros when none is positive)."""
    top = float(values.max()) if len(values) else 0.0
    return values / top if top > 0 else np.zeros_like(values)


def lexical_texts(query: Query, config: PipelineConfig, route: Route, reader: QueryPreparer) -> list[tuple[str, float]]:
    """What BM25 is asked, with weights (`backends.Backend.lexical`): the passage (or draft), plus in local mode
    the draft weighted by `config.global_weight`; a non-English query is searched by what
    `QueryPreparer.lexical_text` reads of it."""
    texts = [(reader.lexical_text(query.main_text, route), 1.0)]
    if query.is_local and query.global_text and config.global_weight > 0:
        texts.append((reader.lexical_text(query.global_text, route), config.global_weight))
    return texts


class DenseRetriever:
    """Nearest papers to a query vector in one dense field (unit vectors; `clusters`: the field's
    `store.clusters.Clusters`, None for exact search only)."""

    def __init__(self, vectors: np.ndarray, clusters=None):
        self.vectors, self.clusters = vectors, clusters

    def search(self, vector: np.ndarray, allowed: np.ndarray, n: int) -> np.ndarray:
        """The n nearest allowed papers: the clusters' nearest, scored exactly, or exact cosine over the field when
        that is as cheap (a small field) or when the filter removes most of the clusters' answers."""
        if self.clusters is None or self.clusters.scan_share >= EXACT_SEARCH_SHARE:
            return top_positions(np.asarray(self.vectors @ vector), allowed, n)
        found = self.clusters.nearest(vector, n * DENSE_OVERFETCH)
        found = found[allowed[found]] if len(found) else found
        if len(found) < min(n, int(allowed.sum())) // 2:
            return top_positions(np.asarray(self.vectors @ vector), allowed, n)
        return found[np.argsort(-self.similarity(vector, found), kind="stable")][:n]

    def similarity(self, vector: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Cosine of the query vector with the papers at `positions`."""
        return np.asarray(self.vectors[positions] @ vector, dtype=np.float32)


def dense_retrievers(index, head=None) -> dict[str, DenseRetriever]:
    """A retriever per dense field of the index: "dense" (English encoder), "tuned" (with `head`, the
    index's `learned.EncoderHead`: the stored vectors through the head, exact search) and "multilingual",
    where present."""
    fields = {"dense": DenseRetriever(index.dense, index.clusters)}
    if head is not None:
        fields["tuned"] = DenseRetriever(head.apply(index.dense))
    if index.multilingual is not None:
        fields["multilingual"] = DenseRetriever(index.multilingual, index.multilingual_clusters)
    return fields


def own_work(query: Query, config: PipelineConfig, by_author: dict[str, np.ndarray]) -> dict[int, float]:
    """Papers written by the query's authors: position -> share of the query's authors on it."""
    keys = {author_key(name) for name in query.authors} - {""}
    if not config.own_work or not keys:
        return {}
    counts: dict[int, float] = {}
    for key in keys:
        for pos in by_author.get(key, ()):
            counts[int(pos)] = counts.get(int(pos), 0.0) + 1.0 / len(keys)
    return counts
