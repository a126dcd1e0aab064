"""Offline evaluation: several pipeline variants over one query set, in one run."""
from __future__ import annotations

import sys
import time
from typing import Callable

import numpy as np
from tqdm.auto import tqdm

from recommender.config import METHODS, PipelineConfig
from recommender.evaluation.metrics import CUTOFFS, summarize
from recommender.evaluation.queries import EvalQuery
from recommender.pipeline.recommender import Recommender


def evaluate(recommender: Recommender, queries: list[EvalQuery], methods: dict[str, PipelineConfig] | None = None,
             depth: int = max(CUTOFFS), progress: bool = True,
             on_query: Callable[[str, list[str]], None] | None = None) -> dict[str, dict[str, float]]:
    """Metrics for each method over the same queries, plus the p50/p95 time to rank one query (ms);
    `on_query(method, ranked_ids)` sees every run.

    Methods that need the learned reranker or tuned encoder are skipped (with a note) when the recommender
    has none (for some query: local queries may use the passage reranker)."""
    methods = methods or METHODS
    no_reranker = any(recommender.reranker_for(item.query) is None for item in queries)
    untrained = [name for name, c in methods.items()
                 if (c.rerank and no_reranker) or (c.tuned == "on" and recommender.head is None)]
    if untrained:
        print(f"skipping {', '.join(untrained)}: the index has no learned model (python -m recommender train)",
              file=sys.stderr)
        methods = {name: c for name, c in methods.items() if name not in untrained}
    results = {}
    for name, config in methods.items():
        config = config.with_(pool=max(config.pool, depth))
        runs, seconds = [], []
        recommender.clear_caches()  # every method pays for encoding its queries: honest timings
        for item in tqdm(queries, desc=name, disable=not progress):
            started = time.perf_counter()
            ranking = recommender.rank(item.query, config, k=depth)
            seconds.append(time.perf_counter() - started)
            ranked = [recommender.index.ids[p] for p in ranking.positions]
            runs.append((ranked, item.relevant))
            if on_query:
                on_query(name, ranked)
        results[name] = summarize(runs)
        if seconds:
            results[name].update({"ms_p50": round(1000 * float(np.percentile(seconds, 50)), 1),
                                  "ms_p95": round(1000 * float(np.percentile(seconds, 95)), 1)})
    return results


def format_table(results: dict[str, dict[str, float]]) -> str:
    """A Markdown table of the main metrics, one row per method."""
    keys = ["mrr", "map", "ndcg@10", "recall@10", "f1@10", "f1@20", "recall@20", "recall@100", "recall@1000"]
    lines = ["| method | " + " | ".join(keys) + " | p95 ms |", "| --- |" + " ---: |" * (len(keys) + 1)]
    for name, metrics in results.items():
        timing = f" {metrics['ms_p95']:.0f} |" if "ms_p95" in metrics else " |"
        lines.append(f"| {name} | " + " | ".join(f"{metrics[k]:.4f}" for k in keys) + " |" + timing)
    return "\n".join(lines)
