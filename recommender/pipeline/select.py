"""Author-diverse selection of the final list: greedy maximisation of a monotone submodular objective.

The objective adds to the plain relevance sum the QAIv2 term of the SubRef / SBERT+SubRef papers:
    f(S) = sum_{j in S} r_j  +  w * sum_{a in authors} sqrt( sum_{j in S, a in authors(j)} r_j / n_j^2 )
Each author is a cluster (n_j = number of authors of paper j). The 1/n_j^2 share makes a paper
with no represented author gain exactly w * sqrt(r_j), however many authors it has. With w = 0 the
greedy order is the plain ranking; a larger w favours papers whose authors are not yet represented.
A number of leading results (`keep`) can be protected: they stay in score order, count as represented, and
only the places after them are chosen for diversity.
"""
from __future__ import annotations

import heapq
import math
from collections import defaultdict
from typing import Callable

import numpy as np

from recommender.corpus.authors import author_key


def clusters_of(authors: list[str], fallback: str) -> list[str]:
    keys = sorted({k for k in map(author_key, authors) if k})
    return keys or [f"paper:{fallback}"]


def marginal_gain(reward: float, clusters: list[str], totals: dict[str, float], weight: float) -> float:
    """Increase of f when a paper with this reward and these author clusters joins the list."""
    share = reward / len(clusters) ** 2
    diversity = sum(math.sqrt(totals[c] + share) - math.sqrt(totals[c]) for c in clusters)
    return reward + weight * diversity


def select_diverse(rewards: list[float], authors: list[list[str]], k: int, weight: float,
                   keep: int = 0) -> list[int]:
    """Indices of the k items chosen greedily under the objective above (rewards must be >= 0); the `keep`
    items of highest reward come first, in reward order, and the greedy choice continues after them.

    Lazy greedy: a gain never grows as the list grows (submodularity), so a stale gain
    is an upper bound and only the head of the heap needs re-evaluating.
    """
    if any(r < 0 for r in rewards):
        raise ValueError("rewards must be non-negative")
    if keep < 0:
        raise ValueError("keep must be zero or positive")
    k = min(k, len(rewards))
    ranked = sorted(range(len(rewards)), key=lambda i: -rewards[i])
    if weight <= 0 or keep >= k:
        return ranked[:k]
    clusters = [clusters_of(a, str(i)) for i, a in enumerate(authors)]
    totals: dict[str, float] = defaultdict(float)
    chosen: list[int] = ranked[:keep]
    for i in chosen:
        for c in clusters[i]:
            totals[c] += rewards[i] / len(clusters[i]) ** 2
    heap = [(-marginal_gain(rewards[i], clusters[i], totals, weight), i) for i in ranked[keep:]]
    heapq.heapify(heap)
    while heap and len(chosen) < k:
        _, best = heapq.heappop(heap)
        gain = marginal_gain(rewards[best], clusters[best], totals, weight)
        if heap and gain < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-gain, best))
            continue
        chosen.append(best)
        for c in clusters[best]:
            totals[c] += rewards[best] / len(clusters[best]) ** 2
    return chosen


def diverse_order(scores: np.ndarray, authors_of: Callable[[int], list[str]], k: int, weight: float,
                  pool: int, keep: int = 0) -> np.ndarray:
    """The first k indices of `scores` in final order: by score, or with `weight` > 0 chosen by
    `select_diverse` among the best k * `pool` after the `keep` best (`authors_of(i)`: the authors of item i)."""
    order = np.argsort(-scores, kind="stable")
    if weight > 0 and keep < k:
        head = order[: k * pool]
        rewards = np.clip(scores[head], 0, None).tolist()
        picked = [head[i] for i in select_diverse(rewards, [authors_of(j) for j in head], k, weight, keep)]
        chosen = set(picked)
        order = np.concatenate([picked, [j for j in order if j not in chosen]]).astype(np.int64)
    return order[:k]
