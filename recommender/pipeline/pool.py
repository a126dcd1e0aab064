"""The candidate pool of one query: every enabled retriever's candidates, their score components and fused
scores, grown by citation-graph expansion."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recommender.backends.base import Backend, Filters, Scores
from recommender.config import PipelineConfig
from recommender.pipeline.expand import expand
from recommender.pipeline.fuse import Evidence, fuse
from recommender.pipeline.passage import focus_sentences
from recommender.pipeline.prepare import QueryPreparer
from recommender.pipeline.retrieve import lexical_texts, own_work
from recommender.query import Query, Route


@dataclass
class CandidatePool:
    """The candidate pool of one query before the final ordering; a reranker replaces `scores` (`rescore`).
    `lexical`/`vector`: the query's BM25 scores and its unit vector (None when off)."""

    query: Query
    config: PipelineConfig
    candidates: np.ndarray
    components: dict[str, np.ndarray]
    scores: np.ndarray
    via: dict[int, int]
    route: Route
    filters: Filters
    lexical: Scores | None = None
    vector: np.ndarray | None = None
    features: np.ndarray | None = None  # set by a learned rerank: one feature row per candidate
    evidence: Evidence | None = None  # what each signal says about any paper (for the final list's explanations)

    @property
    def allowed(self) -> np.ndarray:
        """Which papers the query may return, one flag per corpus position."""
        return self.filters.mask

    def rescore(self, scores: np.ndarray, features: np.ndarray) -> None:
        """Order by a learned model's scores (which join the components as "learned")."""
        self.scores = scores
        self.components["learned"] = scores
        self.features = features


def gather(query: Query, config: PipelineConfig, route: Route, filters: Filters, *, index, reader: QueryPreparer,
           backend: Backend) -> CandidatePool:
    """Candidates from every enabled retriever of the `backend` (and graph expansion, over the index's citation
    graph) with their components and fused scores."""
    if route.multilingual and not route.language.is_english:  # BM25 sees a few shared terms only
        config = config.with_(w_lexical=config.w_lexical_multilingual)
    evidence = Evidence(own=own_work(query, config, index.by_author))
    pools, vector = [], None
    if config.lexical:
        evidence.lexical = backend.lexical(lexical_texts(query, config, route, reader), filters)
        pools.append(evidence.lexical.top(config.pool))
    if config.dense:
        vector = reader.vector(query, config, route.field)
        evidence.dense = backend.nearest(route.field, vector, filters)
        pools.append(evidence.dense.top(config.pool))
    if config.citing_sentences:
        add_sentences(evidence, focus_sentences(query), config, route, filters, reader, backend)
    gloss = reader.gloss_vector(query, config, route)
    if gloss is not None:
        evidence.gloss = backend.nearest("dense", gloss, filters)
        pools.append(evidence.gloss.top(config.pool))
    if evidence.own:
        mine = np.fromiter(evidence.own, dtype=np.int64, count=len(evidence.own))
        pools.append(mine[filters.mask[mine]])
    candidates = np.unique(np.concatenate(pools)) if pools else np.zeros(0, dtype=np.int64)
    components = evidence.components(candidates)
    scores = fuse(components, config)
    via: dict[int, int] = {}
    if config.graph and len(candidates):
        candidates, components, via = expand(candidates, components, scores, evidence, index.graph, filters.mask,
                                             config)
        scores = fuse(components, config)
    return CandidatePool(query, config, candidates, components, scores, via, route, filters, evidence.lexical, vector,
                         evidence=evidence)


def add_sentences(evidence: Evidence, sentences: list[str], config: PipelineConfig, route: Route, filters: Filters,
                  reader: QueryPreparer, backend: Backend) -> None:
    """The BM25 and cosine of each citing sentence (`passage.focus_sentences`), for the retrievers that are on.
    They score the pool's papers; the pool itself comes from the passage as a whole (drawing each sentence's own
    candidates too changed no result on ACM-CR dev)."""
    if not sentences:
        return
    evidence.sentences = sentences
    if config.lexical and config.w_sentence_lexical > 0:
        evidence.sentences_lexical = [backend.lexical([(reader.lexical_text(text, route), 1.0)], filters)
                                      for text in sentences]
    if config.dense and config.w_sentence_dense > 0:
        vectors = reader.encode(route.field, tuple(sentences))
        evidence.sentences_dense = [backend.nearest(route.field, vector, filters) for vector in vectors]
