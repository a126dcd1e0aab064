"""Citation-graph expansion (Citeomatic, navigation): papers cited by the pool's top candidates join the pool."""
from __future__ import annotations

import numpy as np

from recommender.config import PipelineConfig
from recommender.pipeline.fuse import Evidence
from recommender.store.graph import CitationGraph


def seed_weights(candidates: np.ndarray, scores: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The top n candidates by score (the seeds) and their weights: the scores clipped at zero, as shares of
    their sum (all zero when no seed scores above zero)."""
    order = np.argsort(-scores, kind="stable")[:n]
    weights = np.clip(scores[order].astype(np.float64), 0, None)
    total = sum(weights.tolist())
    return candidates[order], weights / total if total > 0 else weights


def expand(candidates: np.ndarray, components: dict[str, np.ndarray], scores: np.ndarray, evidence: Evidence,
           graph: CitationGraph, allowed: np.ndarray, config: PipelineConfig):
    """The pool grown by the allowed papers the `config.expand_from` seeds cite, and its components with
    "graph" (the summed weight of the seeds citing a paper) and, when weighted, "popularity" (log in-citations
    from allowed papers, scaled to the pool's most cited).

    Returns (candidates, components, via): `via` maps each cited paper to the first seed citing it.
    """
    seeds, weights = seed_weights(candidates, scores, config.expand_from)
    support: dict[int, float] = {}
    via: dict[int, int] = {}
    for seed, weight in zip(seeds.tolist(), weights.tolist()):
        for cited in graph.references_of(seed).tolist():
            if allowed[cited]:
                support[cited] = support.get(cited, 0.0) + weight
                via.setdefault(cited, seed)
    extra = np.array(sorted(set(support) - set(candidates.tolist())), dtype=np.int64)
    added = evidence.components(extra)  # only the new papers need scoring
    components = {name: np.concatenate([values, added[name]]) for name, values in components.items()}
    candidates = np.concatenate([candidates, extra])
    components["graph"] = np.array([support.get(int(c), 0.0) for c in candidates], dtype=np.float32)
    if config.w_popularity > 0:
        citers = graph.cited_by[candidates] @ allowed.astype(np.float32)
        components["popularity"] = np.log1p(citers).astype(np.float32) / np.log1p(max(citers.max(), 1))
    return candidates, components, via
