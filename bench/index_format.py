"""Two index formats (or two engine versions) on a real index: the same top 10, load time and memory.

    # top 10 of every query (run it with each engine version on its own build of the same corpus: the script
    # needs only the public engine API that every format has)
    python -m bench.index_format rank --index DIR --data ../shared/data --out top10.json
    python -m bench.index_format compare A.json B.json [C.json ...]

Queries: the ACM-CR paper-level drafts (global), paragraphs and sentences (local, with the citing paper's title
and abstract), and 100 of the index's own papers as drafts with their authors (their earlier work joins the
pool) and the paper itself excluded, every fifth restricted to the paper's venue. `rank` also records
`Index.load`'s CPU and wall time and the process's resident memory after loading and after the queries.
"""
from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import need


def queries(index, data: Path | None, own: int = 100, seed: int = 0) -> dict[str, object]:
    """qid -> Query (see the module docstring)."""
    from recommender.evaluation.queries import queries_from_file, query_for_paper

    found = {}
    ids = set(index.ids)
    if data is not None:
        for name in ("queries_paper_level", "queries", "queries_sentences"):
            path = data / "acm-cr" / f"{name}.jsonl.gz"
            if path.is_file():
                for item in queries_from_file(path, ids):
                    found[f"{name}:{item.qid}"] = item.query
    rng = np.random.default_rng(seed)
    positions = sorted(rng.choice(len(index), size=min(own, len(index)), replace=False).tolist())
    for n, (pos, paper) in enumerate(zip(positions, index.papers(positions))):
        query = query_for_paper(paper)
        if n % 5 == 0 and paper.venue:
            query.venues = [paper.venue]
        found[f"own:{paper.id}"] = query
    return found


def rank(index_dir: Path, data: Path | None, out: Path) -> None:
    from recommender.store.index import Index
    from recommender.pipeline.recommender import Recommender

    wall, cpu = time.perf_counter(), time.process_time()
    index = Index.load(index_dir)
    load = {"load_wall_s": round(time.perf_counter() - wall, 3), "load_cpu_s": round(time.process_time() - cpu, 3),
            "format_version": index.manifest["format_version"]}
    recommender = Recommender.from_index(index)
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    top = {}
    for qid, query in queries(index, data).items():
        result = recommender.recommend(query)
        top[qid] = [[r.paper_id, round(float(r.score), 6)] for r in result.recommendations]
    record = {"machine": machine.line(), **load, "peak_rss_mib_after_load": rss_loaded,
              "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10, "top": top}
    out.write_text(json.dumps(record, indent=0), encoding="utf-8")
    print(json.dumps({k: v for k, v in record.items() if k != "top"}), f"{len(top)} queries")


def compare(paths: list[Path]) -> None:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    base = runs[0]["top"]
    for path, run in zip(paths[1:], runs[1:]):
        same_ids = sum([i for i, _ in base[q]] == [i for i, _ in run["top"].get(q, [])] for q in base)
        same = sum(base[q] == run["top"].get(q) for q in base)
        print(f"{paths[0].name} vs {path.name}: {len(base)} queries ({sum(map(bool, base.values()))} answered), "
              f"top 10 ids identical in {same_ids}, ids and scores identical in {same}")
    for path, run in zip(paths, runs):
        print(path.name, {k: v for k, v in run.items() if k != "top"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    ranked = commands.add_parser("rank")
    ranked.add_argument("--index", type=Path, required=True)
    ranked.add_argument("--data", type=Path)
    ranked.add_argument("--out", type=Path, required=True)
    compared = commands.add_parser("compare")
    compared.add_argument("runs", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "rank":
        need(parser, args.index, "--index", "DIR (the index to read)")
    if args.command == "rank" and args.data:
        need(parser, args.data, "--data", "DIR (the shared benchmark data)")
    if args.command == "rank":
        rank(args.index, args.data, args.out)
    else:
        compare(args.runs)


if __name__ == "__main__":
    main()
