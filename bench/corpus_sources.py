"""Throughput of the file-based corpus builders on synthetic files of realistic size per line.

    python -m bench.corpus_sources [--lines 200000] [--json OUT]

arXiv: a snapshot of LINES lines shaped like Kaggle's (about 1.7 KB a line, as the 4.5 GB / 2.6 M-line file),
10% of them in cs.CL; `corpus arxiv --category cs.CL` is timed, and the same run with every line kept
(`--category` empty) shows the cost of parsing each line. Semantic Scholar Datasets: LINES papers (10% in the
wanted field), as many abstracts and 10 × LINES citation lines; `corpus s2-datasets` is timed over all three.
The files are generated in a temporary folder and deleted; nothing derived from real data is used.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
from pathlib import Path

from bench import machine
from recommender.corpus.sources.arxiv_snapshot import ArxivFilter, build_from_snapshot
from recommender.corpus.sources.semantic_scholar_datasets import DatasetFilter, build_from_datasets

WORDS = ("citation graph retrieval ranking model encoder abstract paper corpus query dense sparse lexical neural "
         "evaluation benchmark recall precision reviewer draft context placeholder author venue year").split()


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def write_snapshot(path: Path, lines: int, rng: random.Random) -> None:
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as handle:
        for i in range(lines):
            category = "cs.CL" if i % 10 == 0 else rng.choice(["hep-th", "math.AG", "cond-mat.stat-mech", "cs.LG"])
            handle.write(json.dumps({
                "id": f"{2001 + i // 100000:04d}.{i % 100000:05d}", "submitter": "A. Writer",
                "authors": "A. Writer, B. Reader and C. Editor", "title": text(rng, 10), "comments": "12 pages",
                "journal-ref": None, "doi": None, "report-no": None, "categories": f"{category} stat.ML",
                "license": None, "abstract": text(rng, 150),
                "versions": [{"version": "v1", "created": "Mon, 2 Mar 2020 08:30:00 GMT"}],
                "update_date": "2020-03-03", "authors_parsed": [["Writer", "A.", ""], ["Reader", "B.", ""]]}) + "\n")


def write_datasets(folder: Path, lines: int, rng: random.Random) -> None:
    for kind in ("papers", "abstracts", "citations"):
        (folder / kind).mkdir(parents=True)
    with gzip.open(folder / "papers" / "part0.gz", "wt", encoding="utf-8", compresslevel=1) as handle:
        for i in range(lines):
            field = "Computer Science" if i % 10 == 0 else "Physics"
            handle.write(json.dumps({"corpusid": i, "externalids": {"DOI": None}, "url": "", "title": text(rng, 10),
                                     "authors": [{"authorId": "1", "name": "A. Writer"}], "venue": "Fixture",
                                     "year": 2020, "s2fieldsofstudy": [{"category": field, "source": "model"}],
                                     "publicationdate": "2020-01-01", "journal": None}) + "\n")
    with gzip.open(folder / "abstracts" / "part0.gz", "wt", encoding="utf-8", compresslevel=1) as handle:
        for i in range(lines):
            handle.write(json.dumps({"corpusid": i, "openaccessinfo": None, "abstract": text(rng, 150)}) + "\n")
    with gzip.open(folder / "citations" / "part0.gz", "wt", encoding="utf-8", compresslevel=1) as handle:
        for n in range(lines * 10):
            handle.write(json.dumps({"citationid": n, "citingcorpusid": rng.randrange(lines),
                                     "citedcorpusid": rng.randrange(lines), "isinfluential": False,
                                     "contexts": [text(rng, 20)], "intents": [["background"]]}) + "\n")


def timed(run) -> tuple[float, int]:
    started = time.perf_counter()
    summary = run()
    return time.perf_counter() - started, summary.papers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args()
    rng = random.Random(0)
    results: dict[str, dict] = {"machine": machine.describe()}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        snapshot = root / "snapshot.json.gz"
        write_snapshot(snapshot, args.lines, rng)
        for name, keep in (("arxiv cs.CL (10%)", ArxivFilter(categories=("cs.CL",))), ("arxiv all", ArxivFilter())):
            seconds, papers = timed(lambda: build_from_snapshot(snapshot, root / "out.jsonl.gz", keep, progress=False))
            results[name] = {"lines": args.lines, "papers": papers, "seconds": round(seconds, 2),
                             "lines_per_second": round(args.lines / seconds)}
        write_datasets(root / "s2", args.lines, rng)
        keep = DatasetFilter(fields_of_study=("Computer Science",))
        seconds, papers = timed(lambda: build_from_datasets(root / "s2", root / "s2.jsonl.gz", keep, progress=False))
        total = args.lines * 12
        results["s2-datasets CS (10%)"] = {"lines": total, "papers": papers, "seconds": round(seconds, 2),
                                           "lines_per_second": round(total / seconds)}
    for name, row in results.items():
        print(f"{name}: {row}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
