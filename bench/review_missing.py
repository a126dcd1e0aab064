"""Missing citations in whole submissions: PDFs written at run time from demo-corpus facts, reviewed end to end.

    python -m bench.review_missing [--submissions 20] [--seed 0] [--index DIR]

Each submission is a PDF (reportlab, written into a temporary folder) about one neighbourhood of the demo
corpus: a seed paper and its nearest neighbours by embedding. Some neighbours are cited (a numbered reference in
ACM style and a sentence of their summary with its marker); others are discussed without being cited (a sentence
of their summary and no marker); the rest are not mentioned. `review` reads the PDF, matches its references and
lists what is missing. Reported: recall of the discussed papers in `missing` (top 10), how many cited papers
appear in `missing` (must be 0), reference matching precision / recall, and the time of a review. A long
submission (9 pages, 40 references) is timed on its own. Writes bench/results/review_missing-INDEX.json.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

from bench import machine
from bench.paths import need
from bench.references import acm, entry_facts
from recommender.documents.read import read_document
from recommender.pipeline.recommender import Recommender
from recommender.review.document import DocumentReviewer
from workspace.demo import demo_index_dir, ensure_demo_index

RESULTS = Path(__file__).parent / "results"
NEIGHBOURS, CITED, DISCUSSED = 14, 7, 4
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def first_sentence(text: str) -> str:
    return _SENTENCE_END.split(" ".join(text.split()))[0]


def neighbourhood(recommender: Recommender, seed: int, size: int) -> list[int]:
    vectors = np.asarray(recommender.index.dense)
    similarity = vectors @ vectors[seed]
    return [int(i) for i in np.argsort(-similarity)[:size]]


def write_pdf(path: Path, title: str, abstract: str, paragraphs: list[str], references: list[str]) -> None:
    styles = getSampleStyleSheet()
    story = [Paragraph(escape(title), styles["Title"]), Paragraph("Abstract", styles["Heading2"]),
             Paragraph(escape(abstract), styles["BodyText"]), Paragraph("1 Introduction", styles["Heading2"])]
    for text in paragraphs:
        story += [Paragraph(escape(text), styles["BodyText"]), Spacer(1, 6)]
    story.append(Paragraph("References", styles["Heading2"]))
    story += [Paragraph(escape(f"[{n}] {entry}"), styles["BodyText"]) for n, entry in enumerate(references, 1)]
    SimpleDocTemplate(str(path), pagesize=A4).build(story)


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def submission(recommender: Recommender, rng: random.Random, cited_n: int, discussed_n: int,
               filler: int) -> tuple[dict, list[str], list[str]]:
    """(the PDF's parts, ids cited, ids discussed without a citation)."""
    index = recommender.index
    size = max(NEIGHBOURS, cited_n + discussed_n + 1)
    while True:
        seed = rng.randrange(len(index))
        around = [p for p in neighbourhood(recommender, seed, size * 2)[1:] if index.papers([p])[0].abstract]
        if len(around) >= cited_n + discussed_n:
            break
    around = around[:size]
    rng.shuffle(around)
    cited, discussed = around[:cited_n], around[cited_n:cited_n + discussed_n]
    abstracts = {p: paper.abstract for p, paper in zip(cited + discussed, index.papers(cited + discussed))}
    references = [acm(entry_facts(paper.to_dict(), rng)) for paper in index.papers(cited)]
    sentences = [f"{first_sentence(abstracts[p])} [{n}]" for n, p in enumerate(cited, 1)]
    sentences += [first_sentence(abstracts[p]) for p in discussed]
    rng.shuffle(sentences)
    paragraphs = [" ".join(sentences[i:i + 3]) for i in range(0, len(sentences), 3)]
    paragraphs += ["We now describe the experimental setup in detail, the data we collected and the measures we "
                   "report, so that the study can be repeated by others." for _ in range(filler)]
    parts = {"title": f"A study of {index.titles[seed].lower()}",
             "abstract": first_sentence(index.papers([seed])[0].abstract),
             "paragraphs": paragraphs, "references": references}
    return parts, [index.ids[p] for p in cited], [index.ids[p] for p in discussed]


def run(recommender: Recommender, reviewer: DocumentReviewer, n: int, seed: int, folder: Path) -> dict:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        parts, cited, discussed = submission(recommender, rng, CITED, DISCUSSED, filler=2)
        rows.append(review_one(reviewer, folder / f"submission{i}.pdf", parts, cited, discussed))
    long_parts, cited, discussed = submission(recommender, rng, 40, 10, filler=120)
    long_row = review_one(reviewer, folder / "long.pdf", long_parts, cited, discussed)
    mean = {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0] if key != "pages"}
    return {"submissions": n, "mean": mean, "long_submission": long_row}


def review_one(reviewer: DocumentReviewer, path: Path, parts: dict, cited: list[str], discussed: list[str]) -> dict:
    write_pdf(path, **parts)
    started = time.perf_counter()
    document = read_document(path, path.name)
    report = reviewer.review(document)
    seconds = time.perf_counter() - started
    missing = [m.paper_id for m in report.missing]
    found = {pid for pid in report.matches if pid}
    return {"pages": max((p.page or 0) for p in document.passages) if document.passages else 0,
            "discussed_recall@10": len(set(discussed) & set(missing)) / len(discussed),
            "cited_in_missing": len(set(cited) & set(missing)),
            "reference_precision": len(found & set(cited)) / len(found) if found else 1.0,
            "reference_recall": len(found & set(cited)) / len(cited),
            "places": len(report.places), "uncited": len(report.uncited), "seconds": round(seconds, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", type=Path, help="index to review against (default: the demo index)")
    args = parser.parse_args(argv)
    if args.index is not None:
        need(parser, args.index, "--index", "DIR (an index to review against)")
    else:
        ensure_demo_index()
    recommender = Recommender.load(args.index or demo_index_dir())
    reviewer = DocumentReviewer(recommender)
    reviewer.review(read_document(b"Warm-up [CIT].", "warmup.txt"))
    with tempfile.TemporaryDirectory() as folder:
        results = run(recommender, reviewer, args.submissions, args.seed, Path(folder))
    report = {"date": time.strftime("%Y-%m-%d"), "machine": machine.line(), "index_papers": len(recommender.index),
              **results}
    name = args.index.name if args.index else "demo"
    (RESULTS / f"review_missing-{name}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
