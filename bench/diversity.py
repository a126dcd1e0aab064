"""What author diversity costs: ranking quality and author spread of the default pipeline (`full`) at several
diversity settings, per mode (local passages, global drafts), next to `hybrid` (no diversity).

Settings: diversity weight 0, 0.05, 0.1, 0.2, 0.3 over the whole list, and weights 0.1 / 0.3 applied only
below the top N results (`PipelineConfig.diverse_keep`). Every list is 10 long, as in the app (the diverse
selection depends on the list length). Quality: nDCG@10, R@10, MRR@10, with the paired difference in nDCG@10
from diversity 0 and its two-sided p-value (paired sign-flip randomisation test, 10,000 flips, seed 0).
Spread: distinct first authors among the 10, and the most results sharing one author.

    python -m bench.diversity --index IDX/acm-pool --data ../shared/data/acm-cr
    python -m bench.diversity --index IDX/citeseer --split ../shared/data/citeseer-tag/splits.json:dev
    python -m bench.diversity --index .index/demo --all-papers
    python -m bench.diversity --index IDX/hepth --split ../shared/data/hepth-kddcup2003/splits.json:dev --learned

`--data DIR` reads DIR's queries.jsonl.gz (paragraphs), queries_sentences.jsonl.gz (sentences) and
queries_paper_level.jsonl.gz (drafts), whichever exist; `--split FILE:NAME` adds the split's papers as
drafts (title + abstract; relevant = their references); `--all-papers` does that for every paper of the index
that cites others in it (the demo corpus: its curated links).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import need, write_json
from recommender.config import METHODS, PipelineConfig
from recommender.corpus.authors import author_key
from recommender.evaluation.metrics import ndcg_at, summarize
from recommender.evaluation.queries import EvalQuery, queries_for_papers, queries_from_file, queries_from_split
from recommender.pipeline.recommender import Recommender

K = 10
WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3)
PROTECTED = ((0.1, 3), (0.1, 5), (0.3, 3), (0.3, 5))  # (weight, results kept in score order)
FILES = {"paragraphs (local)": "queries.jsonl.gz", "sentences (local)": "queries_sentences.jsonl.gz",
         "paper-level (global)": "queries_paper_level.jsonl.gz"}
FLIPS = 10_000


def settings(learned: bool = False) -> dict[str, PipelineConfig]:
    """`hybrid` and the default pipeline at each diversity setting (`learned`: reordered by the index's reranker
    before the diverse selection, as `recommend` does on a trained index)."""
    full = METHODS["full"].with_(rerank=learned)
    out = {"hybrid": METHODS["hybrid"]}
    out.update({f"full, diversity {w:g}": full.with_(diversity=w, diverse_keep=0) for w in WEIGHTS})
    out.update({f"full, diversity {w:g} below top {n}": full.with_(diversity=w, diverse_keep=n)
                for w, n in PROTECTED})
    return out


def spread(ranked: list[str], authors_of) -> tuple[int, int]:
    """(distinct first authors, most results sharing one author) of a list; a paper without authors is its own."""
    firsts, counts = set(), Counter()
    for pid in ranked:
        keys = [k for k in map(author_key, authors_of(pid)) if k]
        firsts.add(keys[0] if keys else f"paper:{pid}")
        counts.update(set(keys) or {f"paper:{pid}"})
    return len(firsts), max(counts.values(), default=0)


def sign_flip_p(differences: np.ndarray, flips: int = FLIPS) -> float:
    """Two-sided p-value of a zero mean difference (paired randomisation test)."""
    if not differences.any():
        return 1.0
    rng = np.random.default_rng(0)
    signs = rng.choice((-1.0, 1.0), size=(flips, len(differences)))
    means = np.abs((signs * differences).mean(axis=1))
    return float((1 + np.sum(means >= abs(differences.mean()) - 1e-12)) / (flips + 1))


def measure(recommender: Recommender, queries: list[EvalQuery], configs: dict[str, PipelineConfig]) -> dict:
    """Every setting on every query (the query's vectors are encoded once and reused across settings)."""
    index = recommender.index
    lists: dict[str, list[list[str]]] = {name: [] for name in configs}
    for item in queries:
        for name, config in configs.items():
            ranking = recommender.rank(item.query, config, k=K)
            lists[name].append([index.ids[p] for p in ranking.positions])

    def authors_of(pid: str) -> list[str]:
        return index.authors[index.position[pid]]

    per_query = {name: np.array([ndcg_at(r, q.relevant, K) for r, q in zip(runs, queries)])
                 for name, runs in lists.items()}
    base = per_query["full, diversity 0"]
    out = {}
    for name, runs in lists.items():
        metrics = summarize([(r, q.relevant) for r, q in zip(runs, queries)], cutoffs=(K,))
        spreads = np.array([spread(r, authors_of) for r in runs], dtype=float)
        diff = per_query[name] - base
        out[name] = {"ndcg@10": metrics["ndcg@10"], "recall@10": metrics["recall@10"], "mrr@10": metrics["mrr"],
                     "delta_ndcg@10": float(diff.mean()),
                     "delta_ndcg@10_relative": float(diff.mean() / base.mean()) if base.mean() else 0.0,
                     "p_value": sign_flip_p(diff), "queries_changed": int(np.count_nonzero(diff)),
                     "first_authors@10": float(spreads[:, 0].mean()), "max_one_author@10": float(spreads[:, 1].mean())}
    return out


def table(rows: dict) -> str:
    lines = ["| setting | nDCG@10 | Δ nDCG@10 (p) | R@10 | MRR@10 | first authors in top 10 | most by one author |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, m in rows.items():
        delta = f"{100 * m['delta_ndcg@10_relative']:+.1f}% ({m['p_value']:.2f})" if name != "hybrid" else ""
        lines.append(f"| {name} | {m['ndcg@10']:.4f} | {delta} | {m['recall@10']:.4f} | {m['mrr@10']:.4f} "
                     f"| {m['first_authors@10']:.2f} | {m['max_one_author@10']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--data", type=Path, help="directory with ACM-CR-style query files")
    parser.add_argument("--split", help="FILE:NAME of a split file: its papers as global queries")
    parser.add_argument("--all-papers", action="store_true", help="every paper that cites others in the index "
                        "as a global query")
    parser.add_argument("--limit", type=int, default=0, help="first N queries of each set (a quick look)")
    parser.add_argument("--learned", action="store_true", help="the default pipeline with the index's learned "
                        "reranker, as a trained index answers")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    if not (args.data or args.split or args.all_papers):
        parser.error("give --data, --split or --all-papers")
    need(parser, args.index, "--index", "DIR (the index to rank with)")
    if args.data:
        need(parser, args.data, "--data", "DIR (a folder with ACM-CR-style query files)")
    if args.split:
        need(parser, Path(args.split.rpartition(":")[0]), "--split", "FILE:NAME (a split file and a split in it)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    recommender = Recommender.load(args.index)
    if args.learned and recommender.reranker is None:
        parser.error(f"--learned: {args.index} has no learned reranker (python -m recommender train --index DIR)")
    ids = set(recommender.index.ids)
    sets: dict[str, list[EvalQuery]] = {}
    for name, file in FILES.items():
        if args.data and (args.data / file).is_file():
            sets[name] = queries_from_file(args.data / file, ids)
    if args.split:
        sets[f"{args.split.rpartition(':')[2]} papers (global)"] = queries_from_split(args.split, recommender.index)
    if args.all_papers:
        sets["corpus papers (global)"] = queries_for_papers(recommender.index, list(range(len(recommender.index))))
    if not sets:
        print(f"no query files found in {args.data}", file=sys.stderr)
        return 1
    report = {"date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
              "index": str(args.index), "papers": len(recommender.index), "k": K, "learned": args.learned,
              "sets": {}}
    for name, queries in sets.items():
        queries = queries[: args.limit] if args.limit else queries
        started = time.time()
        rows = measure(recommender, queries, settings(args.learned))
        report["sets"][name] = {"queries": len(queries), "rows": rows}
        print(f"\n### {name}: {len(queries)} queries ({time.time() - started:.0f} s)\n\n{table(rows)}", flush=True)
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
