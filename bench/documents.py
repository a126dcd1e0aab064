"""Whole documents as PDFs: how well `read_document` reads their references and citation markers.

    python -m bench.documents [--seeds 1:4] [--keep DIR] [--json OUT]

For each seed, style and column count, a paper is written as a real PDF (bench/pdf_writer.py) into a temporary
folder: title, abstract, four sections whose sentences (the demo corpus's own summaries) cite about 20 demo
corpus papers and 5 references the corpus does not hold (bench/references.py's invented ones), and the
reference list in that style: numbered (ACM, IEEE, Springer) or author-year (APA, Chicago author-date).
Markers are single, grouped, ranges ("[3–5]") and narrative ("Smith et al. (2020)"); each paragraph of the
first section also holds a [CIT] placeholder. The PDF is read back with `read_document`, its references are
matched to the demo corpus with `ReferenceIndex`, and the script reports, per style:

- precision and recall of the set of corpus papers the reference list is matched to (the set a reviewer's
  suggestions exclude), as in bench/references.py;
- marker accuracy: of the markers written, the share found with exactly the written text and resolved to
  exactly the entries they cite; and placeholders found;
- titles and abstracts read exactly (spaces aside), and seconds per PDF;
- the time to read a two-column PDF of about ten pages (median of three reads).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.pdf_writer import Draft, write_pdf
from bench.references import FORMATTERS, distractors, entry_facts, load_corpus, split_name
from recommender.documents.read import read_document
from recommender.paper import Paper
from recommender.references.match import ReferenceIndex

STYLES = {"acm": "numbered", "ieee": "numbered", "springer": "numbered", "apa": "author-year",
          "chicago": "author-year"}
CORPUS_ENTRIES = 20
SECTIONS = ["1 Introduction", "2 Related Work", "3 Method", "4 Discussion"]
LEADS = ["Earlier work showed that", "It has been argued that", "In a related line of work,", "Notably,",
         "A common finding is that", "Prior studies report that", "As observed before,"]


@dataclass
class Entry:
    """One reference of the paper: its corpus id (None: not in the corpus) and the facts it is written from."""

    paper_id: str | None
    record: dict
    number: int = 0  # its number in the printed list (1-based)


@dataclass
class Citation:
    """One marker written into the text: its exact text and the list numbers it cites (empty: placeholder)."""

    text: str
    numbers: list[int] = field(default_factory=list)


def surname(record: dict, index: int = 0) -> str:
    return split_name(record["authors"][index])[1]


def in_text(style: str, entries: list[Entry], narrative: bool) -> str:
    """An author-year marker for these entries, as APA or Chicago writes it."""
    def names(record: dict) -> str:
        authors = record["authors"]
        joiner = " & " if style == "apa" and not narrative else " and "
        if len(authors) == 1:
            return surname(record)
        if len(authors) == 2:
            return f"{surname(record)}{joiner}{surname(record, 1)}"
        return f"{surname(record)} et al."
    if narrative:
        return f"{names(entries[0].record)} ({entries[0].record['year']})"
    comma = ", " if style == "apa" else " "
    return "(" + "; ".join(f"{names(e.record)}{comma}{e.record['year']}" for e in entries) + ")"


def numbered(numbers: list[int]) -> str:
    """[3], [2, 7] or [3–5] for consecutive numbers."""
    numbers = sorted(numbers)
    if len(numbers) >= 3 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"[{numbers[0]}–{numbers[-1]}]"
    return "[" + ", ".join(str(n) for n in numbers) + "]"


def choose_entries(records: list[dict], rng: random.Random) -> list[Entry]:
    """About 20 corpus papers and 5 invented references, no two with the same first surname and year."""
    usable = [r for r in records if r["authors"] and r.get("year")]
    seen: set[tuple[str, int]] = set()
    entries: list[Entry] = []
    for record in rng.sample(usable, len(usable)):
        key = (surname(record).casefold(), record["year"])
        if key not in seen:
            seen.add(key)
            entries.append(Entry(record["id"], record))
        if len(entries) == CORPUS_ENTRIES:
            break
    for record in distractors(records, {e.paper_id for e in entries}, rng):
        key = (surname(record).casefold(), record["year"])
        if key not in seen:
            seen.add(key)
            entries.append(Entry(None, record))
    return entries


def make_draft(style: str, columns: int, records: list[dict], rng: random.Random) -> tuple[Draft, list[Entry],
                                                                                             list[Citation]]:
    entries = choose_entries(records, rng)
    by_id = {r["id"]: r for r in records}
    rng.shuffle(entries)
    if style in ("acm", "apa", "chicago"):  # alphabetical lists; IEEE and Springer number by first citation
        entries.sort(key=lambda e: (surname(e.record).casefold(), e.record["year"]))
    for number, entry in enumerate(entries, start=1):
        entry.number = number
    citations: list[Citation] = []
    sections = []
    pending = list(entries)
    if style in ("ieee", "springer"):
        pending.sort(key=lambda e: e.number)
    for index, heading in enumerate(SECTIONS):
        paragraphs = []
        for _ in range(2):
            sentences = []
            for _ in range(rng.randint(2, 4)):
                group = _next_group(pending, entries, rng)
                narrative = len(group) == 1 and rng.random() < 0.3
                if STYLES[style] == "numbered":
                    marker = numbered([e.number for e in group])
                    lead = f"{surname(group[0].record)} et al. {marker} found that" if narrative else rng.choice(LEADS)
                    tail = "" if narrative else f" {marker}"
                else:
                    marker = in_text(style, group, narrative)
                    lead = f"{marker} found that" if narrative else rng.choice(LEADS)
                    tail = "" if narrative else f" {marker}"
                sentences.append((f"{lead} {_summary(group[0], by_id, rng)}{tail}.",
                                  Citation(marker, [e.number for e in group])))
            if index == 0:
                sentences.insert(rng.randint(0, len(sentences)),
                                 (f"{rng.choice(LEADS)} {_filler(records, rng)} [CIT].", Citation("[CIT]")))
            citations.extend(citation for _, citation in sentences)
            paragraphs.append(" ".join(sentence for sentence, _ in sentences))
        sections.append((heading, paragraphs))
    texts = [FORMATTERS[style](entry_facts(e.record, rng)) for e in entries]
    if style in ("acm", "ieee"):
        texts = [f"[{e.number}] {text}" for e, text in zip(entries, texts)]
    elif style == "springer":
        texts = [f"{e.number}. {text}" for e, text in zip(entries, texts)]
    title_source = rng.choice(records)
    draft = Draft(title=f"Revisiting {title_source['title'].rstrip('.?')}", authors="Anna Andersen and Bruno Barbosa",
                  abstract=" ".join(_filler(records, rng) + "." for _ in range(3)), sections=sections,
                  references=texts, columns=columns, running_header=f"Proceedings of CITREC '26 ({style.upper()})",
                  reference_heading=rng.choice(["References", "REFERENCES", "Bibliography"]),
                  reference_layout=rng.choice(["hanging", "flat", "spaced"]), inline_abstract=style == "ieee")
    return draft, entries, citations


def _next_group(pending: list[Entry], entries: list[Entry], rng: random.Random) -> list[Entry]:
    """The next entries to cite: uncited ones first (each is cited at least once), 1 to 3 at a time."""
    size = rng.choice([1, 1, 1, 2, 3])
    if pending:
        group, pending[:] = pending[:size], pending[size:]
        return group
    return rng.sample(entries, size)


def _summary(entry: Entry, by_id: dict, rng: random.Random) -> str:
    record = by_id.get(entry.paper_id) or rng.choice(list(by_id.values()))
    sentence = re.split(r"(?<=[a-z0-9)])\.\s", record["abstract"])[0].rstrip(".")
    return sentence[0].lower() + sentence[1:]


def _filler(records: list[dict], rng: random.Random) -> str:
    sentence = re.split(r"(?<=[a-z0-9)])\.\s", rng.choice(records)["abstract"])[0].rstrip(".")
    return sentence[0].lower() + sentence[1:]


def compact(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def measure(path: Path, draft: Draft, entries: list[Entry], citations: list[Citation], index: ReferenceIndex) -> dict:
    started = time.perf_counter()
    document = read_document(path)
    seconds = time.perf_counter() - started
    found: set[str] = set()
    for item in document.references:
        found |= index.match_item(item)
    expected = {e.paper_id for e in entries if e.paper_id}
    position_to_number = _align(document.references, draft.references)
    written = [m for p in document.passages for m in p.markers]
    correct = placeholders = found_markers = 0
    cursor = 0
    for citation in citations:
        for offset, marker in enumerate(written[cursor:]):
            if compact(marker.text) == compact(citation.text):
                cursor += offset + 1
                found_markers += 1
                if not citation.numbers:
                    placeholders += marker.placeholder
                else:
                    resolved = sorted(position_to_number.get(p, -1) for p in marker.references)
                    correct += resolved == sorted(citation.numbers)
                break
    cited = [c for c in citations if c.numbers]
    return {"tp": len(found & expected), "fp": len(found - expected), "fn": len(expected - found),
            "entries": len(entries), "read": len(document.references), "markers": len(cited),
            "markers_found": found_markers - placeholders, "markers_correct": correct,
            "placeholders": len(citations) - len(cited), "placeholders_found": placeholders,
            "title_ok": compact(document.title) == compact(draft.title),
            "abstract_ok": compact(document.abstract) == compact(draft.abstract),
            "pages": max((p.page or 0 for p in document.passages), default=0), "seconds": seconds}


def _align(references, printed: list[str]) -> dict[int, int]:
    """Each read reference's position -> the number of the printed entry it is (by shared words)."""
    printed_words = [set(re.findall(r"\w{3,}", text.casefold())) for text in printed]
    mapping = {}
    for position, item in enumerate(references):
        words = set(re.findall(r"\w{3,}", item.raw.casefold()))
        scores = [len(words & other) / max(1, len(words | other)) for other in printed_words]
        best = max(range(len(scores)), key=scores.__getitem__)
        if scores[best] >= 0.5:
            mapping[position] = best + 1
    return mapping


def run(seeds: range, folder: Path) -> dict:
    records = load_corpus()
    index = ReferenceIndex([Paper.from_dict(r) for r in records])
    results: dict[str, list[dict]] = {}
    for seed in seeds:
        for style in STYLES:
            for columns in (1, 2):
                rng = random.Random(f"{seed}-{style}-{columns}")
                draft, entries, citations = make_draft(style, columns, records, rng)
                path = folder / f"{seed}-{style}-{columns}col.pdf"
                write_pdf(path, draft)
                results.setdefault(f"{style}, {columns} col", []).append(
                    measure(path, draft, entries, citations, index))
    return results


def time_long_pdf(records: list[dict], folder: Path, pages: int = 10) -> tuple[int, float]:
    """(pages, median seconds of 3 reads) for a two-column ACM-style PDF of about `pages` pages."""
    rng = random.Random("long")
    draft, _, _ = make_draft("acm", 2, records, rng)
    filler = [_filler(records, rng) + "." for _ in range(40)]
    while True:
        for heading, paragraphs in draft.sections:
            paragraphs.append(" ".join(rng.sample(filler, 8)))
        path = folder / "long.pdf"
        write_pdf(path, draft)
        document = read_document(path)
        read_pages = max(p.page or 0 for p in document.passages)
        if read_pages >= pages:
            break
    seconds = []
    for _ in range(3):
        started = time.perf_counter()
        read_document(path)
        seconds.append(time.perf_counter() - started)
    return read_pages, statistics.median(seconds)


def summarise(rows: list[dict]) -> dict:
    total = {key: sum(row[key] for row in rows) for key in rows[0] if key != "seconds"}
    return {"pdfs": len(rows), "pages": total["pages"], "entries": total["entries"], "read": total["read"],
            "precision": total["tp"] / max(1, total["tp"] + total["fp"]),
            "recall": total["tp"] / max(1, total["tp"] + total["fn"]),
            "markers": total["markers"], "marker_found": total["markers_found"] / max(1, total["markers"]),
            "marker_accuracy": total["markers_correct"] / max(1, total["markers"]),
            "placeholders_found": total["placeholders_found"] / max(1, total["placeholders"]),
            "titles": total["title_ok"] / len(rows), "abstracts": total["abstract_ok"] / len(rows),
            "seconds_per_pdf": statistics.mean(row["seconds"] for row in rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="1:4", metavar="FIRST:LAST", help="seeds to generate (LAST excluded)")
    parser.add_argument("--keep", type=Path, help="write the PDFs here instead of a temporary folder")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    first, last = (int(part) for part in args.seeds.split(":"))
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        results = run(range(first, last), folder)
        long_pages, long_seconds = time_long_pdf(load_corpus(), folder)
    table = {name: summarise(rows) for name, rows in results.items()}
    table["all"] = summarise([row for rows in results.values() for row in rows])
    print(f"seeds {first} to {last - 1}\n")
    print("| style | PDFs | pages | entries | read | precision | recall | markers | found | resolved exactly | "
          "[CIT] found | titles | abstracts | s/PDF |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, c in table.items():
        print(f"| {name} | {c['pdfs']} | {c['pages']} | {c['entries']} | {c['read']} | {c['precision']:.3f} | "
              f"{c['recall']:.3f} | {c['markers']} | {c['marker_found']:.3f} | {c['marker_accuracy']:.3f} | "
              f"{c['placeholders_found']:.3f} | {c['titles']:.2f} | {c['abstracts']:.2f} | {c['seconds_per_pdf']:.2f} |")
    print(f"\nreading a {long_pages}-page two-column PDF: {long_seconds:.2f} s (median of 3)")
    table["long_pdf"] = {"pages": long_pages, "seconds": long_seconds}
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
