"""The "Low" items of issue 25, each with real files built at test time: terminal output of corpus text, CSV
cells a spreadsheet would run, BibTeX braces, UTF-16 without a byte-order mark, a PDF of repeated lines, and
the PDF reader's page and text limits (the speed itself is measured in docs/security.md, not asserted here).
"""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import bibtexparser
import pytest
from reportlab.pdfgen import canvas

from recommender.corpus.bibtex import latex_text
from recommender.corpus.export import spreadsheet_safe, to_bibtex, to_csv
from recommender.corpus.loaders import load_corpus
from recommender.documents import pdf as pdf_reader
from recommender.documents.read import read_document
from recommender.paper import Paper
from recommender.store.build import build_index
from recommender.terminal import TITLE_CHARS, terminal_safe

PROJECT = Path(__file__).resolve().parents[2]
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


# --------------------------------------------------------------------------- terminal output


def _hostile_papers() -> list[Paper]:
    red = "\x1b[31mProtein structure\x1b[0m prediction \u202eevil\u202c \x1b]0;pwned\x07with \x9b2Jdeep nets"
    return [
        Paper("red", title=red, abstract="Proteins fold into \x1b[2Jstructures.", year=2020,
              authors=["Eve \x1b[2J Hacker\u2066", "Mallory\r Overwrite"], venue="\x1b[5mBlinking\x1b[0m Venue\u200f"),
        Paper("huge", title="Protein folding at scale " + "x" * 1_000_000, abstract="A protein structure paper.",
              authors=["Ann Long"], year=2021),
        Paper("ok", title="Sequence alignment of proteins", abstract="Dynamic programming aligns sequences.",
              authors=["Carl Dee"], year=2019),
    ]


def test_recommend_prints_no_escape_or_bidi_characters_and_cuts_long_titles(tmp_path):
    papers = _hostile_papers()
    root = tmp_path / "idx"
    build_index(papers, root, progress_bar=False)
    command = [sys.executable, "-m", "recommender", "recommend", "--index", str(root), "--title",
               "protein structure prediction", "-k", "3"]
    proc = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "\x1b" not in out and "\x9b" not in out and "pwned" not in out
    assert not set(BIDI) & set(out)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)  # no control character but newline (and tab)
    assert "Protein structure prediction evil with deep nets — Eve Hacker, Mallory Overwrite" in out
    assert "Blinking Venue" in out
    huge = next(line for line in out.splitlines() if "Protein folding at scale" in line)
    assert "…" in huge and len(huge) < TITLE_CHARS + 100  # the title cut to 300 characters, not 1 MB
    assert len(out) < 5_000

    as_json = subprocess.run(command + ["--json"], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    titles = {r["paper_id"]: r["title"] for r in json.loads(as_json.stdout)}
    assert titles == {p.id: p.title for p in papers}  # JSON stays exact: json.dumps escapes the controls
    assert "\x1b" not in as_json.stdout and "\\u001b" in as_json.stdout


@pytest.mark.parametrize("text, shown", [
    ("\x1b[1;31mbold red\x1b[0m", "bold red"),
    ("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),  # an OSC hyperlink, payload and all
    ("title\x1b]2;set window title\x07", "title"),
    ("a\u202eb\u2066c\u200fd\u061ce", "abcde"),
    ("x\x9b2Jy\x85z", "xyz"),  # 8-bit CSI and NEL
    ("lone\ud800surrogate\x00\x07", "lonesurrogate"),
    ("carriage\rreturn\nand\ttab", "carriagereturn and tab"),
])
def test_terminal_safe_drops_sequences_and_controls(text, shown):
    assert terminal_safe(text) == shown


def test_terminal_safe_keeps_text_and_cuts_with_an_ellipsis():
    assert terminal_safe("Ünïcödé — 日本語 (2020)") == "Ünïcödé — 日本語 (2020)"
    assert terminal_safe("line\n\tnext", one_line=False) == "line\n\tnext"
    cut = terminal_safe("y" * 10_000, limit=300)
    assert len(cut) == 300 and cut.endswith("…")


# --------------------------------------------------------------------------- CSV


@pytest.mark.parametrize("payload", [
    " =HYPERLINK(\"http://evil.example\",\"x\")",
    "   +1+1",
    "\uff1dHYPERLINK(\"http://evil.example\")",  # fullwidth =
    "\uff0b1",  # fullwidth +
    "\uff0d1",  # fullwidth -
    "\uff20SUM(A1)",  # fullwidth @
    "\u200b=1+1",  # zero-width space
    "\ufeff=1+1",  # byte-order mark
    "\u2060@SUM(A1)",  # word joiner
    "\u200e\u00a0-1",  # a bidi mark and a no-break space
    "\t=1+1",
    "\r=1+1",
    "\n=1+1",
    "\u3000=1",  # ideographic space
])
def test_csv_cells_hiding_a_formula_after_spaces_or_invisible_characters_are_neutralised(payload):
    assert spreadsheet_safe(payload) == "'" + payload
    paper = Paper("p", title=payload, authors=[payload], venue=payload, abstract=payload, year=2020)
    [row] = csv.DictReader(io.StringIO(to_csv([paper]), newline=""))
    for column in ("title", "authors", "venue", "abstract"):
        assert row[column] == "'" + payload, column


def test_csv_leaves_text_that_only_contains_signs_alone():
    for cell in ("  plain", "a-b", "x = y", "\u200bword", "Ｘ＝1", ""):
        assert spreadsheet_safe(cell) == cell


# --------------------------------------------------------------------------- BibTeX


def _naively_balanced(value: str) -> bool:
    """BibTeX's own count: every brace counts, backslash or not, and the depth never drops below zero."""
    depth = 0
    for char in value:
        depth += (char == "{") - (char == "}")
        if depth < 0:
            return False
    return depth == 0


TITLES = ["a } b", "{ only", "}{", "x {a} } {", "{nested {deep} ok}", r"back\slash } and {", "}}}{{{"]


def test_bibtex_braces_balance_and_every_entry_parses_with_its_fields(tmp_path):
    papers = [Paper(f"p{i}", title=title, authors=[f"Brace {title} Person", "Ann Lee"], venue=f"Venue {title}",
                    abstract=f"Abstract {title}.", year=2000 + i) for i, title in enumerate(TITLES)]
    text = to_bibtex(papers)
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == [] and len(library.entries) == len(papers)
    for paper, entry in zip(papers, library.entries):
        fields = entry.fields_dict
        assert {"title", "author", "year", "abstract"} <= set(fields), entry.key
        assert entry["year"] == str(paper.year)
        for field in entry.fields:
            assert _naively_balanced(field.value), (entry.key, field.key, field.value)
        assert latex_text(entry["title"]) == paper.title
        assert latex_text(entry["abstract"]) == paper.abstract
    path = tmp_path / "out.bib"
    path.write_text(text, encoding="utf-8")
    loaded = load_corpus(path, strict=True)
    assert [p.title for p in loaded.papers] == TITLES
    assert [p.venue for p in loaded.papers] == [p.venue for p in papers]


def test_bibtex_keeps_paired_braces_as_escaped_pairs():
    [entry] = bibtexparser.parse_string(to_bibtex([Paper("x", title="The {BERT} model", year=2019)])).entries
    assert entry["title"] == r"The \{BERT\} model"


# --------------------------------------------------------------------------- UTF-16 without a byte-order mark


DRAFT = ("Citation recommendation suggests papers for a draft.\n\n"
         "A second paragraph, with Ünïcödé letters and 日本語, says more about it.\n")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_read_as_text(codec):
    document = read_document(DRAFT.encode(codec), "draft.txt")
    assert [p.text for p in document.passages] == [part.strip() for part in DRAFT.split("\n\n")]


def test_binary_with_zero_bytes_is_still_refused():
    data = bytes(range(1, 32)) * 200 + b"\x00\x01" * 500  # control bytes, then a UTF-16-like tail
    with pytest.raises(ValueError, match="binary"):
        read_document(data, "draft.txt")


# --------------------------------------------------------------------------- PDF


def _pdf(pages: list[list[str]], tmp_path: Path, name: str = "doc.pdf") -> bytes:
    path = tmp_path / name
    page_canvas = canvas.Canvas(str(path))
    for lines in pages:
        page_canvas.setFont("Times-Roman", 11)
        for number, line in enumerate(lines):
            page_canvas.drawString(72, 720 - 14 * number, line)
        page_canvas.showPage()
    page_canvas.save()
    return path.read_bytes()


def test_pdf_whose_pages_all_repeat_one_line_is_read_with_a_notice(tmp_path):
    sentence = "Citation recommenders suggest the papers a draft should cite."
    document = read_document(_pdf([[sentence]] * 5, tmp_path), "same.pdf")
    assert sentence in " ".join(p.text for p in document.passages)
    assert any("running headers and footers" in notice for notice in document.notices)


def test_pdf_reading_stops_at_the_page_and_text_limits_with_a_notice(tmp_path, monkeypatch):
    line = "Dense text of a very long document that goes on and on, page after page, for ever."
    data = _pdf([[f"{line} Page {n}."] * 40 for n in range(1, 9)], tmp_path)
    monkeypatch.setattr(pdf_reader, "MAX_PDF_PAGES", 3)
    pages, notices = pdf_reader.extract_lines(data)
    assert len(pages) == 3 and notices == ["Only the first 3 pages were read."]
    monkeypatch.setattr(pdf_reader, "MAX_PDF_PAGES", 300)
    monkeypatch.setattr(pdf_reader, "MAX_TEXT_CHARS", 2 * 40 * len(line))
    pages, notices = pdf_reader.extract_lines(data)
    assert len(pages) == 2 and "their text reached the limit" in notices[0]


def test_pdf_lines_are_the_ones_pdfminer_layout_analysis_makes(tmp_path):
    """The reader groups characters into lines itself (for speed); the lines must be pdfminer's own, on a page
    with columns, mixed fonts, spacing, rise, rotated and mirrored text and text inside a Form XObject."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTTextContainer, LTTextLine

    path = tmp_path / "mixed.pdf"
    c = canvas.Canvas(str(path))
    c.setFont("Helvetica-Bold", 16)
    c.drawString(72, 770, "A Title in Bold Type")
    c.setFont("Times-Roman", 10)
    for number in range(30):
        c.drawString(72, 740 - 12 * number, f"Left column line {number} with some words")
        c.drawString(320, 740 - 12 * number, f"Right column line {number}, more words")
    text = c.beginText(72, 350)
    text.setCharSpace(1.2)
    text.setWordSpace(3)
    text.textLine("Spaced characters and words")
    text.setRise(4)
    text.textLine("Risen text")
    c.drawText(text)
    c.saveState()
    c.translate(300, 200)
    c.rotate(30)
    c.drawString(0, 0, "Rotated text line")
    c.restoreState()
    c.saveState()
    c.scale(-1, 1)
    c.drawString(-500, 150, "Mirrored text")
    c.restoreState()
    c.beginForm("form")
    c.drawString(72, 100, "Text inside a form")
    c.endForm()
    c.doForm("form")
    c.showPage()
    c.setPageRotation(90)
    c.setFont("Courier", 9)
    for number in range(10):
        c.drawString(72, 700 - 11 * number, f"page rotated, line {number}")
    c.showPage()
    c.save()
    data = path.read_bytes()

    def key(text, x0, y0, x1, y1, page):
        return (text, round(x0, 6), round(y0, 6), round(x1, 6), round(y1, 6), page)

    expected = []
    for number, page in enumerate(extract_pages(io.BytesIO(data), laparams=LAParams()), start=1):
        stack = list(page)
        while stack:
            item = stack.pop(0)
            if isinstance(item, LTTextLine):
                words = " ".join(item.get_text().split())
                if words:
                    expected.append(key(words, item.x0, item.y0, item.x1, item.y1, number))
            elif isinstance(item, LTTextContainer):
                stack[:0] = list(item)
    pages, _ = pdf_reader.extract_lines(data)
    got = [key(l.text, l.x0, l.y0, l.x1, l.y1, l.page) for page in pages for l in page]
    assert sorted(got) == sorted(expected) and len(got) > 60
    assert not any("form" in line[0] for line in got)  # Form XObject text is left out, as pdfminer does
