"""Speed of each stage on one index, in one run (warm: model load excluded).

    python -m bench.speed --index IDX/acm-cr --queries ../shared/data/acm-cr/queries.jsonl.gz \
        --corpus ../shared/data/acm-cr/corpus.jsonl.gz [--rank-bm25-queries 3]

Reports query latency p50/p95 per stage and end to end (the default pipeline, and `rank_whole`: the same with the
passage read as a whole, without its citing sentences), embedding and index-build throughput on a sample, peak
memory, rank-bm25 vs bm25s, and the dense field's clusters vs exact cosine (time and
recall@100).
"""
from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import RESULTS, need
from recommender.config import DEFAULT
from recommender.corpus.loaders import load_corpus
from recommender.embedding.cache import EmbeddingCache, embed_with_cache
from recommender.evaluation.queries import queries_from_file
from recommender.pipeline.recommender import Recommender
from recommender.pipeline.retrieve import allowed as allowed_papers, dense_retrievers
from recommender.store.lexical import LexicalIndex, analyze, lexical_text


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, (time.perf_counter() - start) * 1000


def percentiles(ms: list[float]) -> dict[str, float]:
    return {"p50_ms": round(float(np.percentile(ms, 50)), 1), "p95_ms": round(float(np.percentile(ms, 95)), 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=150)
    parser.add_argument("--embed-sample", type=int, default=500)
    parser.add_argument("--rank-bm25-queries", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "speed.json")
    args = parser.parse_args()
    need(parser, args.index, "--index", "DIR (the index to time)")
    need(parser, args.queries, "--queries", "FILE (ACM-CR-style queries, e.g. acm-cr/queries.jsonl.gz)")
    need(parser, args.corpus, "--corpus", "FILE (the index's corpus file)")

    rec = Recommender.load(args.index)
    clustered = dense_retrievers(rec.index)["dense"]  # the dense search timed alone
    queries = [q.query for q in queries_from_file(args.queries, set(rec.index.ids))][: args.limit]
    rec.recommend(queries[0])  # warm-up: model load and first-call costs excluded
    stages: dict[str, list[float]] = {k: [] for k in ("encode", "bm25", "clusters", "exact_cosine", "rank", "rank_whole",
                                                   "recommend")}
    cluster_recall = []
    for query in queries:
        allowed = allowed_papers(rec.index, query)
        _, ms = timed(rec.index.lexical.scores, query.main_text)
        stages["bm25"].append(ms)
        vector, ms = timed(rec.encoder.encode, [query.main_text])
        stages["encode"].append(ms)
        vector = vector[0]
        approx, ms = timed(clustered.search, vector, allowed, 100)
        stages["clusters"].append(ms)
        exact, ms = timed(lambda v: np.argsort(-(rec.index.dense @ v))[:100], vector)
        stages["exact_cosine"].append(ms)
        cluster_recall.append(len(set(approx.tolist()) & set(exact.tolist())) / 100)
        # the default and the whole-passage ranking in alternating order: whichever runs second finds warm memory
        runs = [("rank", DEFAULT), ("rank_whole", DEFAULT.with_(citing_sentences=False))]
        for stage, config in runs if len(stages["rank"]) % 2 == 0 else runs[::-1]:
            rec.clear_caches()
            _, ms = timed(rec.rank, query, config)
            stages[stage].append(ms)
        rec.clear_caches()
        _, ms = timed(rec.recommend, query)
        stages["recommend"].append(ms)
    report = {"machine": machine.line(), "papers": len(rec.index), "queries": len(queries),
              "latency": {k: percentiles(v) for k, v in stages.items()},
              "clusters_recall@100_vs_exact": round(float(np.mean(cluster_recall)), 4)}

    papers = load_corpus(args.corpus).papers
    texts = [lexical_text(p) for p in papers]
    _, build_ms = timed(LexicalIndex.build, texts)
    report["bm25_build_docs_per_s"] = round(len(texts) / (build_ms / 1000))
    sample = [p.text for p in papers[: args.embed_sample]]
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "c.sqlite")
        _, embed_ms = timed(lambda: embed_with_cache(sample, rec.encoder, cache, progress=False))
        cache.close()
    report["embedding_docs_per_s"] = round(len(sample) / (embed_ms / 1000), 1)

    from rank_bm25 import BM25Okapi

    reference = BM25Okapi([analyze(t) for t in texts], k1=0.9, b=0.4)
    slow = [timed(reference.get_scores, analyze(q.main_text))[1] for q in queries[: args.rank_bm25_queries]]
    fast = stages["bm25"][: args.rank_bm25_queries]
    report["rank_bm25_ms_per_query"] = round(float(np.mean(slow)), 1)
    report["bm25s_ms_per_query"] = round(float(np.mean(fast)), 1)
    report["bm25s_speedup"] = round(float(np.mean(slow) / np.mean(fast)), 1)
    report["clusters_speedup_vs_exact"] = round(float(np.mean(stages["exact_cosine"]) / np.mean(stages["clusters"])), 2)
    report["peak_memory_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
