"""A folder of PDFs as a corpus (`corpus pdfs`): how many citation links between the PDFs it finds, how often it
reads the authors right, and how long a PDF takes.

    python -m bench.pdf_folder [--papers 60] [--seed 1] [--json OUT]

The folder is written at run time into a temporary folder (nothing is committed): PAPERS papers of the demo
corpus that cite each other, each as a real PDF (`bench/pdf_writer.py`): its title, its authors on a byline, its
summary as the abstract, two sections of other papers' summaries, and its reference list in a citation style drawn
at random (ACM, APA, IEEE, Springer, Chicago, Nature; numbered or not), one or two columns. Its references to demo
papers outside the folder stay in the list (they must not become links). A third of the papers print their DOI on
the first page and a fifth carry the arXiv stamp in the margin, when the demo corpus knows them.
`build_from_pdf_folder` then reads the folder; the links it finds are compared with the demo corpus's links
between the papers of the folder.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from bench import machine
from bench.pdf_writer import FONTS, Draft, Layout
from bench.references import FORMATTERS, NUMBER_FORMATS, STYLES, entry_facts, load_corpus, split_name
from recommender.corpus.sources.pdf_folder import build_from_pdf_folder, find_pdfs
from recommender.corpus.sources.pdf_front import read_front_matter
from recommender.documents.read import read_document


def choose(records: list[dict], size: int, rng: random.Random) -> list[dict]:
    """`size` demo papers, taken as the papers with the most references and the papers they cite."""
    by_id = {r["id"]: r for r in records}
    chosen: dict[str, dict] = {}
    for record in sorted(records, key=lambda r: (-len(r.get("references") or []), r["id"])):
        for pid in [record["id"], *rng.sample(record.get("references") or [], len(record.get("references") or []))]:
            if len(chosen) < size and pid in by_id and by_id[pid]["authors"] and by_id[pid].get("year"):
                chosen.setdefault(pid, by_id[pid])
    return list(chosen.values())


def write_paper(path: Path, record: dict, records: dict[str, dict], others: list[dict], rng: random.Random) -> str:
    """The paper as a PDF; returns its citation style."""
    style = rng.choice(STYLES)
    numbered = style in ("acm", "ieee", "springer", "nature") or rng.random() < 0.3
    cited = [records[r] for r in record.get("references") or [] if r in records and records[r]["authors"]
             and records[r].get("year")]
    if not numbered:
        cited.sort(key=lambda r: (split_name(r["authors"][0])[1].casefold(), r["year"]))
    references = []
    for number, entry in enumerate(cited, start=1):
        text = FORMATTERS[style](entry_facts(entry, rng))
        references.append(f"{NUMBER_FORMATS[style].format(number)} {text}" if numbered else text)
    abstract = record.get("abstract") or record["title"]
    if record.get("doi") and rng.random() < 1 / 3:
        abstract += f" DOI: {record['doi']}"
    authors = record["authors"]
    byline = ", ".join(authors[:-1]) + f" and {authors[-1]}" if len(authors) > 1 else authors[0]
    sections = [("1 Introduction", [o.get("abstract") or o["title"] for o in rng.sample(others, 3)]),
                ("2 Related Work", [o.get("abstract") or o["title"] for o in rng.sample(others, 3)])]
    draft = Draft(title=record["title"], authors=byline, abstract=abstract, sections=sections,
                  references=references or ["[1] Nobody. 1990. A work outside the corpus. Nowhere 1, 1–2."],
                  columns=rng.choice((1, 2)))
    pdf = canvas.Canvas(str(path), pagesize=A4)
    if record.get("arxiv") and rng.random() < 0.2:
        pdf.saveState()
        pdf.translate(20, 280)
        pdf.rotate(90)
        pdf.setFont(FONTS["Serif"], 14)
        pdf.drawString(0, 0, f"arXiv:{record['arxiv']}v1 [cs.IR] 1 Jan {record['year']}")
        pdf.restoreState()
    Layout(pdf, draft, True).run()
    pdf.save()
    return style


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the numbers to this file")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    records = load_corpus()
    chosen = choose(records, args.papers, rng)
    in_folder = {r["id"]: r for r in chosen}
    with tempfile.TemporaryDirectory(prefix="pdf-folder-") as tmp:
        folder = Path(tmp) / "papers"
        folder.mkdir()
        for number, record in enumerate(chosen):
            write_paper(folder / f"paper-{number:03d}.pdf", record, {r["id"]: r for r in records}, records, rng)
        started, cpu = time.perf_counter(), time.process_time()
        summary = build_from_pdf_folder(folder, Path(tmp) / "out.jsonl.gz", progress=False)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
        with gzip.open(Path(tmp) / "out.jsonl.gz", "rt", encoding="utf-8") as handle:
            written = [json.loads(line) for line in handle]
        reading = front = 0.0  # CPU seconds of the document reader and of the extra first-page pass
        for path in find_pdfs(folder):
            data = path.read_bytes()
            mark = time.process_time()
            document = read_document(data, path.name)
            reading += time.process_time() - mark
            mark = time.process_time()
            read_front_matter(data, document)
            front += time.process_time() - mark
    by_title = {r["title"]: r for r in written}
    demo_of = {by_title[r["title"]]["id"]: r["id"] for r in chosen if r["title"] in by_title}
    truth = {(r["id"], c) for r in chosen for c in r.get("references") or [] if c in in_folder and c != r["id"]}
    found = {(demo_of[r["id"]], demo_of.get(c, c)) for r in written for c in r["references"]}
    hits = len(truth & found)
    authors_right = sum(by_title[r["title"]]["authors"] == r["authors"] for r in chosen if r["title"] in by_title)
    result = {
        "papers": len(chosen), "written": summary.papers,
        "links_true": len(truth), "links_found": len(found), "links_right": hits,
        "precision": round(hits / len(found), 3) if found else None,
        "recall": round(hits / len(truth), 3) if truth else None,
        "authors_exact": round(authors_right / len(chosen), 3),
        "ids_doi_or_arxiv": sum(not r["id"].startswith("pdf-") for r in written),
        "seconds": round(seconds, 1), "cpu_seconds_per_pdf": round(cpu_seconds / len(chosen), 2),
        "front_page_share_of_cpu": round(front / (reading + front), 3),
        "machine": machine.line(), "seed": args.seed,
    }
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
