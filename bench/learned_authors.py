"""The learned reranker with and without the query's authors (issue 17): feature sets and training pools compared
on one set of collected pools.

    python -m bench.learned_authors --index IDX/hepth-exp/base \
        --splits ../shared/data/hepth-kddcup2003/splits.json --train-queries 5000 --cache IDX/hepth-exp/pools

Collects, once (cached as .npz under `--cache`, outside the repository), the whole candidate pool of a seeded
sample of `train` queries and of the `dev` queries, each twice: with the query's authors (`learned`'s pool) and
without them (`own_work=False`: no own-work candidates, `own` 0). Then fits LambdaRank models on the training
pools (the old feature set or all of `features.FEATURES`; pools with authors, without them, both, or half of the
queries each way), or reads a model stored by `train` (variant `stored:INDEX_ROOT`), and scores
the dev pools offline, both ways, in the order `Recommender.rank` would give (depth 1000). Prints a Markdown
table; never writes the index's stored model.

    python -m bench.learned_authors --index IDX/hepth --splits ../shared/data/hepth-kddcup2003/splits.json \
        --evaluate bench/results/hepth_authors.json

runs the real pipeline instead (`evaluate`, the index's stored model, all dev queries): `bm25+nav`, `learned`, and
`learned` with the query's authors ignored (`own_work=False`), with p50/p95 query times.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import need
from bench.rerank_objectives import print_table
from recommender.config import METHODS
from recommender.evaluation.evaluate import evaluate, format_table
from recommender.evaluation.metrics import summarize
from recommender.evaluation.queries import queries_from_split
from recommender.pipeline.features import FEATURES
from recommender.pipeline.learned import load_reranker
from recommender.pipeline.recommender import Recommender
from recommender.training import reranker as rr

OLD_FEATURES = FEATURES[:FEATURES.index("own") + 1]  # the feature set before issue 17
DEPTH = 1000


def log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def collect_train(rec: Recommender, queries, own: bool, path: Path):
    """The whole pools of the training queries (`rr.collect`), with or without the query's authors; cached."""
    if path.is_file():
        data = np.load(path)
        return data["X"], data["y"], data["g"]
    config = METHODS["learned"].with_(pool=rr.TRAIN_POOL, own_work=own)
    X, y, g, facts = rr.collect(rec, queries, config, random_negatives=None, progress=False)
    log(f"train pools, authors {own}: {facts}")
    np.savez(path, X=X, y=y, g=g)
    return X, y, g


def collect_dev(rec: Recommender, queries, own: bool, path: Path):
    """Every dev query's whole pool at evaluation depth: feature rows, cited flags, and per query its row count
    and its number of relevant papers (in the pool or not); cached."""
    if path.is_file():
        data = np.load(path)
        return data["X"], data["y"], data["sizes"], data["relevant"]
    config = METHODS["learned"].with_(pool=DEPTH, own_work=own, rerank=False)
    stored = rr.StoredVectors(rec.encoder, rec.index.dense,
                              {q.query.main_text: rec.index.position[q.qid] for q in queries})
    learner = Recommender(rec.index, head=rec.head, encoder=stored)
    rows, labels, sizes, relevant = [], [], [], []
    for item in queries:
        pool = learner.candidate_pool(item.query, config)
        rows.append(learner.graph_features(pool))
        labels.append(np.array([rec.index.ids[c] in item.relevant for c in pool.candidates], dtype=np.int8))
        sizes.append(len(pool.candidates))
        relevant.append(len(item.relevant))
    X, y = np.concatenate(rows), np.concatenate(labels)
    np.savez(path, X=X, y=y, sizes=np.array(sizes), relevant=np.array(relevant))
    return X, y, np.array(sizes), np.array(relevant)


def offline_metrics(scores: np.ndarray, y: np.ndarray, sizes: np.ndarray, relevant: np.ndarray) -> dict:
    """Metrics of the pools ordered by `scores` (stable, best first, top DEPTH), as `evaluate` computes them."""
    runs, start = [], 0
    for size, total in zip(sizes.tolist(), relevant.tolist()):
        part, flags = scores[start:start + size], y[start:start + size]
        order = np.argsort(-part, kind="stable")[:DEPTH]
        ranked = [int(j) if flags[j] else -1 - int(j) for j in order]
        hits = {int(j) for j in np.flatnonzero(flags)}
        runs.append((ranked, hits | {f"missed{k}" for k in range(total - len(hits))}))
        start += size
    return summarize(runs)


def two_pass(rec: Recommender, queries, reranker, own: bool) -> tuple[dict, dict]:
    """Metrics of one pass of `reranker` over each dev pool and of a second pass whose graph and author features
    take their seeds from the first pass's order instead of the fused one (the fused columns kept)."""
    config = METHODS["learned"].with_(pool=DEPTH, own_work=own, rerank=False)
    stored = rr.StoredVectors(rec.encoder, rec.index.dense,
                              {q.query.main_text: rec.index.position[q.qid] for q in queries})
    learner = Recommender(rec.index, head=rec.head, encoder=stored)
    keep = [FEATURES.index("fused"), FEATURES.index("fused_rank")]
    runs = {1: [], 2: []}
    for item in queries:
        pool = learner.candidate_pool(item.query, config)
        first = learner.features.compute(pool)
        scores = reranker.score(first)
        pool.scores = scores.astype(np.float64)
        second = learner.features.compute(pool)
        second[:, keep] = first[:, keep]
        hits = {int(c) for c in pool.candidates if rec.index.ids[c] in item.relevant}
        relevant = hits | {f"missed{k}" for k in range(len(item.relevant) - len(hits))}
        for n, values in ((1, scores), (2, reranker.score(second))):
            order = np.argsort(-values, kind="stable")[:DEPTH]
            runs[n].append(([int(pool.candidates[j]) for j in order], relevant))
    return summarize(runs[1]), summarize(runs[2])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True, help="a trained index (its encoder head is used)")
    parser.add_argument("--splits", type=Path, required=True, help="splits.json with `train` and `dev`")
    parser.add_argument("--train-queries", type=int, default=5000)
    parser.add_argument("--dev-limit", type=int)
    parser.add_argument("--cache", type=Path, help="folder for the collected pools (needed unless --evaluate)")
    parser.add_argument("--variants", nargs="+", default=["old:with", "old:without", "new:with", "new:without",
                                                          "new:both"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--two-pass", type=int, default=0, help="also score this many dev queries in two passes")
    parser.add_argument("--evaluate", type=Path, metavar="JSON",
                        help="instead: run `evaluate` (the real pipeline, the index's stored model) on the dev queries "
                             "for learned with and without the query's authors and bm25+nav; write the metrics here")
    parser.add_argument("--methods", nargs="+", help="with --evaluate: only these of its methods")
    parser.add_argument("--depth", type=int, default=DEPTH, help="with --evaluate: results per query")
    args = parser.parse_args()
    need(parser, args.index, "--index", "DIR (a trained index)")
    need(parser, args.splits, "--splits", "FILE (a splits.json with `train` and `dev`)")
    if not (args.evaluate or args.cache):
        parser.error("give --cache DIR (a folder for the collected pools), or --evaluate JSON")
    rec = Recommender.load(args.index)
    if args.evaluate:
        dev = queries_from_split(f"{args.splits}:dev", rec.index)[: args.dev_limit]
        methods = {"bm25+nav": METHODS["bm25+nav"], "learned": METHODS["learned"],
                   "learned, query authors ignored": METHODS["learned"].with_(own_work=False)}
        methods = {name: methods[name] for name in args.methods or methods}
        results = evaluate(rec, dev, methods, depth=args.depth, progress=False)
        args.evaluate.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
                                             "queries": len(dev),
                                             "model": rec.reranker.info, "results": results}, indent=1))
        print(format_table(results))
        return
    args.cache.mkdir(parents=True, exist_ok=True)
    train = rr.training_queries(rec.index, split=f"{args.splits}:train")
    train = random.Random(args.seed).sample(train, min(args.train_queries, len(train)))
    dev = queries_from_split(f"{args.splits}:dev", rec.index)[: args.dev_limit]
    tag = f"{len(train)}-{args.seed}"
    log(f"{len(train)} training queries, {len(dev)} dev queries")
    fitted = [v for v in args.variants if not v.startswith("stored:")]
    pools = {own: collect_train(rec, train, own, args.cache / f"train-{tag}-{'with' if own else 'without'}.npz")
             for own in (True, False)} if fitted else {}
    devs = {own: collect_dev(rec, dev, own, args.cache / f"dev-{len(dev)}-{'with' if own else 'without'}.npz")
            for own in (True, False)}
    log("pools collected")
    fused = FEATURES.index("fused")
    results = {f"no rerank ({'with' if own else 'without'} authors)": offline_metrics(devs[own][0][:, fused],
                                                                                       *devs[own][1:])
               for own in (True, False)}
    for variant in args.variants:
        if variant.startswith("stored:"):  # a model trained by `train`, read from the given index root
            reranker = load_reranker(variant.partition(":")[2])
            for own in (True, False):
                name = f"{variant} -> dev {'with' if own else 'without'} authors"
                results[name] = offline_metrics(reranker.score(devs[own][0]), *devs[own][1:])
                log(f"{name}: MRR {results[name]['mrr']:.4f}")
            continue
        features_name, _, pools_name = variant.partition(":")
        base, *dropped = features_name.split("-")  # "new-graph2-pool_cites": all features but those two
        features = tuple(n for n in (OLD_FEATURES if base == "old" else FEATURES) if n not in dropped)
        if pools_name == "half":  # each query once: every other one with its authors, the rest without
            parts = [(pools[own], pools[own][2] % 2 == (0 if own else 1)) for own in (True, False)]
            X, y, g = (np.concatenate([part[k][mask] for part, mask in parts]) for k in range(3))
        else:
            chosen = {"with": [True], "without": [False], "both": [True, False]}[pools_name]
            X = np.concatenate([pools[own][0] for own in chosen])
            y = np.concatenate([pools[own][1] for own in chosen])
            g = np.concatenate([pools[own][2] + i * (len(train) + 1) for i, own in enumerate(chosen)])
        started = time.time()
        reranker = rr.fit(X, y, "lambdarank", args.seed, g, features=features, layout=FEATURES)
        log(f"{variant}: fit on {len(y)} rows in {time.time() - started:.0f} s")
        for own in (True, False):
            name = f"{features_name} features, {pools_name} pools -> dev {'with' if own else 'without'} authors"
            results[name] = offline_metrics(reranker.score(devs[own][0]), *devs[own][1:])
            log(f"{name}: MRR {results[name]['mrr']:.4f}")
            if args.two_pass:
                one, two = two_pass(rec, dev[: args.two_pass], reranker, own)
                results[f"{name} ({args.two_pass} queries, one pass)"] = one
                results[f"{name} ({args.two_pass} queries, second pass)"] = two
                log(f"two passes: MRR {one['mrr']:.4f} -> {two['mrr']:.4f}")
    print_table(f"variant ({len(dev)} dev queries; {len(train)} training queries)", results)


if __name__ == "__main__":
    main()
