"""A local mode that learns (issue 17): the passage reranker trained on citation contexts, cross-validated by
citing paper, against today's `hybrid` and `full` on the same pools, in one run.

    python -m bench.local_learning --index IDX/acm-pool [--data ../shared/data/acm-cr]

The paragraph and sentence contexts of ACM-CR's development half come from the same 25 citing papers, so one
fold assignment covers both sets (5 folds grouped by `citing_id`): a model never sees any context of a citing
paper it is scored on. Each fold's model learns from the other folds' paragraphs and sentences, as
`train --contexts` would from a file of them, and reranks the held-out pools. The passage-only rows drop the
citing paper's title and abstract from every context, in training and in testing (a user's file without
drafts). Pools and query vectors are cached in --cache between runs (keyed by index version, data files and
features; default .cache/bench/local_learning in the checkout). Writes bench/results/local_learning.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import DATA, RESULTS, SCRATCH, need, write_json
from recommender.config import METHODS
from recommender.embedding.encoders import get_encoder
from recommender.evaluation.metrics import ndcg_at, summarize
from recommender.pipeline.learned import load_head
from recommender.pipeline.local_features import LOCAL_FEATURES
from recommender.pipeline.recommender import Recommender
from recommender.store.index import Index
from recommender.training.local import (FOLDS, collect_pools, fit_pools, grouped_folds, pool_config, read_contexts,
                                        without_drafts)

SETS = {"paragraphs": "queries.jsonl.gz", "sentences": "queries_sentences.jsonl.gz"}
POOL = METHODS["learned"].pool  # candidates per retriever: the app's setting
KEYS = ("recall@10", "ndcg@10", "mrr")
CACHE = SCRATCH / "local_learning"


class CachedVectors:
    """The English encoder with the vectors of known texts given (encoded once, in batches, and kept on disk)."""

    def __init__(self, encoder, path: Path, texts: list[str]):
        self.encoder, self.vectors = encoder, {}
        if path.is_file():
            with np.load(path, allow_pickle=False) as data:
                self.vectors = dict(zip(data["keys"].tolist(), data["vectors"]))
        missing = sorted({t for t in texts if self.key(t) not in self.vectors})
        if missing:
            started = time.time()
            for text, vector in zip(missing, encoder.encode(missing)):
                self.vectors[self.key(text)] = vector
            print(f"encoded {len(missing)} texts in {time.time() - started:.0f} s", file=sys.stderr)
            keys = sorted(self.vectors)
            np.savez(path, keys=np.array(keys), vectors=np.stack([self.vectors[k] for k in keys]))

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def encode(self, texts: list[str]) -> np.ndarray:
        if all(self.key(t) in self.vectors for t in texts):
            return np.stack([self.vectors[self.key(t)] for t in texts]).astype(np.float32)
        return self.encoder.encode(texts)


def cached_pools(rec: Recommender, queries, path: Path):
    if path.is_file():
        return pickle.loads(path.read_bytes())
    started = time.time()
    pools = collect_pools(rec, queries, pool_config().with_(pool=POOL), progress=False)
    path.write_bytes(pickle.dumps(pools, protocol=pickle.HIGHEST_PROTOCOL))
    print(f"{len(queries)} pools in {time.time() - started:.0f} s", file=sys.stderr)
    return pools


def metrics(runs) -> dict[str, float]:
    summary = summarize(runs)
    return {k: round(summary[k], 4) for k in KEYS}


def gain_interval(runs, base_runs, groups: list[str], seed: int, draws: int = 2000) -> list[float]:
    """95% interval of the relative nDCG@10 gain of `runs` over `base_runs`, by a bootstrap over citing papers
    (the contexts of one paper are not independent)."""
    ours = np.array([ndcg_at(ranked, relevant, 10) for ranked, relevant in runs])
    base = np.array([ndcg_at(ranked, relevant, 10) for ranked, relevant in base_runs])
    names = sorted(set(groups))
    members = [np.flatnonzero(np.array(groups) == name) for name in names]
    rng = np.random.default_rng(seed)
    gains = []
    for _ in range(draws):
        rows = np.concatenate([members[j] for j in rng.integers(0, len(names), len(names))])
        gains.append(100 * (ours[rows].mean() / base[rows].mean() - 1) if base[rows].mean() > 0 else 0.0)
    return [round(float(v), 1) for v in np.percentile(gains, [2.5, 97.5])]


def add_inputs(parser: argparse.ArgumentParser, index_help: str, cache_help: str) -> None:
    """--index, --data and --cache, as this script and bench.document_contexts take them."""
    parser.add_argument("--index", type=Path, required=True, help=index_help)
    parser.add_argument("--data", type=Path, default=DATA / "acm-cr", help="the ACM-CR folder (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"{cache_help} (default: %(default)s)")


def parse_inputs(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The arguments, once --index and the ACM-CR query files of --data are there (else exit code 2)."""
    args = parser.parse_args()
    need(parser, args.index, "--index", "DIR (the ACM-CR pool index)")
    for file in SETS.values():
        need(parser, args.data / file, "--data", "DIR (the ACM-CR folder of the shared data)")
    return args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_inputs(parser, "ACM-CR index (the lead's 10K pool)", "pools and vectors between runs")
    parser.add_argument("--folds", type=int, default=FOLDS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="lambdarank")
    parser.add_argument("--json", type=Path, default=RESULTS / "local_learning.json")
    args = parse_inputs(parser)
    started = time.time()

    index = Index.load(args.index)
    contexts = {name: read_contexts(args.data / file, index) for name, file in SETS.items()}
    queries = [q for c in contexts.values() for q in c.queries]
    groups = [g for c in contexts.values() for g in c.groups]
    texts = sorted({t for q in queries for t in (q.query.main_text, q.query.global_text) if t})
    key = hashlib.sha256(json.dumps([index.version.name, [c.sha256 for c in contexts.values()], LOCAL_FEATURES,
                                     repr(pool_config().with_(pool=POOL))]).encode()).hexdigest()[:16]
    args.cache.mkdir(parents=True, exist_ok=True)
    encoder = CachedVectors(get_encoder("sbert", index.manifest["max_tokens"]), args.cache / "vectors.npz", texts)
    rec = Recommender(index, head=load_head(index.root, index.dense.shape[1]), encoder=encoder)  # no local model
    drafted = cached_pools(rec, queries, args.cache / f"pools-{key}.pkl")
    bare_queries = without_drafts(queries)
    bare = cached_pools(rec, bare_queries, args.cache / f"pools-{key}-nodraft.pkl")
    folds = grouped_folds(groups, args.folds, args.seed)

    # out of fold: each citing paper's contexts scored by the model that never saw that paper
    learned = [np.zeros(0, np.float32)] * len(queries)
    learned_bare = [np.zeros(0, np.float32)] * len(queries)
    models = {}
    for fold in range(folds.max() + 1):
        models[fold] = model = fit_pools([p for p, f in zip(drafted, folds) if f != fold], args.model, args.seed)
        bare_model = fit_pools([p for p, f in zip(bare, folds) if f != fold], args.model, args.seed)
        for i in np.flatnonzero(folds == fold):
            learned[i] = model.score(drafted[i].features)
            learned_bare[i] = bare_model.score(bare[i].features)
    print(f"fitted {len(models)} fold models", file=sys.stderr)

    # the cached pools are the ones Recommender.rank reranks: check a few queries end to end
    for i in range(0, len(queries), max(1, len(queries) // 5)):
        model = Recommender(index, head=rec.head, encoder=encoder, local_reranker=models[int(folds[i])])
        ranking = model.rank(queries[i].query, METHODS["learned"].with_(pool=POOL), k=len(drafted[i].candidates))
        expected = drafted[i].candidates[np.argsort(-learned[i], kind="stable")]
        if list(ranking.positions) != [int(p) for p in expected]:
            raise SystemExit(f"query {queries[i].qid}: the cached ranking differs from Recommender.rank")

    def ids(pool, order) -> list[str]:
        return [index.ids[int(pool.candidates[j])] for j in order]

    results, offset = {}, 0
    for name, context_set in contexts.items():
        span = range(offset, offset + len(context_set.queries))
        offset += len(context_set.queries)
        runs = {}
        for method in ("hybrid", "full"):
            config = METHODS[method].with_(pool=POOL)
            runs[method] = [([index.ids[p] for p in rec.rank(queries[i].query, config, k=1000).positions],
                             queries[i].relevant) for i in span]
        runs["learned-local"] = [(ids(drafted[i], np.argsort(-learned[i], kind="stable")), queries[i].relevant)
                                 for i in span]
        for method in ("hybrid", "full"):
            config = METHODS[method].with_(pool=POOL)
            runs[f"{method}, passage only"] = [
                ([index.ids[p] for p in rec.rank(bare_queries[i].query, config, k=1000).positions],
                 queries[i].relevant) for i in span]
        runs["learned-local, passage only"] = [(ids(bare[i], np.argsort(-learned_bare[i], kind="stable")),
                                                queries[i].relevant) for i in span]
        rows = {}
        for method, method_runs in runs.items():
            base = "hybrid, passage only" if method.endswith("passage only") else "hybrid"
            rows[method] = {**metrics(method_runs), "baseline": base,
                            "ndcg@10_gain_ci95": gain_interval(method_runs, runs[base],
                                                               [groups[i] for i in span], args.seed)}
        results[name] = {"queries": len(context_set.queries), "citing_papers": context_set.citing_papers,
                         "rows": rows}

    report = {"index": str(args.index), "index_version": index.version.name, "papers": len(index),
              "pool": POOL, "folds": int(folds.max() + 1), "model": args.model, "seed": args.seed,
              "features": list(LOCAL_FEATURES), "seconds": round(time.time() - started),
              "machine": machine.line(), "results": results}
    write_json(args.json, report, say=False)
    for name, result in results.items():
        rows = result["rows"]
        print(f"\n### {name}: {result['queries']} queries from {result['citing_papers']} citing papers\n")
        print("| method | R@10 | nDCG@10 | MRR | nDCG@10 vs baseline (95% interval) |\n"
              "| --- | ---: | ---: | ---: | ---: |")
        for method, m in rows.items():
            low, high = m["ndcg@10_gain_ci95"]
            gain = 100 * (m["ndcg@10"] / rows[m["baseline"]]["ndcg@10"] - 1)
            versus = "baseline" if method == m["baseline"] else f"{gain:+.1f}% ({low:+.1f}% to {high:+.1f}%)"
            print(f"| {method} | {m['recall@10']:.4f} | {m['ndcg@10']:.4f} | {m['mrr']:.4f} | {versus} |")
    print(f"\n{report['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
