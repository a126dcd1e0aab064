"""The candidate pool of one query: every enabled retriever's candidates, their score components and fused
scores, grown by citation-graph expansion."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import PipelineConfig
from .expand import expand
from .fuse import Evidence, fuse
from .query import Query, Route
from .reader import QueryReader
from .retrieve import DenseRetriever, LexicalRetriever, own_work, top_positions


@dataclass
class CandidatePool:
    """The candidate pool of one query before the final ordering; a reranker replaces `scores` (`rescore`).
    `lexical`/`vector`: the query's BM25 scores over the corpus and its unit vector (None when off)."""

    query: Query
    config: PipelineConfig
    candidates: np.ndarray
    components: dict[str, np.ndarray]
    scores: np.ndarray
    via: dict[int, int]
    route: Route
    allowed: np.ndarray
    lexical: np.ndarray | None = None
    vector: np.ndarray | None = None
    features: np.ndarray | None = None  # set by a learned rerank: one feature row per candidate

    def rescore(self, scores: np.ndarray, features: np.ndarray) -> None:
        """Order by a learned model's scores (which join the components as "learned")."""
        self.scores = scores
        self.components["learned"] = scores
        self.features = features


def gather(query: Query, config: PipelineConfig, route: Route, allowed: np.ndarray, *, index,
           reader: QueryReader, lexical: LexicalRetriever, dense: dict[str, DenseRetriever]) -> CandidatePool:
    """Candidates from every enabled retriever (and graph expansion) with their components and fused scores."""
    if route.multilingual and not route.language.is_english:  # BM25 sees a few shared terms only
        config = config.with_(w_lexical=config.w_lexical_multilingual)
    evidence = Evidence(own=own_work(query, config, index.by_author))
    pools = []
    if config.lexical:
        evidence.lexical = lexical.search(query, config, route)
        pools.append(top_positions(evidence.lexical, allowed, config.pool))
    if config.dense:
        evidence.dense = dense[route.field], reader.vector(query, config, route.field)
        pools.append(evidence.dense[0].search(evidence.dense[1], allowed, config.pool))
    gloss = reader.gloss_vector(query, config, route)
    if gloss is not None:
        evidence.gloss = dense["dense"], gloss
        pools.append(evidence.gloss[0].search(gloss, allowed, config.pool))
    if evidence.own:
        mine = np.fromiter(evidence.own, dtype=np.int64, count=len(evidence.own))
        pools.append(mine[allowed[mine]])
    candidates = np.unique(np.concatenate(pools)) if pools else np.zeros(0, dtype=np.int64)
    components = evidence.components(candidates)
    scores = fuse(components, config)
    via: dict[int, int] = {}
    if config.graph and len(candidates):
        candidates, components, via = expand(candidates, components, scores, evidence, index.graph, allowed, config)
        scores = fuse(components, config)
    return CandidatePool(query, config, candidates, components, scores, via, route, allowed, evidence.lexical,
                         evidence.dense[1] if evidence.dense else None)
