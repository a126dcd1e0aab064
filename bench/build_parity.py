"""Do two builds of the same corpus rank alike? Top 10 of every benchmark query on index A and on index B.

    python -m bench.build_parity --a DIR/100000/index-old --b DIR/100000/index --queries DIR/100000/queries.json

For the streaming build (issue 30): A is an index built by the code before it, B by the code after, both from
the same corpus and embedding cache (`bench/scale.py` writes both). For an addition: A a full build, B the same
papers built in two steps (`index --add`). Also compares the index files that hold no build-dependent order
(columns, BM25 arrays, graph, the vectors), and gives the mean share of A's top 10 in B's. Results:
bench/results/build_parity.json.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import RESULTS
from recommender.store.graph import FILES as GRAPH_FILES

SAME_BYTES = [*GRAPH_FILES, "bm25/data.csc.index.npy", "bm25/indices.csc.index.npy", "bm25/indptr.csc.index.npy",
              "dense.npy"]


def top10(index_dir: Path, queries: dict) -> dict[str, list[list]]:
    from recommender.pipeline.recommender import Recommender
    from recommender.query import Query

    recommender = Recommender.load(index_dir)
    return {mode: [[(r.paper_id, float(r.score)) for r in recommender.recommend(Query(**q)).recommendations[:10]]
                   for q in queries[mode]] for mode in ("global", "local")}


def same_files(a: Path, b: Path) -> dict[str, bool]:
    from recommender.store import versions

    va, vb = versions.current_version(a), versions.current_version(b)
    found = {name: (va / name).read_bytes() == (vb / name).read_bytes() for name in SAME_BYTES}
    vocabulary = "bm25/vocab.index.json"  # the same terms and ids; the JSON's spacing may differ
    found[vocabulary] = json.loads((va / vocabulary).read_text("utf-8")) == json.loads((vb / vocabulary).read_text("utf-8"))
    for column in sorted(p.name for p in (va / "columns").iterdir()):
        found[f"columns/{column}"] = (va / "columns" / column).read_bytes() == (vb / "columns" / column).read_bytes()
    from recommender.store.index import Index

    ia, ib = Index.load(a, verify=False), Index.load(b, verify=False)
    try:
        found["vectors (dense)"] = bool(np.array_equal(ia.dense, ib.dense))
    finally:
        ia.close()
        ib.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", type=Path, required=True)
    parser.add_argument("--b", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=RESULTS / "build_parity.json")
    args = parser.parse_args()
    queries = json.loads(args.queries.read_text(encoding="utf-8"))
    a, b = top10(args.a, queries), top10(args.b, queries)
    report = {"command": "python -m bench.build_parity " + " ".join(f"--{k} {v}" for k, v in vars(args).items()),
              "machine": machine.describe(), "date": time.strftime("%Y-%m-%d"), "modes": {}}
    for mode in ("global", "local"):
        pairs = list(zip(a[mode], b[mode]))
        report["modes"][mode] = {
            "queries": len(pairs),
            "identical_top10_ids_and_scores": sum(x == y for x, y in pairs),
            "identical_top10_ids": sum([i for i, _ in x] == [i for i, _ in y] for x, y in pairs),
            "mean_top10_overlap": round(float(np.mean([len({i for i, _ in x} & {i for i, _ in y}) / max(len(x), 1)
                                                       for x, y in pairs])), 4)}
    report["files_identical"] = same_files(args.a, args.b)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
