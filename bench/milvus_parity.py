"""The Milvus backend next to the in-process engine, in one run: the same methods over the same queries.

    nice -n 10 python -m bench.milvus_parity --acm-index IDX/acm-pool --citeseer-index IDX/citeseer \
        [--data ../shared/data] [--limit N] [--segment-rows 2000]
    nice -n 10 python -m bench.milvus_parity --index SCALE/100000/index --queries SCALE/100000/queries.json \
        --work DIR [--limit N]

Each index is loaded into a fresh milvus-lite database once flushed at the end and once flushed every
--segment-rows papers (several segments: the stored BM25 weights are the whole index's either way). Per query set and method: nDCG@10 and MRR of each backend, how many queries get the
in-process top 10 exactly, and the time to rank one query once its text is encoded (p50/p95 over the first
--timed queries: retrieval, fusion, expansion and selection, the part a backend changes). Also the bulk load time
(and the segments milvus-lite made) and the time to open the index and each database. Writes
bench/results/milvus_parity.json and prints one Markdown table.

With --index and --queries (a synthetic corpus of `bench.scale`: its index and its queries.json of global and local
queries, without relevance judgements): the index is loaded into milvus-lite once (`milvus-load`'s way) in a
database under --work, and every query is ranked by the default pipeline and by `bm25`, `dense` and `hybrid`, top
10 as the app answers, on three backends: in process (the clusters, as served), in process with exact cosine instead
of the clusters (what both approximate searches approximate), and Milvus. Per query set and method: how many queries get the
same top 10 (ids and order), the same ten papers, and the mean overlap of the top 10s; the time to rank a query
whose text is encoded, wall and CPU (milvus-lite runs in this process, so its threads' CPU counts), p50/p95. Also
the load's time, the segments and bytes on disk, and memory. Nothing is written into the index directory (it is
opened without checksum verification, which would record verified files in its cache folder). Writes
bench/results/milvus_parity_<papers>.json (numbers only).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import DATA, need
from recommender.backends import open_backend
from recommender.backends.inprocess import InProcessBackend
from recommender.backends.milvus import FORMAT as MILVUS_FORMAT, parse_target
from recommender.backends.milvus_load import load_index
from recommender.config import DEFAULT, METHODS
from recommender.evaluation.metrics import summarize
from recommender.evaluation.queries import queries_from_file, queries_from_split
from recommender.pipeline.recommender import Recommender
from recommender.pipeline.retrieve import DenseRetriever, dense_retrievers
from recommender.query import Query
from recommender.store.index import Index

METHOD_NAMES = ("bm25", "dense", "hybrid", "full")
SEGMENTED_METHODS = ("bm25", "full")  # the methods the segments could change if weights were per segment
ACM_SETS = {"paragraphs": "queries.jsonl.gz", "sentences": "queries_sentences.jsonl.gz",
            "papers": "queries_paper_level.jsonl.gz"}


def segments_of(database: Path) -> list[int]:
    """Rows per segment of each collection in a milvus-lite database, from its manifest files (milvus-lite's
    on-disk layout: data/data_<first>_<last>.parquet per segment; read for this report only)."""
    sizes = []
    for manifest in sorted(database.glob("collections/*/manifest.json")):
        for partition in json.loads(manifest.read_text())["partitions"].values():
            for name in partition["data_files"]:
                first, last = Path(name).stem.split("_")[1:3]
                sizes.append(int(last) - int(first) + 1)
    return sizes


def load(index: Index, database: Path, segment_rows: int) -> dict:
    report = load_index(index, parse_target(f"milvus:{database}"), batch=1000, segment_rows=segment_rows,
                        progress=False)
    return {"seconds": round(report.seconds, 1), "segments": segments_of(database)}


def seconds(make):
    started = time.perf_counter()
    made = make()
    return made, round(time.perf_counter() - started, 2)


def measure(rec: Recommender, method: str, queries, depth: int, timed: int) -> tuple[dict, list[list[str]]]:
    """A method's metrics over the queries (ranked lists of `depth`, pool as `evaluate` sets it), the warm time
    to rank each of the first `timed` queries, and every query's top 10."""
    config = METHODS[method].with_(pool=max(METHODS[method].pool, depth))
    runs, ms = [], []
    for i, item in enumerate(queries):
        ranked = [rec.index.ids[p] for p in rec.rank(item.query, config, k=depth).positions]
        runs.append((ranked, item.relevant))
        if i < timed:  # again, now that the query's texts are encoded
            started = time.perf_counter()
            rec.rank(item.query, config, k=depth)
            ms.append(1000 * (time.perf_counter() - started))
    metrics = {k: round(v, 4) for k, v in summarize(runs).items() if k in ("ndcg@10", "mrr", "recall@10")}
    metrics.update(ms_p50=round(float(np.percentile(ms, 50)), 1), ms_p95=round(float(np.percentile(ms, 95)), 1))
    return metrics, [ranked[:10] for ranked, _ in runs]


def run(recommenders: dict[str, tuple[Recommender, tuple[str, ...]]], queries, depth: int, timed: int) -> dict:
    """Every backend's metrics per method, with how many queries got the first backend's top 10."""
    out, first = {}, {}
    for name, (rec, methods) in recommenders.items():
        out[name] = {}
        for method in methods:
            metrics, tops = measure(rec, method, queries, depth, timed)
            first.setdefault(method, tops)
            out[name][method] = {**metrics, "same_top10": sum(a == b for a, b in zip(tops, first[method]))}
    return out


def table(report: dict) -> str:
    lines = ["| query set | method | nDCG@10 in-process | Milvus | 2+ segments | MRR in-process | Milvus | 2+ segments "
             "| same top 10 (Milvus / segments) | ms p50/p95 in-process | Milvus |",
             "| --- | --- |" + " ---: |" * 9]
    for name, result in report["sets"].items():
        backends = result["backends"]
        here, there, split = backends["in-process"], backends["milvus"], backends.get("milvus-segments", {})
        for method in here:
            seg = split.get(method, {})
            lines.append(
                f"| {name} ({result['queries']}) | {method} | {here[method]['ndcg@10']:.4f} | "
                f"{there[method]['ndcg@10']:.4f} | {seg.get('ndcg@10', float('nan')):.4f} | {here[method]['mrr']:.4f} | "
                f"{there[method]['mrr']:.4f} | {seg.get('mrr', float('nan')):.4f} | "
                f"{there[method]['same_top10']} / {seg.get('same_top10', '–')} | "
                f"{here[method]['ms_p50']:.0f} / {here[method]['ms_p95']:.0f} | "
                f"{there[method]['ms_p50']:.0f} / {there[method]['ms_p95']:.0f} |")
    return "\n".join(lines)


# -- a synthetic corpus of bench.scale: the benchmark's queries, no judgements -----------------------------------
SYNTHETIC_METHODS = {"default": DEFAULT, "bm25": METHODS["bm25"], "dense": METHODS["dense"],
                     "hybrid": METHODS["hybrid"]}
PAIRS = (("milvus", "in-process"), ("milvus", "in-process exact"), ("in-process", "in-process exact"))


def memory_mib() -> dict[str, int]:
    """This process's peak and current resident memory (MiB)."""
    status = {line.split(":")[0]: int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
              if line.split(":")[0] in ("VmRSS", "RssAnon", "RssFile")}
    return {"peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "rss_mib": round(status.get("VmRSS", 0) / 1024), "rss_anon_mib": round(status.get("RssAnon", 0) / 1024),
            "rss_file_mib": round(status.get("RssFile", 0) / 1024)}


def folder_bytes(folder: Path) -> dict[str, int]:
    """Bytes on disk of a milvus-lite database by kind of file (parquet data, index files, the rest)."""
    kinds = {"data": 0, "indexes": 0, "other": 0}
    for path in folder.rglob("*"):
        if path.is_file():
            kind = "data" if path.suffix == ".parquet" else "indexes" if path.suffix == ".idx" else "other"
            kinds[kind] += path.stat().st_size
    index_files = {}
    for path in folder.rglob("*.idx"):  # e.g. data_000001_047000.dense.hnsw.idx
        field = ".".join(path.name.split(".")[1:-1])
        index_files[field] = index_files.get(field, 0) + path.stat().st_size
    return {**kinds, "total": sum(kinds.values()), "index_files": index_files}


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 1), "p95": round(float(np.percentile(values, 95)), 1)}


def compare(tops: dict[str, list[list[int]]], first: str, second: str) -> dict:
    """How the top 10s of two backends agree over the same queries."""
    a, b = tops[first], tops[second]
    overlap = [len(set(x) & set(y)) / max(len(x), len(y), 1) for x, y in zip(a, b)]
    return {"same_top10": sum(x == y for x, y in zip(a, b)), "same_papers": sum(set(x) == set(y) for x, y in zip(a, b)),
            "same_first": sum(x[:1] == y[:1] for x, y in zip(a, b)),
            "overlap_mean": round(float(np.mean(overlap)), 4), "overlap_min": round(float(np.min(overlap)), 2)}


def rank_all(recs: dict[str, Recommender], queries: list[Query], config) -> dict:
    """Each query's top 10 on every backend, and the time to rank it again once its texts are encoded (the
    backends take turns query by query, so that all see the same load on a shared machine)."""
    tops = {name: [] for name in recs}
    wall = {name: [] for name in recs}
    cpu = {name: [] for name in recs}
    for query in queries:
        for name, rec in recs.items():
            tops[name].append([int(p) for p in rec.rank(query, config).positions])
        for name, rec in recs.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            again = [int(p) for p in rec.rank(query, config).positions]
            wall[name].append(1000 * (time.perf_counter() - started))
            cpu[name].append(1000 * (time.process_time() - started_cpu))
            if again != tops[name][-1]:
                raise RuntimeError(f"{name}: the same query ranked twice gave two answers")
    return {"backends": {name: {"ms": percentiles(wall[name]), "cpu_ms": percentiles(cpu[name])} for name in recs},
            "agreement": {f"{a} vs {b}": compare(tops, a, b) for a, b in PAIRS}}


def synthetic(args) -> dict:
    """The Milvus backend beside the in-process engine on a synthetic corpus of bench.scale (see the docstring)."""
    report = {"date": time.strftime("%Y-%m-%d"), "machine": machine.line(), "load_average_start": machine.load(),
              "index_version": "", "queries_file": args.queries.name, "collection_format": MILVUS_FORMAT}
    queries_by_mode = json.loads(args.queries.read_text(encoding="utf-8"))
    sets = {mode: [Query(**fields) for fields in queries_by_mode[mode][: args.limit or None]]
            for mode in ("global", "local")}
    index, index_s = seconds(lambda: Index.load(args.index, verify=False))  # nothing written into the index
    report.update(papers=len(index), index_version=index.version.name, index_open_s=index_s)
    args.work.mkdir(parents=True, exist_ok=True)
    database = Path(tempfile.mkdtemp(prefix="milvus-parity-", dir=args.work)) / "papers.db"
    try:
        before = memory_mib()
        started_cpu = time.process_time()
        report["load"] = load(index, database, 0)
        report["load"].update(cpu_seconds=round(time.process_time() - started_cpu, 1), disk_bytes=folder_bytes(database),
                              memory_before=before, memory_after=memory_mib(),
                              load_average_end=machine.load())
        print(f"loaded {len(index)} papers in {report['load']['seconds']} s: segments {report['load']['segments']}",
              flush=True)
        in_process = Recommender.from_index(index)
        exact = Recommender(index, head=in_process.head, reranker=in_process.reranker,
                            backend=InProcessBackend(index, {**dense_retrievers(index, in_process.head),
                                                             "dense": DenseRetriever(index.dense)}))
        backend, open_s = seconds(lambda: open_backend(f"milvus:{database}", index,
                                                       dense_retrievers(index, in_process.head), in_process.head))
        on_milvus = Recommender(index, head=in_process.head, reranker=in_process.reranker, backend=backend)
        report["milvus_open_s"] = open_s
        recs = {"in-process": in_process, "in-process exact": exact, "milvus": on_milvus}
        report["sets"] = {}
        for mode, queries in sets.items():
            report["sets"][mode] = {"queries": len(queries), "methods": {}}
            for method in args.methods:
                config = SYNTHETIC_METHODS[method]
                started = time.time()
                report["sets"][mode]["methods"][method] = rank_all(recs, queries, config)
                print(f"{mode} / {method}: {len(queries)} queries in {time.time() - started:.0f} s", flush=True)
        report["memory_end"] = memory_mib()
        backend.close()
        report["disk_bytes_end"] = folder_bytes(database)  # with the index files built since the load
    finally:
        if not args.keep:
            shutil.rmtree(database.parent, ignore_errors=True)
    report["load_average_end"] = machine.load()
    return report


def synthetic_table(report: dict) -> str:
    lines = ["| queries | method | same top 10 (order) / same 10 papers / mean overlap: Milvus vs in-process | "
             "Milvus vs exact | in-process (clusters) vs exact | ms p50 / p95 in-process | exact | Milvus | "
             "CPU ms p50 / p95 in-process | Milvus |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for mode, result in report["sets"].items():
        for method, found in result["methods"].items():
            agree, ms = found["agreement"], found["backends"]
            cells = [f"{a['same_top10']} / {a['same_papers']} / {a['overlap_mean']:.3f}" for a in agree.values()]
            times = [f"{ms[b]['ms']['p50']:.0f} / {ms[b]['ms']['p95']:.0f}" for b in ("in-process", "in-process exact", "milvus")]
            cpu = [f"{ms[b]['cpu_ms']['p50']:.0f} / {ms[b]['cpu_ms']['p95']:.0f}" for b in ("in-process", "milvus")]
            lines.append(f"| {mode} ({result['queries']}) | {method} | " + " | ".join(cells + times + cpu) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--acm-index", type=Path, help="the 10,000-paper ACM-CR pool index (built by bench.review_places)")
    parser.add_argument("--citeseer-index", type=Path, help="the CiteSeer index")
    parser.add_argument("--index", type=Path, help="instead: the index of a synthetic corpus of bench.scale (read only)")
    parser.add_argument("--queries", type=Path, help="with --index: that corpus's queries.json")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()),
                        help="with --index: where the milvus-lite database goes (default: %(default)s)")
    parser.add_argument("--keep", action="store_true", help="with --index: keep the milvus-lite database")
    parser.add_argument("--methods", nargs="+", choices=list(SYNTHETIC_METHODS), default=list(SYNTHETIC_METHODS),
                        help="with --index: the methods compared (default: all)")
    parser.add_argument("--limit", type=int, help="first N queries of each set")
    parser.add_argument("--depth", type=int, default=100, help="ranked list length (the pool stays at 200)")
    parser.add_argument("--segment-rows", type=int, default=2000, help="flush every N papers in the segmented load")
    parser.add_argument("--timed", type=int, default=50, help="queries per set whose warm ranking time is measured")
    parser.add_argument("--out", type=Path, help="the results file (default: bench/results/milvus_parity.json, "
                        "with --index bench/results/milvus_parity_<papers>.json)")
    args = parser.parse_args()
    results = Path(__file__).resolve().parent / "results"
    if args.index:
        need(parser, args.index / "CURRENT", "--index", "DIR (an index of bench.scale)")
        need(parser, args.queries, "--queries", "FILE (the corpus's queries.json)")
        if args.work.resolve() == results.parent.parent or results.parent.parent in args.work.resolve().parents:
            parser.error(f"--work {args.work} is inside the repository; give a folder outside it")
        report = synthetic(args)
        out = args.out or results / f"milvus_parity_{report['papers']}.json"
        out.write_text(json.dumps(report, indent=1), encoding="utf-8")
        print(synthetic_table(report))
        print(json.dumps({k: report[k] for k in ("papers", "load", "milvus_open_s", "memory_end", "disk_bytes_end")},
                         indent=1))
        return
    args.out = args.out or results / "milvus_parity.json"
    need(parser, args.data / "acm-cr", "--data", "DIR (the shared benchmark data, with acm-cr/ and citeseer-tag/)")
    need(parser, args.acm_index, "--acm-index", "DIR (the ACM-CR pool index)")
    need(parser, args.citeseer_index, "--citeseer-index", "DIR (the CiteSeer index)")

    report = {"date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
              "load_average_start": os.getloadavg()[0], "depth": args.depth, "indexes": {}, "sets": {}}
    work = Path(tempfile.mkdtemp(prefix="milvus-parity-"))
    try:
        for label, root in (("acm-pool", args.acm_index), ("citeseer", args.citeseer_index)):
            index, index_s = seconds(lambda: Index.load(root))
            if label == "acm-pool":
                ids = set(index.ids)
                sets = {f"acm-cr/{name}": queries_from_file(args.data / "acm-cr" / file, ids)
                        for name, file in ACM_SETS.items()}
            else:
                sets = {"citeseer/dev": queries_from_split(f"{args.data / 'citeseer-tag' / 'splits.json'}:dev", index)}
            whole, split = work / f"{label}.db", work / f"{label}-segments.db"
            loads = {"milvus": load(index, whole, 0), "milvus-segments": load(index, split, args.segment_rows)}
            in_process = Recommender.from_index(index)
            recs, open_s = {"in-process": (in_process, METHOD_NAMES)}, {"index": index_s}
            for name, database, methods in (("milvus", whole, METHOD_NAMES), ("milvus-segments", split, SEGMENTED_METHODS)):
                backend, open_s[name] = seconds(lambda: open_backend(f"milvus:{database}", index, dense_retrievers(index, in_process.head)))
                recs[name] = (Recommender(index, head=in_process.head, reranker=in_process.reranker, backend=backend),
                              methods)
            report["indexes"][label] = {"papers": len(index), "load": loads, "open_seconds": open_s}
            for name, queries in sets.items():
                queries = queries[: args.limit] if args.limit else queries
                started = time.time()
                report["sets"][name] = {"queries": len(queries),
                                        "backends": run(recs, queries, args.depth, args.timed)}
                print(f"{name}: {len(queries)} queries in {time.time() - started:.0f} s", flush=True)
            for rec, _ in recs.values():
                rec.backend.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["load_average_end"] = os.getloadavg()[0]
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(table(report))
    print(json.dumps(report["indexes"], indent=1))


if __name__ == "__main__":
    main()
