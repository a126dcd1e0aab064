"""Offline evaluation: several pipeline variants over one query set, in one run."""
from __future__ import annotations

import gzip
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from tqdm.auto import tqdm

from .metrics import CUTOFFS, summarize
from .pipeline import METHODS, PipelineConfig
from .query import Query
from .recommender import Recommender


@dataclass
class EvalQuery:
    qid: str
    query: Query
    relevant: set[str]


def _read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def queries_from_file(path: Path | str, index_ids: set[str]) -> list[EvalQuery]:
    """Query files of ../shared/data: qid, context, citing_title, citing_abstract, relevant, citing_id."""
    out = []
    for row in _read_jsonl(Path(path)):
        relevant = set(row.get("relevant") or []) & index_ids
        if not relevant:
            continue
        exclude = {row["citing_id"]} if row.get("citing_id") else set()
        query = Query(title=row.get("citing_title") or "", abstract=row.get("citing_abstract") or "",
                      context=row.get("context") or "", exclude=exclude)
        out.append(EvalQuery(str(row["qid"]), query, relevant))
    return out


def queries_from_split(spec: str, recommender: Recommender) -> list[EvalQuery]:
    """`splits.json:NAME`: each listed paper queries with its title+abstract; relevant = its references."""
    return queries_for_papers(recommender, split_positions(spec, recommender.index))


def split_positions(spec: str, index) -> list[int]:
    """Corpus positions of the papers listed under NAME in a `FILE:NAME` split file."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ValueError(f"--split takes FILE:NAME, got {spec!r}")
    splits = json.loads(Path(path).read_text(encoding="utf-8"))
    if name not in splits:
        raise ValueError(f"{path} has no split {name!r} (it has {sorted(splits)})")
    return [index.position[i] for i in splits[name] if i in index.position]


def queries_for_papers(recommender: Recommender, positions: list[int]) -> list[EvalQuery]:
    """Corpus papers as queries (`query_for_paper`); relevant = their in-corpus references. Papers without
    text or without such references are left out."""
    index = recommender.index
    out = []
    for paper in index.papers(positions):
        relevant = {r for r in paper.references if r in index.position and r != paper.id}
        if relevant and paper.text:
            out.append(EvalQuery(paper.id, query_for_paper(paper), relevant))
    return out


def query_for_paper(paper) -> Query:
    """A corpus paper as a query: its title, abstract and authors; candidates dated no later than it (date,
    else year), never itself."""
    max_date = paper.extra.get("date") or (f"{paper.year}-12-31" if paper.year else None)
    return Query(title=paper.title, abstract=paper.abstract, authors=list(paper.authors), exclude={paper.id},
                 max_date=max_date)


def evaluate(recommender: Recommender, queries: list[EvalQuery], methods: dict[str, PipelineConfig] | None = None,
             depth: int = max(CUTOFFS), progress: bool = True,
             on_query: Callable[[str, list[str]], None] | None = None) -> dict[str, dict[str, float]]:
    """Metrics for each method over the same queries, plus the p50/p95 time to rank one query (ms);
    `on_query(method, ranked_ids)` sees every run.

    Methods that need the learned reranker or tuned encoder are skipped (with a note) when the index has none;
    a damaged model fails before any run."""
    methods = methods or METHODS
    if any(c.rerank for c in methods.values()) and recommender.has_learned:
        recommender.learned()
    untrained = [name for name, c in methods.items()
                 if (c.rerank and not recommender.has_learned) or (c.tuned == "on" and recommender.tuned_head is None)]
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
