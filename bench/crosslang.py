"""Cross-language benchmark: English, Chinese and German passages citing English papers.

For every pool (the demo corpus; optionally the demo corpus merged into ACM-CR's 108K papers as
distractors) it runs, in one go:

  en  with the English pipeline          (multilingual="off": the monolingual reference)
  en  with the multilingual field forced (multilingual="on": informative)
  zh / de with the English pipeline      (multilingual="off")
  zh / de with the multilingual pipeline (multilingual="auto": routed by the detected language)

and reports MRR, nDCG@10 and R@10 (the full pipeline: hybrid retrieval + graph expansion), the
share of queries detected as the expected language, and query time (per run, and at the app's setting
for passages and for long German drafts). The target of issue 6:
multilingual R@10 on zh and de >= 70% of the English-query R@10 and >= 2x the English pipeline's
R@10 on the same translated queries.

    python -m bench.crosslang                                  # demo corpus
    python -m bench.crosslang --acm ../shared/data/acm-cr/corpus.jsonl.gz --acm-sample 4000 \\
        --merged-index IDX/acm_demo_ml                         # + a 4K ACM-CR sample (docs/benchmarks.md)
    python -m bench.crosslang --acm ../shared/data/acm-cr/corpus.jsonl.gz \\
        --merged-index IDX/acm_demo_ml --seed-cache IDX/acm/cache/embeddings.sqlite  # all 108K

Index directories go to --index-dir (default .index/bench/crosslang in the checkout, ignored by git); a pool's
index is reused while its corpus files are unchanged, and its embedding cache makes a rebuild resume.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import INDEXES, need, write_json
from recommender.config import DEFAULT
from recommender.corpus.loaders import load_corpus
from recommender.evaluation.metrics import summarize
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store import versions
from recommender.store.gloss import WORDS_FILE as GLOSSARY
from recommender.store.build import build_index

ROOT = Path(__file__).resolve().parent.parent
INDEX_DIR = INDEXES / "crosslang"  # one index per pool, built on first use
DEMO_CORPUS = ROOT / "assets" / "demo_corpus.jsonl"
QUERIES = ROOT / "bench" / "data" / "crosslang" / "queries.jsonl"
LANGUAGES = ("en", "zh", "de")
RUNS = [  # (name, query language, PipelineConfig.multilingual)
    ("en / English pipeline", "en", "off"),
    ("en / multilingual field (forced)", "en", "on"),
    ("zh / English pipeline", "zh", "off"),
    ("zh / multilingual pipeline", "zh", "auto"),
    ("de / English pipeline", "de", "off"),
    ("de / multilingual pipeline", "de", "auto"),
]
DEPTH = 100
TARGET_SHARE, TARGET_GAIN = 0.7, 2.0


def read_queries(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def sample_of(items: list, n: int) -> list:
    """The first n of a fixed shuffle (seed 0), in corpus order: a smaller sample is part of a larger one."""
    order = list(range(len(items)))
    random.Random(0).shuffle(order)
    return [items[i] for i in sorted(order[:n])]


def seed(cache: Path, source: Path) -> None:
    """Copy the vectors of another embedding cache (same format, e.g. a corpus embedded by another build)
    into this index's cache, keeping what it already holds."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    print(f"seeding the embedding cache from {source}", file=sys.stderr)
    db = sqlite3.connect(f"file:{cache}", uri=True)
    db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
    db.execute("ATTACH DATABASE ? AS seed", (f"file:{source}?mode=ro",))
    with db:
        db.execute("INSERT OR IGNORE INTO emb SELECT key, vec FROM seed.emb")
    db.execute("DETACH DATABASE seed")
    db.close()


def ensure_index(root: Path, corpus_files: list[Path], samples: dict[str, int], seed_cache: Path | None) -> Path:
    """Build (or reuse) a multilingual index of the corpus files, the demo corpus last."""
    source = {"files": [str(p.resolve()) for p in corpus_files],
              "sha256": [versions.sha256_of(p) for p in corpus_files], "samples": samples}
    try:
        version = versions.current_version(root)
        manifest = versions.read_manifest(version, verify=False)
        if manifest.get("source") == source and manifest.get("multilingual") and (version / GLOSSARY).is_file():
            return root
    except versions.IndexDirectoryError:
        pass
    if seed_cache and seed_cache.is_file():
        seed(versions.embedding_cache_path(root), seed_cache)
    papers, seen = [], set()
    for path in corpus_files:
        loaded = load_corpus(path).papers
        sample = samples.get(str(path))
        if sample and sample < len(loaded):
            loaded = sample_of(loaded, sample)
        for paper in loaded:
            if paper.id not in seen:
                seen.add(paper.id)
                papers.append(paper)
    print(f"indexing {len(papers)} papers into {root}", file=sys.stderr)
    started = time.time()
    build_index(papers, root, multilingual=True, progress_bar=True, source=source)
    print(f"indexed in {time.time() - started:.0f} s", file=sys.stderr)
    return root


def run_pool(recommender: Recommender, queries: list[dict], depth: int) -> dict:
    index_ids = set(recommender.index.ids)
    results = {}
    for name, lang, mode in RUNS:
        config = DEFAULT.with_(multilingual=mode, pool=max(DEFAULT.pool, depth), diversity=0.0)  # plain ranking
        runs, halves, detected, routed, elapsed = [], {"xl001-040": [], "xl041-080": []}, 0, 0, 0.0
        for row in queries:
            relevant = set(row["relevant"]) & index_ids
            if not relevant:
                continue
            query = Query(context=row[lang], k=depth)
            started = time.perf_counter()
            ranking = recommender.rank(query, config, k=depth)
            elapsed += time.perf_counter() - started
            ranked = [recommender.index.ids[p] for p in ranking.positions]
            runs.append((ranked, relevant))
            halves["xl001-040" if row["qid"] <= "xl040" else "xl041-080"].append((ranked, relevant))
            detected += ranking.route.language.code == lang
            routed += ranking.route.multilingual
        metrics = summarize(runs, cutoffs=(10, 100))
        results[name] = {
            "language": lang, "multilingual": mode, "queries": len(runs),
            "mrr": metrics["mrr"], "ndcg@10": metrics["ndcg@10"], "recall@10": metrics["recall@10"],
            "recall@100": metrics["recall@100"],
            "recall@10_by_half": {h: summarize(r, cutoffs=(10,))["recall@10"] for h, r in halves.items() if r},
            "detected_as_expected": detected / len(runs), "routed_multilingual": routed / len(runs),
            "ms_per_query": 1000 * elapsed / len(runs),
        }
    return results


def app_latency(recommender: Recommender, queries: list[dict]) -> dict:
    """Query time at the app's setting (default pipeline, 10 results) for passages and for long texts: a German
    draft made of five consecutive German passages (title: the first, abstract: the other four)."""
    drafts = [Query(title=queries[i]["de"], abstract=" ".join(q["de"] for q in queries[i + 1:i + 5]))
              for i in range(0, len(queries) - 4, 4)]
    sets = {"en passage": [Query(context=q["en"]) for q in queries],
            "zh passage": [Query(context=q["zh"]) for q in queries],
            "de passage": [Query(context=q["de"]) for q in queries], "de title + abstract": drafts}
    recommender.rank(Query(context=queries[0]["zh"]))  # first use loads the segmenter
    recommender.clear_caches()  # the runs above encoded these texts already: time them afresh
    out = {}
    for name, batch in sets.items():
        times = []
        for query in batch:
            started = time.perf_counter()
            recommender.rank(query)
            times.append(1000 * (time.perf_counter() - started))
        out[name] = {"queries": len(batch), "p50_ms": float(np.percentile(times, 50)),
                     "p95_ms": float(np.percentile(times, 95))}
    return out


def targets(results: dict) -> dict:
    english = results["en / English pipeline"]["recall@10"]
    out = {}
    for lang in ("zh", "de"):
        multi = results[f"{lang} / multilingual pipeline"]["recall@10"]
        plain = results[f"{lang} / English pipeline"]["recall@10"]
        share = multi / english if english else 0.0
        gain = multi / plain if plain else float("inf")
        out[lang] = {"share_of_english": share, "gain_over_english_pipeline": gain,
                     "met": share >= TARGET_SHARE and gain >= TARGET_GAIN}
    return out


def table(results: dict) -> str:
    lines = ["| queries / pipeline | MRR | nDCG@10 | R@10 | R@100 | detected | ms/query |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, m in results.items():
        lines.append(f"| {name} | {m['mrr']:.3f} | {m['ndcg@10']:.3f} | {m['recall@10']:.3f} | {m['recall@100']:.3f} "
                     f"| {m['detected_as_expected']:.0%} | {m['ms_per_query']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--corpus", type=Path, default=DEMO_CORPUS, help="the corpus the queries cite")
    parser.add_argument("--acm", type=Path, help="ACM-CR corpus.jsonl.gz: also run on corpus + ACM-CR distractors")
    parser.add_argument("--acm-sample", type=int, default=0,
                        help="use a seeded random sample of N ACM-CR papers as distractors (0: all)")
    parser.add_argument("--index-dir", type=Path, default=INDEX_DIR,
                        help="index directories (one per pool) go here (default: %(default)s)")
    parser.add_argument("--merged-index", type=Path, help="index directory of the merged pool "
                        "(default INDEX_DIR/demo+acm)")
    parser.add_argument("--seed-cache", type=Path, help="embeddings.sqlite to copy into a new merged index's "
                        "cache (e.g. ACM-CR vectors another build already computed)")
    parser.add_argument("--depth", type=int, default=DEPTH)
    parser.add_argument("--build-only", action="store_true", help="build the pools' indexes, run no queries")
    parser.add_argument("--json", type=Path, help="write results here (default INDEX_DIR/crosslang.json)")
    args = parser.parse_args(argv)
    need(parser, args.queries, "--queries", "FILE (the cross-language passages)")
    need(parser, args.corpus, "--corpus", "FILE (the corpus the queries cite)")
    if args.acm:
        need(parser, args.acm, "--acm", "FILE (ACM-CR's corpus.jsonl.gz)")
    if args.seed_cache:
        need(parser, args.seed_cache, "--seed-cache", "FILE (an embeddings.sqlite)")

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    queries = read_queries(args.queries)
    pools = [("demo", args.index_dir / "demo", [args.corpus], {}, None)]
    if args.acm:
        samples = {str(args.acm): args.acm_sample} if args.acm_sample else {}
        name = f"demo+acm{args.acm_sample or ''}"
        pools.append((name, args.merged_index or args.index_dir / name, [args.acm, args.corpus], samples,
                      args.seed_cache))
    report = {"date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
              "queries": str(args.queries), "depth": args.depth, "pools": {}}
    for name, root, files, samples, seed in pools:
        ensure_index(root, files, samples, seed)
        if args.build_only:
            continue
        recommender = Recommender.load(root)
        results = run_pool(recommender, queries, args.depth)
        latency = app_latency(recommender, queries)
        report["pools"][name] = {"papers": len(recommender.index), "index": str(root), "runs": results,
                                 "targets": targets(results), "app_latency": latency}
        print(f"\n## {name} ({len(recommender.index)} papers, {len(queries)} queries)\n")
        print(table(results))
        print("\nQuery time at the app's setting (10 results): " + "; ".join(
            f"{kind} p50 {t['p50_ms']:.0f} ms, p95 {t['p95_ms']:.0f} ms" for kind, t in latency.items()))
        for lang, t in report["pools"][name]["targets"].items():
            print(f"- {lang}: multilingual R@10 = {t['share_of_english']:.0%} of English-query R@10, "
                  f"{t['gain_over_english_pipeline']:.1f}x the English pipeline -> "
                  f"{'target met' if t['met'] else 'target missed'}")
        recommender.index.close()
    if args.build_only:
        return 0
    write_json(args.json or args.index_dir / "crosslang.json", report, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
