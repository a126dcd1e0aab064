"""Citation places through `review` against `evaluate`'s direct queries, on ACM-CR development paragraphs.

    python -m bench.review_places [--data ../shared/data/acm-cr] [--index IDX/acm-pool] [--pool 10000]

For each citing paper of the development half, a LaTeX draft is written into a temporary folder (never into the
repository): its title, its abstract, and its paragraphs with every [CIT] written `\\cite{?}`. `review` reads the
draft back and answers every placeholder with local-mode suggestions (`DocumentReviewer.places`); the places of one paragraph are merged by
rank (first suggestions of every place, then the second ones, ...) and scored against the paragraph's cited papers.
The direct number queries the same index with the whole paragraph, as `evaluate` does. Both run on one pool: the
papers the paragraphs cite plus a seeded sample of the rest of the corpus (the full 108K corpus takes about 36
minutes of embedding on 2 cores; `--pool 0` uses it all), kept in --index (default: .index/bench/acm-pool-SIZE in
the checkout). Writes bench/results/review_places.json.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

from bench import machine
from bench.paths import DATA, INDEXES, need
from recommender.config import DEFAULT
from recommender.corpus.loaders import load_corpus
from recommender.documents.read import read_document
from recommender.evaluation.metrics import ndcg_at, recall_at
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.review.document import DocumentReviewer
from recommender.store.build import build_index
from recommender.store.versions import IndexDirectoryError, current_version

K = 10
RESULTS = Path(__file__).parent / "results" / "review_places.json"


def read_jsonl(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def open_pool(data: Path, root: Path, size: int, queries: list[dict]) -> Recommender:
    """The pool's index: built on first use (cited papers first, then a seeded sample of the rest)."""
    try:
        current_version(root)
    except IndexDirectoryError:
        papers = load_corpus(data / "corpus.jsonl.gz").papers
        if size:
            needed = {pid for q in queries for pid in q["relevant"]} | {q["citing_id"] for q in queries}
            chosen = [p for p in papers if p.id in needed]
            rest = [p for p in papers if p.id not in needed]
            chosen += random.Random(0).sample(rest, max(0, min(len(rest), size - len(chosen))))
            papers = chosen
        started = time.time()
        build_index(papers, root, source={"file": str(data / "corpus.jsonl.gz"), "pool": size})
        print(f"built a pool of {len(papers)} papers in {time.time() - started:.0f} s", file=sys.stderr)
    return Recommender.load(root)


def latex_draft(title: str, abstract: str, paragraphs: list[str]) -> str:
    body = "\n\n".join(p.replace("[CIT]", "\\cite{?}") for p in paragraphs)
    return (f"\\documentclass{{article}}\n\\title{{{title}}}\n\\begin{{document}}\n\\maketitle\n"
            f"\\begin{{abstract}}\n{abstract}\n\\end{{abstract}}\n\\section{{Introduction}}\n{body}\n"
            "\\end{document}\n")


def merged_by_rank(lists: list[list[str]], k: int) -> list[str]:
    merged: list[str] = []
    for rank in range(max((len(x) for x in lists), default=0)):
        for ranked in lists:
            if rank < len(ranked) and ranked[rank] not in merged:
                merged.append(ranked[rank])
    return merged[:k]


def score(ranked: list[str], relevant: set[str]) -> dict:
    return {"R@10": recall_at(ranked, relevant, K), "nDCG@10": ndcg_at(ranked, relevant, K)}


def mean(rows: list[dict]) -> dict:
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]} if rows else {}


def window_name(window: int | None) -> str:
    return "all" if window is None else str(window)


def run(recommender: Recommender, queries: list[dict], windows: list[int | None], folder: Path) -> dict:
    ids = set(recommender.index.ids)
    by_paper: dict[str, list[dict]] = defaultdict(list)
    for q in queries:
        if set(q["relevant"]) & ids:
            by_paper[q["citing_id"]].append(q)
    config = DEFAULT.with_(rerank=recommender.reranker is not None)
    direct, via_review = [], {w: [] for w in windows}
    reviewers = {w: DocumentReviewer(recommender, window=w) for w in windows}
    started = {"direct": 0.0, **{w: 0.0 for w in windows}}
    for n, (citing, rows) in enumerate(tqdm(sorted(by_paper.items()), desc="citing papers")):
        first = rows[0]
        exclude = {citing}
        t = time.perf_counter()
        for q in rows:
            query = Query(title=first["citing_title"], abstract=first["citing_abstract"] or "", context=q["context"],
                          k=K, exclude=exclude, diversity=0.0)
            ranking = recommender.rank(query, config)
            direct.append(score([recommender.index.ids[p] for p in ranking.positions], set(q["relevant"]) & ids))
        started["direct"] += time.perf_counter() - t
        path = folder / f"draft{n}.tex"
        path.write_text(latex_draft(first["citing_title"], first["citing_abstract"] or "",
                                    [q["context"] for q in rows]), encoding="utf-8")
        document = read_document(path, path.name)
        if len(document.passages) != len(rows):
            raise RuntimeError(f"{path.name}: {len(document.passages)} passages read, {len(rows)} written")
        for w, reviewer in reviewers.items():
            t = time.perf_counter()
            places = reviewer.places(document, [None] * len(document.references), exclude, K)
            started[w] += time.perf_counter() - t
            for passage, q in zip(document.passages, rows):
                lists = [[s.paper_id for s in p.suggestions] for p in places if p.passage is passage]
                via_review[w].append(score(merged_by_rank(lists, K), set(q["relevant"]) & ids))
    out = {"queries": len(direct), "citing_papers": len(by_paper), "direct": mean(direct),
           "seconds": {key if key == "direct" else window_name(key): round(value, 1) for key, value in started.items()}}
    for w in windows:
        out[f"review_window_{window_name(w)}"] = {**mean(via_review[w]),
                                     "ratio_R@10": round(mean(via_review[w])["R@10"] / out["direct"]["R@10"], 3)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA / "acm-cr", help="the ACM-CR folder (default: %(default)s)")
    parser.add_argument("--index", type=Path, help="the pool's index, built there on first use "
                        "(default: .index/bench/acm-pool-SIZE in the checkout)")
    parser.add_argument("--pool", type=int, default=10_000, help="pool size (0: the whole corpus)")
    parser.add_argument("--windows", type=lambda v: None if v == "all" else int(v), nargs="+", default=[0, None],
                        help="sentences of context on each side of a place, or 'all' (its whole paragraph)")
    args = parser.parse_args(argv)
    need(parser, args.data / "queries.jsonl.gz", "--data", "DIR (the ACM-CR folder of the shared data)")
    queries = read_jsonl(args.data / "queries.jsonl.gz")
    recommender = open_pool(args.data, args.index or INDEXES / f"acm-pool-{args.pool}", args.pool, queries)
    with tempfile.TemporaryDirectory() as folder:
        results = run(recommender, queries, args.windows, Path(folder))
    report = {"date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
              "pool": len(recommender.index), "results": results}
    RESULTS.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
