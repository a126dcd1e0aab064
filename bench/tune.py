"""Grid search of the fusion settings on a development query set (never on held-back data).

    python -m bench.tune citeseer [--data ../shared/data] [--index-root IDX]
Prints the best settings by nDCG@10 (MRR as tie-break); depth 100 keeps it quick.
"""
from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from bench.paths import DATA, INDEXES, need
from bench.quality import DATASETS
from recommender.config import DEFAULT
from recommender.evaluation.evaluate import evaluate
from recommender.evaluation.queries import queries_from_file, queries_from_split
from recommender.pipeline.recommender import Recommender

GRID = {
    "w_lexical": [0.2, 0.4],
    "w_graph": [0.3, 0.5, 0.8],
    "w_popularity": [0.0, 0.1],
    "expand_from": [10, 20],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", choices=DATASETS)
    parser.add_argument("--set", help="query set name (acm-cr: paragraphs, sentences, papers)")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--index-root", type=Path, default=INDEXES,
                        help="indexes by data set name, as bench.quality builds them (default: %(default)s)")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--global-weights", type=float, nargs="*", default=[DEFAULT.global_weight])
    parser.add_argument("--grid", type=json.loads, default=GRID, help='JSON, e.g. \'{"w_lexical": [0.3, 0.5]}\'')
    args = parser.parse_args()
    spec = DATASETS[args.dataset]
    folder = need(parser, args.data / spec["dir"], "--data", f"DIR (the shared benchmark data, with {spec['dir']}/)")
    root = need(parser, args.index_root / args.dataset, "--index-root",
                f"DIR (a folder holding the {args.dataset} index; `python -m bench.quality {args.dataset}` builds it)")
    rec = Recommender.load(root)
    if "split" in spec:
        file, _, name = spec["split"].rpartition(":")
        queries = queries_from_split(f"{folder / file}:{name}", rec.index)
    else:
        queries = queries_from_file(folder / spec["query_sets"][args.set], set(rec.index.ids))
    queries = queries[: args.limit] if args.limit else queries
    rows = []
    keys = list(args.grid) + ["global_weight"]
    for values in itertools.product(*args.grid.values(), args.global_weights):
        settings = dict(zip(keys, values))
        config = DEFAULT.with_(diversity=0.0, **settings)
        config = config.with_(w_dense=1 - config.w_lexical)
        metrics = evaluate(rec, queries, {"x": config}, depth=100, progress=False)["x"]
        rows.append((metrics["ndcg@10"], metrics["mrr"], metrics["recall@20"], settings))
        print(f"{metrics['ndcg@10']:.4f} {metrics['mrr']:.4f} {metrics['recall@20']:.4f} {settings}", flush=True)
    print("\nbest:")
    for ndcg, mrr, r20, settings in sorted(rows, key=lambda r: (r[0], r[1]), reverse=True)[:5]:
        print(f"ndcg@10 {ndcg:.4f} mrr {mrr:.4f} r@20 {r20:.4f} {settings}")


if __name__ == "__main__":
    main()
