"""Ranking metrics with binary relevance (definitions as in the Citeomatic and SubRef papers)."""
from __future__ import annotations

import math
from typing import Sequence

CUTOFFS = (10, 20, 100, 1000)


def reciprocal_rank(ranked: Sequence[str], relevant: set[str]) -> float:
    for rank, doc in enumerate(ranked, start=1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


def average_precision(ranked: Sequence[str], relevant: set[str]) -> float:
    """Mean of precision at each relevant hit, over all relevant documents (missed ones count 0)."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for rank, doc in enumerate(ranked, start=1):
        if doc in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(rank + 1) for rank, doc in enumerate(ranked[:k], start=1) if doc in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


def precision_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return sum(1 for doc in ranked[:k] if doc in relevant) / k


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return sum(1 for doc in ranked[:k] if doc in relevant) / len(relevant) if relevant else 0.0


def summarize(runs: list[tuple[Sequence[str], set[str]]], cutoffs: Sequence[int] = CUTOFFS) -> dict[str, float]:
    """Mean metrics over queries; F1@k is corpus-level: harmonic mean of mean P@k and mean R@k."""
    n = len(runs)
    if n == 0:
        raise ValueError("no queries to evaluate")
    out = {
        "mrr": sum(reciprocal_rank(r, rel) for r, rel in runs) / n,
        "map": sum(average_precision(r, rel) for r, rel in runs) / n,
        "ndcg@10": sum(ndcg_at(r, rel, 10) for r, rel in runs) / n,
    }
    for k in cutoffs:
        p = sum(precision_at(r, rel, k) for r, rel in runs) / n
        rec = sum(recall_at(r, rel, k) for r, rel in runs) / n
        out[f"precision@{k}"] = p
        out[f"recall@{k}"] = rec
        out[f"f1@{k}"] = 2 * p * rec / (p + rec) if p + rec else 0.0
    out["queries"] = n
    return out
