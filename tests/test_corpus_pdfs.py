"""A folder of PDFs as a corpus: real PDFs laid out by reportlab (one and two columns, numbered and author-year
reference lists, an arXiv stamp up the margin, PDF metadata), plus scanned, encrypted and fake ones."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from bench.pdf_writer import FONTS, Draft, Layout, write_pdf, write_scanned_pdf
from recommender.cli import main
from recommender.corpus.loaders import load_corpus
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.pdf_folder import build_from_pdf_folder
from recommender.corpus.sources.pdf_front import author_field_names, byline_authors, names_in

FILLER = ("Citation recommendation systems help researchers find relevant literature for their manuscripts, and "
          "they have been studied in information retrieval and natural language processing. ")
GARFIELD = "Citation Indexes for Science Revisited"
STROHMAN = "Recommending Citations for Academic Papers"
HE = "Context-aware Citation Recommendation"


def paper(title: str, authors: str, abstract: str, references: list[str], columns: int = 1) -> Draft:
    return Draft(title=title, authors=authors, abstract=abstract, columns=columns, references=references,
                 sections=[("1 Introduction", [FILLER * 3, FILLER * 2]), ("2 Method", [FILLER * 4])])


def write_with(path: Path, draft: Draft, *, author_field: str = "", stamp: str = "") -> None:
    """A PDF with an Author field in its metadata and/or the arXiv stamp up the left margin."""
    pdf = canvas.Canvas(str(path), pagesize=A4)
    if author_field:
        pdf.setAuthor(author_field)
    if stamp:
        pdf.saveState()
        pdf.translate(20, 300)
        pdf.rotate(90)
        pdf.setFont(FONTS["Serif"], 14)
        pdf.drawString(0, 0, stamp)
        pdf.restoreState()
    Layout(pdf, draft, True).run()
    pdf.save()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """Three papers citing each other, a copy of one, and four files that give no paper."""
    root = tmp_path_factory.mktemp("papers")
    (root / "2007").mkdir()
    write_pdf(root / "garfield.pdf", paper(
        GARFIELD, "Eugene Garfield", "We revisit citation indexes and what they tell about science.",
        ["[1] Someone Else. 1950. An unrelated older work. Journal of Old Things 1, 1–9."]))
    write_pdf(root / "2007" / "strohman.pdf", paper(
        STROHMAN, "Trevor Strohman, W. Bruce Croft and David D. Jensen",
        "We recommend citations for a draft with text and citation-graph features.",
        [f"[1] Eugene Garfield. 2001. {GARFIELD}. Science 1, 1–2.",
         "[2] A. Nobody. 1999. A paper that is not in the folder. Nowhere 3, 4–5."], columns=2))
    write_pdf(root / "he.pdf", paper(
        HE, "Qi He1, Jian Pei2* and Daniel Kifer (Pennsylvania State University)",
        "We score the contexts in which papers are cited. DOI: 10.1145/1772690.1772734",
        [f"Garfield, E. (2001). {GARFIELD.lower().capitalize()}. Science, 1, 1–2.",
         f"Strohman, T., Croft, W. B., & Jensen, D. (2007). {STROHMAN.lower().capitalize()}. In SIGIR (pp. 705–706).",
         "Lee, K. (2009). Something else entirely, cited with its DOI. Elsewhere. doi:10.1000/elsewhere.1"]))
    shutil.copy(root / "garfield.pdf", root / "2007" / "garfield copy.pdf")
    write_scanned_pdf(root / "scan.pdf", ["A scanned page", "without a text layer"])
    write_pdf(root / "locked.pdf", paper("A Locked Paper", "Ann Lock", "Secret.", []), password="secret")
    (root / "notes.pdf").write_text("these are my notes, saved with the wrong name", encoding="utf-8")
    (root / ".hidden").mkdir()
    write_pdf(root / ".hidden" / "trash.pdf", paper("Deleted Paper", "Del Eted", "Gone.", []))
    return root


def read_records(path: Path) -> dict[str, dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return {r["title"]: r for r in map(json.loads, handle)}


def test_a_folder_of_pdfs_becomes_a_corpus_with_its_citation_links(folder, tmp_path):
    out = tmp_path / "mine.jsonl.gz"
    summary = build_from_pdf_folder(folder, out, progress=False)
    records = read_records(out)
    assert set(records) == {GARFIELD, STROHMAN, HE} and summary.papers == 3
    garfield, strohman, he = records[GARFIELD], records[STROHMAN], records[HE]
    assert strohman["authors"] == ["Trevor Strohman", "W. Bruce Croft", "David D. Jensen"]
    assert he["authors"] == ["Qi He", "Jian Pei", "Daniel Kifer"]  # marks and the affiliation dropped
    assert he["id"] == he["doi"] == "10.1145/1772690.1772734"  # printed on its first page
    assert garfield["id"].startswith("pdf-") and garfield["id"] == f"pdf-{garfield['sha256'][:16]}"
    assert strohman["file"] == "2007/strohman.pdf"
    assert "citation-graph features" in strohman["abstract"]
    # numbered and author-year reference lists matched to the other PDFs; entries outside the folder dropped
    assert strohman["references"] == [garfield["id"]]
    assert set(he["references"]) == {garfield["id"], strohman["id"]}
    assert garfield["references"] == []
    assert (summary.references.kept, summary.references.outside) == (3, 3)
    loaded = load_corpus(out)  # what `index` reads: no problem, no dangling reference
    assert loaded.kept == 3 and not loaded.problems
    notes = "\n".join(summary.notes)
    assert "skipped 3 of 7 PDFs" in notes  # the hidden folder is not read
    assert "scan.pdf: This PDF has no text layer (scanned?)" in notes
    assert "locked.pdf: This PDF is encrypted" in notes
    assert "notes.pdf: This file is named .pdf but is no PDF" in notes
    assert "garfield.pdf (the same paper as 2007/garfield copy.pdf)" in notes  # the first in path order stays


def test_ids_are_stable_from_run_to_run(folder, tmp_path):
    build_from_pdf_folder(folder, tmp_path / "a.jsonl.gz", progress=False)
    build_from_pdf_folder(folder, tmp_path / "b.jsonl.gz", progress=False)
    first, second = read_records(tmp_path / "a.jsonl.gz"), read_records(tmp_path / "b.jsonl.gz")
    assert {t: r["id"] for t, r in first.items()} == {t: r["id"] for t, r in second.items()}


def test_the_arxiv_stamp_gives_id_and_year_and_metadata_gives_authors(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_with(folder / "stamped.pdf", paper("Dense Retrieval of Related Work", "", "We retrieve related work.", []),
               author_field="Okoro, Ada; van der Berg, Anna", stamp="arXiv:2104.08663v3 [cs.IR] 21 Oct 2021")
    write_with(folder / "byline.pdf", paper("Sparse Retrieval of Related Work", "Lin Wei and Sara Costa",
                                            "We retrieve related work sparsely.", []),
               author_field="Microsoft Office User")
    build_from_pdf_folder(folder, tmp_path / "out.jsonl.gz", progress=False)
    records = read_records(tmp_path / "out.jsonl.gz")
    stamped, byline = records["Dense Retrieval of Related Work"], records["Sparse Retrieval of Related Work"]
    assert stamped["id"] == stamped["arxiv"] == "2104.08663" and stamped["year"] == 2021
    assert stamped["authors"] == ["Ada Okoro", "Anna van der Berg"]  # no byline on the page: the Author field
    assert byline["authors"] == ["Lin Wei", "Sara Costa"]  # the byline; "Microsoft Office User" is no name


def test_a_doi_the_reference_list_holds_is_not_the_papers_own(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_pdf(folder / "a.pdf", paper("A Study That Cites on Its First Page", "Ada Okoro",
                                      "As shown before (doi:10.1000/cited.7), short papers cite early.",
                                      ["[1] B. Author. 2001. The cited work. Venue. doi:10.1000/cited.7"]))
    build_from_pdf_folder(folder, tmp_path / "out.jsonl.gz", progress=False)
    records = read_records(tmp_path / "out.jsonl.gz")
    record = records["A Study That Cites on Its First Page"]
    assert "doi" not in record and record["id"].startswith("pdf-")


@pytest.mark.parametrize("line, names", [
    ("Ada Lovelace1, Alan Turing2* and Grace B. Hopper (Navy Research Lab)",
     ["Ada Lovelace", "Alan Turing", "Grace B. Hopper"]),
    ("J. Smith · K. van der Berg · M. Müller-Lüdenscheidt", ["J. Smith", "K. van der Berg", "M. Müller-Lüdenscheidt"]),
    ("Department of Computer Science, University of Somewhere", []),
    ("{ada, alan}@example.org", []),
    ("In Proceedings of the Conference on Things", []),
    ("We present a reader for whole documents", []),
])
def test_names_in_a_byline(line, names):
    assert names_in(line) == names


def test_a_long_byline_wrapped_inside_names_over_two_columns(tmp_path):
    authors = ["Rajarshi Das", "Shehzaad Dhuliawala", "Manzil Zaheer", "Luke Vilnis", "Ishan Durugkar",
               "Akshay Krishnamurthy", "Mary S. Dietrich", "Tajhal Dayaram", "Madeleine van Zuylen", "Al Mamunur Rashid",
               "Kimbra Wilder Gish", "Jeffrey N. Myers", "Andrew McCallum"]
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_pdf(folder / "long.pdf", paper("Reasoning over Paths in Knowledge Bases", ", ".join(authors[:-1])
                                         + " and " + authors[-1], "We walk the graph to the answer.", [], columns=2))
    build_from_pdf_folder(folder, tmp_path / "out.jsonl.gz", progress=False)
    assert read_records(tmp_path / "out.jsonl.gz")["Reasoning over Paths in Knowledge Bases"]["authors"] == authors


def test_a_byline_of_one_author_a_line_with_affiliations():
    lines = ["Citation Recommendation", "Ada Lovelace", "University of London", "ada@example.org", "Alan Turing",
             "Bletchley Park Research Station", "Abstract", "We recommend citations."]
    assert byline_authors(lines, "Citation Recommendation", "We recommend citations.") == ["Ada Lovelace",
                                                                                          "Alan Turing"]


def test_author_fields_in_either_order():
    assert author_field_names("Lovelace, Ada; Turing, Alan") == ["Ada Lovelace", "Alan Turing"]
    assert author_field_names("Lovelace, Ada and Turing, Alan") == ["Ada Lovelace", "Alan Turing"]
    assert author_field_names("Ada Lovelace, Alan Turing") == ["Ada Lovelace", "Alan Turing"]


def test_the_command_line_reports_and_refuses_clearly(folder, tmp_path, capsys):
    assert main(["corpus", "pdfs", str(folder), "--out", str(tmp_path / "mine.jsonl"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "wrote 3 papers" in printed and "references: 3 point at papers of the corpus" in printed
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["corpus", "pdfs", str(empty), "--out", str(tmp_path / "none.jsonl")]) == 2
    assert "no PDF files in it" in capsys.readouterr().err
    unreadable = tmp_path / "unreadable"
    unreadable.mkdir()
    write_scanned_pdf(unreadable / "scan.pdf", ["only a picture"])
    with pytest.raises(SourceError, match="none of its 1 PDFs could be read .first: scan.pdf: This PDF has no text"):
        build_from_pdf_folder(unreadable, tmp_path / "none.jsonl", progress=False)
    assert not (tmp_path / "none.jsonl").exists()
