"""Training objectives of the learned reranker, compared on one set of training pairs and one dev set.

    python -m bench.rerank_objectives --index IDX/hepth \
        --splits ../shared/data/hepth-kddcup2003/splits.json --train-queries 3000 --dev-limit 500
Collects the whole candidate pool of a seeded sample of `train` queries once; each model trains either on it
or on the classifiers' usual sample of it (cited, hard and `--random-negatives` random non-cited papers per
query). Evaluates on the first `--dev-limit` queries of `dev` and prints a Markdown table. Never writes the
index's stored model.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

from bench.paths import need
from recommender.config import METHODS
from recommender.evaluation.evaluate import evaluate
from recommender.evaluation.queries import queries_from_split
from recommender.pipeline.recommender import Recommender
from recommender.training import reranker as rr

KEYS = [("mrr", "MRR"), ("map", "MAP"), ("ndcg@10", "nDCG@10"), ("f1@20", "F1@20"), ("recall@100", "R@100")]


def sample_rows(y: np.ndarray, groups: np.ndarray, random_negatives: int, seed: int) -> np.ndarray:
    """Rows of a whole-pool collection as `collect` samples them: per query the cited papers, the hard
    negatives (they follow the cited ones, best first) and `random_negatives` drawn from the rest."""
    rng = np.random.default_rng(seed)
    sizes = rr.group_sizes(groups)
    keep = []
    for start, size in zip(np.cumsum(sizes) - sizes, sizes):
        rows = np.arange(start, start + size)
        cited, negatives = rows[y[rows] == 1], rows[y[rows] == 0]
        rest = negatives[rr.HARD_NEGATIVES:]
        keep += [cited, negatives[: rr.HARD_NEGATIVES],
                 np.sort(rng.choice(rest, min(random_negatives, len(rest)), replace=False))]
    return np.concatenate(keep)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--splits", type=Path, required=True, help="splits.json with `train` and `dev`")
    parser.add_argument("--train-queries", type=int, default=rr.DEFAULT_MAX_QUERIES)
    parser.add_argument("--dev-limit", type=int, default=500)
    parser.add_argument("--random-negatives", type=int, default=rr.RANDOM_NEGATIVES)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    need(parser, args.index, "--index", "DIR (a trained hep-th index)")
    need(parser, args.splits, "--splits", "FILE (hepth-kddcup2003/splits.json of the shared data)")
    rec = Recommender.load(args.index)
    train = rr.training_queries(rec.index, split=f"{args.splits}:train")
    train = random.Random(args.seed).sample(train, min(args.train_queries, len(train)))
    dev = queries_from_split(f"{args.splits}:dev", rec.index)[: args.dev_limit]

    def log(text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)

    log(f"collecting the pools of {len(train)} training queries")
    X, y, groups, facts = rr.collect(rec, train, seed=args.seed, random_negatives=None, progress=False)
    sample = sample_rows(y, groups, args.random_negatives, args.seed)
    log(f"{facts}; sampled: {len(sample)} pairs")
    sampled = f"{rr.HARD_NEGATIVES}+{args.random_negatives} negatives/query"
    runs = [("logreg", sampled, sample), ("lambdarank", sampled, sample),
            ("logreg", "whole pool", slice(None)), ("lambdarank", "whole pool", slice(None))]
    log(f"evaluating {len(dev)} dev queries")
    results = evaluate(rec, dev, {"hybrid+graph (no rerank)": METHODS["hybrid+graph"]}, progress=False)
    for kind, rows, keep in runs:
        name = f"learned: {kind}, {rows}"
        started = time.time()
        reranker = rr.fit(X[keep], y[keep], kind, args.seed, groups[keep])
        fitted = time.time() - started
        learned = Recommender(rec.index, head=rec.head, reranker=reranker)
        results[name] = evaluate(learned, dev, {"learned": METHODS["learned"]}, progress=False)["learned"]
        log(f"{name}: fit {fitted:.0f} s, mrr {results[name]['mrr']:.4f}")
    print_table(f"method ({len(dev)} dev queries; trained on {facts['queries_used']} queries)", results)


def print_table(first_header: str, results: dict) -> None:
    """The results as a Markdown table: a row per variant, a column per metric of KEYS."""
    print(f"| {first_header} | " + " | ".join(label for _, label in KEYS) + " |")
    print("| --- |" + " ---: |" * len(KEYS))
    for name, metrics in results.items():
        print(f"| {name} | " + " | ".join(f"{metrics[key]:.4f}" for key, _ in KEYS) + " |")


if __name__ == "__main__":
    main()
