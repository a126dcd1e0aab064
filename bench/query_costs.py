"""Two costs of warm queries at scale, each against its baseline in the same process, index and queries (the scale
benchmark's synthetic ones, or any of its format):

- BLAS threads: a query's CPU and wall time with numpy's BLAS on one thread (what `Recommender` sets) or on two.
  Every query is run once first, so that the index's pages it reads are mapped; then each setting answers all
  queries in blocks, in the order 1, 2, 2, 1, with a pause between blocks (idle OpenBLAS threads spin for a while
  after their last product, and that CPU would count against the next block), each query with the recommender's
  caches cleared (it pays for its encoding and its BM25).
- A draft's places: the places of one draft (the local queries' passages, all with the first local query's title
  and abstract, as `review` and the Write page ask), with the draft's BM25 remembered between places (as served)
  or computed at every place (the backend's BM25 forgotten before each; encoded texts are remembered in both).

    python -m bench.query_costs --size-dir /work/idx/scale/3000000 [--queries 100] [--json FILE]
    python -m bench.query_costs --index IDX/acm --real-queries ../shared/data/acm-cr/queries.jsonl.gz [--json FILE]

--size-dir holds `index/` and `queries.json` (`bench.scale`). --real-queries reads citation contexts in ACM-CR's
format instead (nothing is written from them): the global queries are the citing papers' titles and abstracts,
the local ones each context with its paper's title and abstract.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from threadpoolctl import ThreadpoolController

from bench import machine, scale
from bench.paths import need, write_json

ORDER = (1, 2, 2, 1)
PAUSE_S = 1.0


def percentiles(measured: dict[str, list[float]]) -> dict:
    """p50, p95 and max of each kind of time ("cpu", "wall")."""
    return {key: value for kind, values in measured.items()
            for key, value in scale.percentiles(values, f"{kind}_").items()}


def blas_threads(recommender, queries: dict, limit: int) -> dict:
    from recommender.query import Query

    controller = ThreadpoolController()
    found = {}
    for mode in ("global", "local"):
        batch = [Query(**fields) for fields in queries[mode][1:limit + 1]]
        for query in batch:
            recommender.recommend(query)
        times = {n: {"cpu": [], "wall": []} for n in set(ORDER)}
        for threads in ORDER:
            with controller.limit(limits=threads, user_api="blas"):
                time.sleep(PAUSE_S)
                for query in batch:
                    recommender.clear_caches()  # each query pays for its encoding and BM25
                    wall, cpu = time.perf_counter(), time.process_time()
                    recommender.recommend(query)
                    times[threads]["cpu"].append((time.process_time() - cpu) * 1000)
                    times[threads]["wall"].append((time.perf_counter() - wall) * 1000)
        found[mode] = {f"{n} BLAS thread{'s' if n > 1 else ''}": percentiles(measured)
                       for n, measured in sorted(times.items())}
        found[mode]["queries"] = len(batch)
    return found


def draft_places(recommender, queries: dict, limit: int) -> dict:
    from recommender.query import Query

    draft = {key: queries["local"][0][key] for key in ("title", "abstract")}
    places = [Query(**{**fields, **draft}) for fields in queries["local"][1:limit + 1]]
    times = {"remembered": {"cpu": [], "wall": []}, "computed at every place": {"cpu": [], "wall": []}}
    for name in ("computed at every place", "remembered", "remembered", "computed at every place"):
        recommender.clear_caches()
        for query in places:
            if name != "remembered":
                recommender.backend.clear_caches()  # BM25 only: encoded texts stay remembered, as before
            wall, cpu = time.perf_counter(), time.process_time()
            recommender.recommend(query)
            times[name]["cpu"].append((time.process_time() - cpu) * 1000)
            times[name]["wall"].append((time.perf_counter() - wall) * 1000)
    return {**{name: percentiles(measured) for name, measured in times.items()}, "places": len(places)}


def real_queries(path: Path, index) -> dict:
    """Global and local queries (as `bench.scale` writes them) from a file of real citation contexts."""
    from recommender.evaluation.queries import queries_from_file

    found = [item.query for item in queries_from_file(path, set(index.ids))]
    drafts = [{"title": query.title, "abstract": query.abstract} for query in found]
    return {"global": drafts, "local": [{"context": query.context, **draft} for query, draft in zip(found, drafts)]}


def main() -> None:
    from recommender.pipeline.recommender import Recommender

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-dir", type=Path, help="a bench.scale size folder (index/, queries.json)")
    parser.add_argument("--index", type=Path, help="an index, with --real-queries")
    parser.add_argument("--real-queries", type=Path, help="citation contexts in ACM-CR's format (.jsonl.gz)")
    parser.add_argument("--queries", type=int, default=100, help="global and local queries each (default 100)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    if bool(args.size_dir) == bool(args.index and args.real_queries):
        parser.error("give --size-dir, or --index with --real-queries")
    if args.size_dir:
        need(parser, args.size_dir / "queries.json", "--size-dir", "DIR (a bench.scale size folder)")
    else:
        need(parser, args.index / "CURRENT", "--index", "DIR (an index)")
        need(parser, args.real_queries, "--real-queries", "FILE (e.g. ../shared/data/acm-cr/queries.jsonl.gz)")
    started = machine.describe()
    recommender = Recommender.load(args.size_dir / "index" if args.size_dir else args.index)
    queries = (json.loads((args.size_dir / "queries.json").read_text(encoding="utf-8")) if args.size_dir
               else real_queries(args.real_queries, recommender.index))
    results = {"command": "python -m bench.query_costs " + " ".join(sys.argv[1:]), "date": time.strftime("%Y-%m-%d"),
               "machine": started, "blas_threads": blas_threads(recommender, queries, args.queries),
               "draft_places": draft_places(recommender, queries, args.queries), "load_after": machine.load()}
    print(json.dumps(results, indent=1))
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
