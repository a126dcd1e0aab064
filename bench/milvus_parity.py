"""The Milvus backend next to the in-process engine, in one run: the same methods over the same queries.

    nice -n 10 python -m bench.milvus_parity --acm-index IDX/acm-pool --citeseer-index IDX/citeseer \
        [--data ../shared/data] [--limit N] [--segment-rows 2000]

Each index is loaded into a fresh milvus-lite database once in one segment (its BM25 statistics are those of the
whole corpus, as in-process) and once flushed every --segment-rows papers (milvus-lite keeps BM25 statistics per
segment: what that costs). Per query set and method: nDCG@10 and MRR of each backend, how many queries get the
in-process top 10 exactly, and the time to rank one query once its text is encoded (p50/p95 over the first
--timed queries: retrieval, fusion, expansion and selection, the part a backend changes). Also the bulk load time
(and the segments milvus-lite made) and the time to open the index and each database. Writes
bench/results/milvus_parity.json and prints one Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import DATA, need
from recommender.backends import open_backend
from recommender.backends.milvus import parse_target
from recommender.backends.milvus_load import load_index
from recommender.config import METHODS
from recommender.evaluation.metrics import summarize
from recommender.evaluation.queries import queries_from_file, queries_from_split
from recommender.pipeline.recommender import Recommender
from recommender.pipeline.retrieve import dense_retrievers, lexical_texts
from recommender.store.index import Index
from recommender.store.lexical import analyze, lexical_text

METHOD_NAMES = ("bm25", "dense", "hybrid", "full")
SEGMENTED_METHODS = ("bm25", "full")  # the methods BM25 statistics can change
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


def segment_statistics(rec: Recommender, sizes: list[int], queries) -> dict:
    """How far per-segment BM25 statistics lie from the whole corpus's, for segments of `sizes` consecutive papers:
    each segment's average document length, and over the query terms BM25 sees (every occurrence) the median and
    90th percentile of |IDF in the segment - IDF in the corpus| / IDF in the corpus, for terms the segment holds."""
    index = rec.index
    lengths = np.array([len(analyze(lexical_text(p))) for p in index.all_papers()], dtype=np.float64)
    vocab, postings = index.lexical.model.vocab_dict, index.lexical.model.scores
    indptr, doc_ids = np.asarray(postings["indptr"]), np.asarray(postings["indices"])
    terms = [vocab[t] for item in queries
             for text, _ in lexical_texts(item.query, METHODS["full"], rec.route(item.query), rec)
             for t in analyze(text) if t in vocab and vocab[t] + 1 < len(indptr)]

    def idf(n, df):
        return np.log(1 + (n - df + 0.5) / (df + 0.5))

    docs = [doc_ids[indptr[t]:indptr[t + 1]] for t in terms]
    whole = np.array([idf(len(index), len(d)) for d in docs])
    out = {"papers": len(index), "avgdl": round(float(lengths.mean()), 1), "query_terms": len(terms), "segments": []}
    start = 0
    for size in sizes:
        counts = np.array([int(((d >= start) & (d < start + size)).sum()) for d in docs])
        held = counts > 0
        rel = np.abs(idf(size, counts[held]) - whole[held]) / whole[held]
        out["segments"].append({"papers": size, "avgdl": round(float(lengths[start:start + size].mean()), 1),
                                "idf_rel_diff_median": round(float(np.median(rel)), 3),
                                "idf_rel_diff_p90": round(float(np.percentile(rel, 90)), 3)})
        start += size
    return out


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--acm-index", type=Path, required=True,
                        help="the 10,000-paper ACM-CR pool index (built by bench.review_places)")
    parser.add_argument("--citeseer-index", type=Path, required=True, help="the CiteSeer index")
    parser.add_argument("--limit", type=int, help="first N queries of each set")
    parser.add_argument("--depth", type=int, default=100, help="ranked list length (the pool stays at 200)")
    parser.add_argument("--segment-rows", type=int, default=2000, help="flush every N papers in the segmented load")
    parser.add_argument("--timed", type=int, default=50, help="queries per set whose warm ranking time is measured")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "milvus_parity.json")
    args = parser.parse_args()
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
            every = [q for queries in sets.values() for q in (queries[: args.limit] if args.limit else queries)]
            report["indexes"][label]["bm25_statistics"] = segment_statistics(
                in_process, loads["milvus-segments"]["segments"], every)
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
