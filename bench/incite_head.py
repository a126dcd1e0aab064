"""inCite's encoder as the base of our citation-tuned head (issue 17): on hep-th, the head and the reranker are
trained as `train` trains them, once on our MiniLM vectors (the stored ones of the trained index) and once on
inCite's vectors of the same papers, and both are scored on the same sampled dev queries in one run.

    python -m bench.incite_peer --sets hepth --hepth-index IDX/hepth --hepth-limit 500 [--data ../shared/data]
    python -m bench.incite_head --index IDX/hepth --limit 500 [--data ../shared/data]

The first command (the peer section) builds the sibling index whose dense field is inCite's paper vectors, in
`--work`; this script trains the sibling's head and reranker there (same training split, seed and number of
queries as the trained index's stored ones, read from their info) and reuses them on a second run. Writes
bench/results/incite_head.json.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.incite_encoder import InciteEncoder
from bench import machine
from bench.incite_peer import DEPTH, KEYS, PEER_MAX_TOKENS, WORK, RememberingEncoder, query_sets, recommender_with
from bench.paths import DATA, RESULTS, need, write_json
from recommender.config import METHODS
from recommender.embedding.encoders import english_encoder
from recommender.evaluation.evaluate import evaluate
from recommender.pipeline.learned import load_head, load_reranker, save_head
from recommender.pipeline.recommender import Recommender
from recommender.store.index import Index
from recommender.training.encoder import train_head
from recommender.training.reranker import train, training_queries

ROWS = ("dense", "tuned", "hybrid", "full", "learned")


def train_sibling(sibling: Index, trained: Index, seed: int) -> None:
    """The head and the reranker of `sibling`, trained as `trained`'s were (its split, seed and query count)."""
    recipe = load_reranker(trained.root).info
    if load_reranker(sibling.root) is not None:
        return
    split, limit = recipe["source"].removeprefix("split "), recipe["queries"]
    queries = training_queries(sibling, split=split)
    started = time.time()
    head = train_head(sibling.dense, sibling.graph, [sibling.position[q.qid] for q in queries], seed=seed)
    head.info.update({"source": recipe["source"], "index_version": sibling.version.name})
    save_head(sibling.root, head)
    print(f"head on inCite's vectors: {head.info['pairs']} pairs in {time.time() - started:.0f} s", file=sys.stderr)
    rec = Recommender(sibling, head=head, encoder=InciteEncoder(PEER_MAX_TOKENS))  # queries: stored vectors
    train(rec, queries, max_queries=limit, seed=seed, source=recipe["source"])
    print(f"reranker on inCite's vectors in {time.time() - started:.0f} s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--index", type=Path, required=True, help="the trained hep-th index")
    parser.add_argument("--work", type=Path, default=WORK, help="bench.incite_peer's --work (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=500, help="a seeded sample of this many dev queries")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=RESULTS / "incite_head.json")
    args = parser.parse_args()
    need(parser, args.data / "hepth-kddcup2003", "--data", "DIR (the shared benchmark data, with hepth-kddcup2003/)")
    need(parser, args.index, "--index", "DIR (the trained hep-th index)")
    sibling_root = args.work / "hepth" / "ours-incite-encoder"
    need(parser, sibling_root / "CURRENT", "--work", "DIR (bench.incite_peer's --work, where `bench.incite_peer "
         "--sets hepth` built the sibling index)")
    started = time.time()
    index = Index.load(args.index)
    sibling = Index.load(sibling_root)
    if load_reranker(index.root) is None or load_head(index.root, index.dense.shape[1]) is None:
        raise SystemExit(f"{args.index}: not trained (python -m recommender train --index ... --split ...)")
    train_sibling(sibling, index, args.seed)

    queries = query_sets("hepth", args.data, index, args.limit, args.seed)["dev"]
    methods = {m: METHODS[m] for m in ROWS}
    rows = {}
    for label, root, encoder in (("MiniLM", index.root, english_encoder(index.manifest["model"])),
                                 ("inCite", sibling.root, InciteEncoder(PEER_MAX_TOKENS))):
        remembering = RememberingEncoder(encoder)
        remembering.prime(queries)
        rec = recommender_with(Index.load(root), remembering)
        for method, metrics in evaluate(rec, queries, methods, depth=DEPTH, progress=False).items():
            rows[f"{method}, {label}"] = {k: round(metrics[k], 4) for k in KEYS}
    report = {"date": time.strftime("%Y-%m-%d"), "index": str(args.index), "sibling": str(sibling_root),
              "queries": len(queries), "seed": args.seed, "machine": machine.line(),
              "head_minilm": load_head(index.root, index.dense.shape[1]).info,
              "head_incite": load_head(sibling.root, sibling.dense.shape[1]).info,
              "seconds": round(time.time() - started), "rows": rows}
    write_json(args.json, report, say=False)
    print("| method | " + " | ".join(KEYS) + " |\n| --- |" + " ---: |" * len(KEYS))
    for name, m in rows.items():
        print(f"| {name} | " + " | ".join(f"{m[k]:.4f}" for k in KEYS) + " |")
    print(f"\n{report['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
