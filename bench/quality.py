"""Quality benchmarks on the shared data sets: every method of `evaluate`, one run per query set.

    python -m bench.quality acm-cr  [--data ../shared/data] [--index-root IDX]
    python -m bench.quality hepth   [--data ../shared/data] [--index-root IDX] [--limit N]
    python -m bench.quality citeseer [--data ../shared/data] [--index-root IDX]

Builds the index on first use in INDEX_ROOT/<set> (default: .index/bench/<set> in the checkout; embeddings are
cached in the index directory), then writes bench/results/<set>.json and prints one Markdown table per query set.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench import machine
from bench.paths import DATA, INDEXES, RESULTS, need, write_json
from recommender.config import METHODS
from recommender.corpus.loaders import load_corpus
from recommender.evaluation.evaluate import evaluate, format_table
from recommender.evaluation.queries import queries_from_file, queries_from_split
from recommender.pipeline.recommender import Recommender
from recommender.store.build import build_index
from recommender.store.versions import IndexDirectoryError, current_version

DATASETS = {
    "acm-cr": {"dir": "acm-cr", "corpus": "corpus.jsonl.gz",
               "query_sets": {"paragraphs": "queries.jsonl.gz", "sentences": "queries_sentences.jsonl.gz",
                              "papers": "queries_paper_level.jsonl.gz"}},
    "hepth": {"dir": "hepth-kddcup2003", "corpus": "papers.jsonl.gz", "split": "splits.json:dev"},
    "citeseer": {"dir": "citeseer-tag", "corpus": "papers.jsonl.gz", "split": "splits.json:dev"},
}


def open_index(corpus: Path, root: Path) -> Recommender:
    try:
        current_version(root)
    except IndexDirectoryError:
        started = time.time()
        papers = load_corpus(corpus).papers
        build_index(papers, root, source={"file": str(corpus)})
        print(f"built index of {len(papers)} papers in {time.time() - started:.0f} s", file=sys.stderr)
    return Recommender.load(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", choices=DATASETS)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--index-root", type=Path, default=INDEXES,
                        help="indexes by data set name, built on first use (default: %(default)s)")
    parser.add_argument("--limit", type=int, help="first N queries of each set")
    parser.add_argument("--methods", nargs="+")
    args = parser.parse_args()

    spec = DATASETS[args.dataset]
    folder = need(parser, args.data / spec["dir"], "--data", f"DIR (the shared benchmark data, with {spec['dir']}/)")
    rec = open_index(folder / spec["corpus"], args.index_root / args.dataset)
    ids = set(rec.index.ids)
    if "split" in spec:
        file, _, name = spec["split"].rpartition(":")
        query_sets = {name: queries_from_split(f"{folder / file}:{name}", rec.index)}
    else:
        query_sets = {name: queries_from_file(folder / file, ids) for name, file in spec["query_sets"].items()}
    methods = {m: METHODS[m] for m in (args.methods or METHODS)}
    report = {"dataset": args.dataset, "date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
              "papers": len(rec.index), "sets": {}}
    for name, queries in query_sets.items():
        queries = queries[: args.limit] if args.limit else queries
        started = time.time()
        results = evaluate(rec, queries, methods)
        seconds = time.time() - started
        report["sets"][name] = {"queries": len(queries), "seconds": round(seconds, 1), "metrics": results}
        print(f"\n### {args.dataset} / {name} ({len(queries)} queries, {seconds:.0f} s)\n")
        print(format_table(results))
    write_json(RESULTS / f"{args.dataset}.json", report)


if __name__ == "__main__":
    main()
