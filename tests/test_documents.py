"""Tests of recommender.documents: whole drafts read from real files (PDFs laid out by reportlab, DOCX written by
python-docx, LaTeX, zipped projects, Markdown, text) and every kind of bad input refused with a clear message."""
from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from bench.pdf_writer import Draft, write_pdf, write_scanned_pdf
from recommender.documents.errors import DocumentError
from recommender.documents.markers import expand_numbers, find_markers
from recommender.documents.pdf import Line, extract_lines, make_blocks, measure_columns, reference_entries
from recommender.documents.read import MAX_BYTES, read_document
from recommender.references.parse import parse_reference_list

FILLER = ("Citation recommendation systems help researchers find relevant literature for their manuscripts, and "
          "they have been studied extensively in information retrieval and natural language processing. ")
NUMBERED_REFERENCES = [
    "[1] Chandra Bhagavatula, Sergey Feldman, Russell Power, and Waleed Ammar. 2018. Content-Based Citation "
    "Recommendation. In Proceedings of NAACL-HLT. 238–251.",
    "[2] Trevor Strohman, W. Bruce Croft, and David D. Jensen. 2007. Recommending citations for academic papers. "
    "In Proceedings of SIGIR. 705–706.",
    "[3] Qi He, Jian Pei, Daniel Kifer, Prasenjit Mitra, and Lee Giles. 2010. Context-aware citation "
    "recommendation. In Proceedings of WWW. 421–430.",
    "[4] Eugene Garfield. 1955. Citation indexes for science: A new dimension in documentation through "
    "association of ideas. Science 122, 3159 (1955), 108–111.",
]
AUTHOR_YEAR_REFERENCES = [
    "Bhagavatula, C., Feldman, S., Power, R., & Ammar, W. (2018). Content-based citation recommendation. In "
    "Proceedings of NAACL-HLT (pp. 238–251).",
    "Garfield, E. (1955). Citation indexes for science: A new dimension in documentation through association of "
    "ideas. Science, 122(3159), 108–111.",
    "He, Q., Pei, J., Kifer, D., Mitra, P., & Giles, L. (2010). Context-aware citation recommendation. In "
    "Proceedings of WWW (pp. 421–430).",
    "van der Berg, A., & Smith, J. (2019a). Particle names in author lists. Journal of Documentation, 75(2), 1–9.",
    "van der Berg, A., & Smith, J. (2019b). More particle names in author lists. Journal of Documentation, 75(3), "
    "10–19.",
]


def draft(columns: int, numbered: bool) -> Draft:
    if numbered:
        first = FILLER * 3 + "Earlier systems [1, 3–4] used the citation graph [CIT]."
        second = FILLER * 2 + "Strohman et al. [2] expanded the candidates with their references."
        references = NUMBERED_REFERENCES
    else:
        first = FILLER * 3 + "Content-based methods (Bhagavatula et al., 2018; Garfield, 1955) embed the text [CIT]."
        second = FILLER * 2 + "He et al. (2010) scored contexts, as did van der Berg and Smith (2019b)."
        references = AUTHOR_YEAR_REFERENCES
    sections = [("1 Introduction", [first, FILLER * 4]), ("2 Related Work", [second, FILLER * 5]),
                ("3 Method", [FILLER * 6, FILLER * 6]), ("4 Conclusion", [FILLER * 5 + "Uncited so far [?]."])]
    return Draft(title="Reading Whole Drafts for Citation Recommendation", authors="Ada Lovelace and Alan Turing",
                 abstract="We present a reader for whole documents that finds the title, the abstract and every "
                          "citation place in the text of a PDF, even when it is set in two columns.",
                 sections=sections, references=references, columns=columns,
                 running_header="Proceedings of CITREC '26, Somewhere")


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pdfs")
    paths = {}
    for name, columns, numbered in (("one-numbered", 1, True), ("two-author-year", 2, False)):
        paths[name] = folder / f"{name}.pdf"
        write_pdf(paths[name], draft(columns, numbered))
    return paths


def markers_of(document) -> dict[str, tuple[bool, list[int]]]:
    return {m.text: (m.placeholder, m.references) for p in document.passages for m in p.markers}


# ------------------------------------------------------------------------------------------------ PDF


def test_pdf_one_column_numbered(pdfs):
    document = read_document(pdfs["one-numbered"])
    assert document.kind == "pdf"
    assert document.title == "Reading Whole Drafts for Citation Recommendation"
    assert document.abstract.startswith("We present a reader") and document.abstract.endswith("two columns.")
    markers = markers_of(document)
    assert markers["[1, 3–4]"] == (False, [0, 2, 3])
    assert markers["[2]"] == (False, [1])
    assert markers["[CIT]"][0] and markers["[?]"][0]
    assert [r.title for r in document.references] == [
        "Content-Based Citation Recommendation", "Recommending citations for academic papers",
        "Context-aware citation recommendation",
        "Citation indexes for science: A new dimension in documentation through association of ideas"]
    assert [p.section for p in document.passages][:2] == ["1 Introduction", "1 Introduction"]
    assert document.passages[0].page == 1 and document.passages[-1].page >= 2
    assert all(p.line is None for p in document.passages)
    assert document.passages[0].where == {"page": 1}


def test_pdf_passages_leave_out_front_matter_headers_page_numbers_and_references(pdfs):
    document = read_document(pdfs["one-numbered"])
    text = " ".join(p.text for p in document.passages)
    assert "Proceedings of CITREC" not in text  # the running header of pages 2 and after
    assert "Ada Lovelace" not in text and "We present a reader" not in text
    assert "Bhagavatula" not in text and "705–706" not in text
    for passage in document.passages:
        assert not any(word.isdigit() and len(word) < 3 for word in passage.text.split()), passage.text


def test_pdf_words_hyphenated_at_line_ends_are_joined(pdfs):
    pages, _ = extract_lines(pdfs["one-numbered"].read_bytes())
    broken = [line.text for page in pages for line in page if line.text.endswith("-") and line.size == 10]
    assert broken, "the writer hyphenated no word"
    text = " ".join(p.text for p in read_document(pdfs["one-numbered"]).passages)
    for line in broken:
        head = line.split()[-1][:-1]
        assert f" {head}-" not in text and f"{head}- " not in text
    assert "manuscripts" in text and "information retrieval" in text


def test_pdf_two_columns_author_year(pdfs):
    document = read_document(pdfs["two-author-year"].read_bytes(), "paper.pdf")
    assert document.title == "Reading Whole Drafts for Citation Recommendation"
    sections = [p.section for p in document.passages]
    assert sections == sorted(sections)  # the left column is read before the right one, page after page
    assert sections[0] == "1 Introduction" and sections[-1] == "4 Conclusion"
    markers = markers_of(document)
    assert markers["(Bhagavatula et al., 2018; Garfield, 1955)"] == (False, [0, 1])
    assert markers["He et al. (2010)"] == (False, [2])
    assert markers["van der Berg and Smith (2019b)"] == (False, [4])  # the letter tells 2019a from 2019b
    assert len(document.references) == 5
    assert document.references[3].title == "Particle names in author lists"
    paragraphs = [p.text for p in document.passages if p.section == "3 Method"]
    assert len(paragraphs) == 2 and all(text.count("Citation recommendation systems") == 6 for text in paragraphs)


def column_of_lines(texts: list[tuple[float, str]], page: int = 1, top: float = 700, size: float = 10,
                    width: float = 230) -> list[Line]:
    """Lines of one column as pdfminer gives them: (indent, text) each, 12 points apart, ragged right."""
    return [Line(text=text, x0=56 + indent, x1=56 + indent + min(width - indent, 4.4 * len(text)),
                 y0=top - 12 * n, y1=top - 12 * n + size, size=size, bold=False, page=page)
            for n, (indent, text) in enumerate(texts)]


def test_pdf_reference_running_onto_a_page_of_its_own():
    first_page = column_of_lines([(0, "Garfield, E. (1955). Citation indexes for science: A new"),
                                  (10, "dimension in documentation through association of ideas."),
                                  (0, "He, Q., Pei, J., Kifer, D., Mitra, P., & Giles, L. (2010)."),
                                  (10, "Context-aware citation recommendation. In Proceedings"),
                                  (10, "of WWW (pp. 421–430)."),
                                  (0, "Strohman, T., Croft, W. B., & Jensen, D. (2007). Recom-")])
    second_page = column_of_lines([(10, "mending citations for academic papers. In Proceedings"),
                                   (10, "of SIGIR (pp. 705–706).")], page=2)  # too few lines to show the margin
    lines = first_page + second_page
    measure_columns(lines)
    entries = reference_entries(lines)
    assert [entry.lines[0][:8] for entry in entries] == ["Garfield", "He, Q., ", "Strohman"]
    assert entries[2].text.endswith("Recommending citations for academic papers. In Proceedings of SIGIR (pp. 705–706).")


def test_pdf_paragraph_goes_on_after_a_line_ending_in_an_abbreviation():
    lines = column_of_lines([(12, "Sparse and dense retrievers have been combined"),
                             (0, "in ways (Lin 2021; Lindqvist et al."),  # short, as if the next word did not fit
                             (0, "1997; Liu 2009). Both kinds of evidence help."),
                             (12, "A second paragraph starts with an indent.")])
    measure_columns(lines)
    blocks = make_blocks(lines, 10, frozenset())
    assert [block.text[:12] for block in blocks] == ["Sparse and d", "A second par"]


def test_encrypted_pdf_is_refused(tmp_path):
    path = tmp_path / "locked.pdf"
    write_pdf(path, draft(1, True), password="secret")
    with pytest.raises(DocumentError, match="encrypted"):
        read_document(path)


def test_scanned_pdf_without_text_layer_is_refused(tmp_path):
    path = tmp_path / "scan.pdf"
    write_scanned_pdf(path, ["Reading Whole Drafts", "We present a reader for whole documents."])
    with pytest.raises(DocumentError, match="no text layer"):
        read_document(path)


def test_damaged_pdf_is_refused(pdfs):
    data = pdfs["one-numbered"].read_bytes()
    with pytest.raises(DocumentError, match="damaged|no text layer"):
        read_document(data[:len(data) // 3], "cut.pdf")


# ------------------------------------------------------------------------------------------------ DOCX


def write_docx(path: Path) -> None:
    import docx

    word = docx.Document()
    word.add_paragraph("Citation Places in Word Drafts", style="Title")
    word.add_paragraph("Ada Lovelace, University of Somewhere")
    word.add_heading("Abstract", level=1)
    word.add_paragraph("We read Word drafts and find where they cite.")
    word.add_heading("Introduction", level=1)
    word.add_paragraph("Content-based methods (Bhagavatula et al., 2018) embed the text of papers.")
    word.add_paragraph("Dense retrieval remains a strong baseline for this task [CIT].")
    bold = word.add_paragraph().add_run("Related Work")
    bold.bold = True
    word.add_paragraph("Garfield (1955) proposed citation indexes long ago.")
    word.add_heading("References", level=1)
    for entry in AUTHOR_YEAR_REFERENCES[:3]:
        word.add_paragraph(entry)
    word.save(str(path))


def test_docx(tmp_path):
    path = tmp_path / "draft.docx"
    write_docx(path)
    document = read_document(path)
    assert document.kind == "docx"
    assert document.title == "Citation Places in Word Drafts"
    assert document.abstract == "We read Word drafts and find where they cite."
    assert [p.text[:20] for p in document.passages] == ["Content-based method", "Dense retrieval rema",
                                                        "Garfield (1955) prop"]
    assert [p.line for p in document.passages] == [6, 7, 9]  # paragraph numbers
    assert document.passages[2].section == "Related Work"  # a heading set in bold
    assert markers_of(document) == {"(Bhagavatula et al., 2018)": (False, [0]), "[CIT]": (True, []),
                                    "Garfield (1955)": (False, [1])}
    assert [r.year for r in document.references] == [2018, 1955, 2010]


# ------------------------------------------------------------------------------------------------ LaTeX

TEX = r"""\documentclass{article}
\usepackage{natbib}
\newenvironment{centred}{\begin{center}}{\end{center}}
\title[Short]{Recommending Citations for \emph{Whole} Drafts}
\begin{document}
\maketitle
\begin{abstract}
We read whole drafts~\cite{bhagavatula2018content}.
\end{abstract}

\section{Introduction}
Citation recommendation has a long history \citep[see][p.~3]{he2010context,strohman2007recommending}.
As \citet{bhagavatula2018content} show, embeddings % a comment
work well. Dense retrieval \cite{?} is strong.

A second paragraph with placeholders \cite{} and \cite{TODO} and a key \parencite{nowhere}.
\begin{figure}\caption{A figure \cite{garfield1955}.}\end{figure}
\section{Method}
We follow \textcite[p.~2]{strohman2007recommending} closely here.
\bibliography{refs}
\end{document}
"""
BIB = r"""@inproceedings{bhagavatula2018content, title = {Content-Based Citation Recommendation},
  author = {Bhagavatula, Chandra and Feldman, Sergey}, booktitle = {NAACL-HLT}, year = {2018}}
@inproceedings{he2010context, title = {Context-aware citation recommendation},
  author = {He, Qi and Pei, Jian}, booktitle = {WWW}, year = {2010}}
@inproceedings{strohman2007recommending, title = {Recommending citations for academic papers},
  author = {Strohman, Trevor}, booktitle = {SIGIR}, year = {2007}}
@article{garfield1955, title = {Citation indexes for science}, author = {Garfield, Eugene}, year = {1955}}
@article{uncited2000, title = {Never cited}, author = {Nobody, Anne}, year = {2000}}
"""


def check_latex(document) -> None:
    assert document.kind == "latex"
    assert document.title == "Recommending Citations for Whole Drafts"
    assert document.abstract == r"We read whole drafts \cite{bhagavatula2018content}."
    # cited entries only, in order of first citation (the abstract and a caption count)
    assert [r.key for r in document.references] == ["bhagavatula2018content", "he2010context",
                                                    "strohman2007recommending", "garfield1955"]
    first, second, third = document.passages
    assert (first.line, second.line, third.line) == (12, 16, 19)
    assert (first.section, third.section) == ("Introduction", "Method")
    assert [(m.text, m.placeholder, m.references) for m in first.markers] == [
        (r"\citep[see][p.~3]{he2010context,strohman2007recommending}", False, [1, 2]),
        (r"\citet{bhagavatula2018content}", False, [0]), (r"\cite{?}", True, [])]
    assert [(m.placeholder, m.references) for m in second.markers] == [(True, []), (True, []), (False, [])]
    assert first.text[first.markers[2].start:first.markers[2].end] == r"\cite{?}"
    assert "comment" not in first.text and "A figure" not in " ".join(p.text for p in document.passages)
    assert any("nowhere" in notice for notice in document.notices)
    assert document.source_text.startswith(r"\documentclass")


def test_latex_with_bib_beside_it(tmp_path):
    (tmp_path / "paper.tex").write_text(TEX, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    check_latex(read_document(tmp_path / "paper.tex"))


def test_latex_as_bytes_with_bib_given(tmp_path):
    check_latex(read_document(TEX.encode(), "paper.tex", bib=BIB))
    without = read_document(TEX.encode(), "paper.tex")
    assert without.references == [] and any("no .bib" in notice for notice in without.notices)


def test_latex_with_windows_line_ends_keeps_its_paragraphs_and_lines():
    source = ("\\documentclass{article}\n\\begin{document}\n\\section{Intro}\nFirst paragraph about citation graphs "
              "and retrieval \\cite{a}.\n\n\n\nSecond paragraph about dense retrieval \\cite{b}.\n\\end{document}\n")
    unix = read_document(source.encode(), "a.tex")
    windows = read_document(source.replace("\n", "\r\n").encode(), "a.tex")
    assert [(p.line, p.text) for p in windows.passages] == [(p.line, p.text) for p in unix.passages]
    assert [p.line for p in unix.passages] == [4, 8]


def test_latex_white_space_made_short_keeps_control_spaces():
    source = ("\\documentclass{article}\n\\begin{document}\nMr.\\ \nSmith and Dr.\\\t\nWho wrote about citation graphs."
              "\n\u00a0\n\f\n\nA second paragraph about dense retrieval.\n\\end{document}\n")
    document = read_document(source.encode(), "a.tex")
    assert [(p.line, p.text) for p in document.passages] == [
        (3, "Mr. Smith and Dr. Who wrote about citation graphs."), (9, "A second paragraph about dense retrieval.")]


def test_latex_with_its_own_bibliography():
    tex = TEX.replace("\\bibliography{refs}", "\n".join([
        "\\begin{thebibliography}{9}",
        "\\bibitem[He et al.(2010)]{he2010context} Q.~He and J.~Pei. Context-aware citation recommendation.",
        "  In \\emph{Proc. WWW}, 2010.",
        "\\bibitem{strohman2007recommending} T.~Strohman. Recommending citations for academic papers. SIGIR, 2007.",
        "\\end{thebibliography}"]))
    document = read_document(tex.encode(), "paper.tex")
    assert [r.key for r in document.references] == ["he2010context", "strohman2007recommending"]
    assert document.references[0].title.startswith("Context-aware citation recommendation")
    assert document.passages[0].markers[0].references == [0, 1]
    assert "thebibliography" not in " ".join(p.text for p in document.passages)


def test_zipped_latex_project(tmp_path):
    main = TEX.replace("\\section{Method}\nWe follow \\textcite[p.~2]{strohman2007recommending} closely here.",
                       "\\input{sections/method}").replace("\\bibliography{refs}", "\\bibliography{bib/refs}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("project/notes.tex", "\\section{Notes}\nNot part of the paper.\n")
        archive.writestr("project/main.tex", main)
        archive.writestr("project/sections/method.tex",
                         "\\section{Method}\nWe follow \\textcite[p.~2]{strohman2007recommending} closely here.\n")
        archive.writestr("project/bib/refs.bib", BIB)
        archive.writestr("project/bib/other.bib", "@article{other, title={Other}, year={2001}}")
        archive.writestr("project/figure.png", b"\x89PNG not read")
    document = read_document(buffer.getvalue(), "project.zip")
    assert [r.key for r in document.references][:3] == ["bhagavatula2018content", "he2010context",
                                                        "strohman2007recommending"]
    assert document.passages[-1].section == "Method" and document.passages[-1].markers[0].references == [2]
    assert "Not part of the paper" not in " ".join(p.text for p in document.passages)
    assert document.passages[-1].line == 19  # in the source with \input resolved (source_text)
    assert document.source_text.splitlines()[18].startswith("We follow")


def arxiv_source(members: dict[str, bytes], gzipped: bool = True) -> bytes:
    """A LaTeX project as arXiv serves its source: a tar archive, gzipped."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gzipped else "w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_latex_project_as_arxiv_source():
    main = TEX.replace("\\section{Method}\nWe follow \\textcite[p.~2]{strohman2007recommending} closely here.",
                       "\\input{sections/method}")
    members = {"main.tex": main.encode(), "refs.bib": BIB.encode(), "figure.png": b"\x89PNG" + bytes(300_000),
               "sections/method.tex": b"\\section{Method}\nWe follow \\textcite[p.~2]{strohman2007recommending}.\n"}
    for data, name in ((arxiv_source(members), "2301.01234.tar.gz"), (arxiv_source(members), "2301.01234"),
                       (arxiv_source(members, gzipped=False), "source.tar")):
        document = read_document(data, name)
        assert document.kind == "latex" and document.title == read_document(TEX.encode(), "a.tex").title
        assert [r.key for r in document.references][:3] == ["bhagavatula2018content", "he2010context",
                                                            "strohman2007recommending"]
        assert document.passages[-1].section == "Method" and document.passages[-1].markers[0].references == [2]
    single = gzip.compress(TEX.encode())  # arXiv serves a one-file source as the gzipped .tex
    assert read_document(single, "2301.01234.gz").title == read_document(TEX.encode(), "a.tex").title
    with pytest.raises(DocumentError, match="holds another gzip file"):
        read_document(gzip.compress(single), "twice.gz")
    with pytest.raises(DocumentError, match="holds no .tex file"):
        read_document(arxiv_source({"figure.png": b"\x89PNG"}), "figures.tar.gz")
    with pytest.raises(DocumentError, match="damaged"):
        whole = arxiv_source(members)
        read_document(whole[:len(whole) // 2], "cut.tar.gz")  # a download broken off


def test_latex_that_does_not_parse_is_refused():
    broken = TEX.replace("\\section{Method}", "\\section{Method")
    with pytest.raises(DocumentError, match="does not parse"):
        read_document(broken.encode(), "broken.tex")
    with pytest.raises(DocumentError, match="never closed"):
        read_document(TEX.replace("\\end{document}", "").encode(), "open.tex")


# ------------------------------------------------------------------------------------------------ Markdown, text

MARKDOWN = """---
title: Citations in *Markdown*
---

## Abstract

We read Markdown drafts and find their citation places.

# Introduction

Dense retrieval [CIT] is a strong
baseline (Bhagavatula et al., 2018), and citation-
based expansion helps [2].

```
code [1] is not text
```

- A list item that cites [1].

## References

1. Bhagavatula, C., Feldman, S., Power, R., & Ammar, W. (2018). Content-based citation recommendation. In
   Proceedings of NAACL-HLT (pp. 238–251).
2. Garfield, E. (1955). Citation indexes for science: A new dimension in documentation through association of
   ideas. Science, 122(3159), 108–111.
"""


def test_markdown(tmp_path):
    path = tmp_path / "draft.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    document = read_document(path)
    assert document.kind == "markdown"
    assert document.title == "Citations in Markdown"
    assert document.abstract == "We read Markdown drafts and find their citation places."
    first, item = document.passages
    assert first.line == 11 and first.section == "Introduction"
    assert "citation-based expansion" in first.text  # a compound broken at the line end keeps its hyphen
    assert [(m.text, m.placeholder, m.references) for m in first.markers] == [
        ("[CIT]", True, []), ("(Bhagavatula et al., 2018)", False, [0]), ("[2]", False, [1])]
    assert item.text == "A list item that cites [1]." and item.line == 19
    assert [r.line for r in document.references] == [23, 25] and document.references[1].year == 1955


TEXT = """Reading Drafts Copied from PDFs

Abstract: We read plain text drafts, as copied out of a PDF.

1 Introduction
Citation recommen-
dation has been studied for decades [CIT]. Graph-based methods [1]
work well.

Another paragraph with a placeholder [?] and no reference.

References
[1] E. Garfield, "Citation indexes for science: A new dimension in documentation through association of
ideas," Science, vol. 122, no. 3159, pp. 108–111, 1955.
"""


def test_plain_text(tmp_path):
    path = tmp_path / "draft.txt"
    path.write_text(TEXT, encoding="utf-8")
    document = read_document(path)
    assert document.kind == "text"
    assert document.title == "Reading Drafts Copied from PDFs"
    assert document.abstract == "We read plain text drafts, as copied out of a PDF."
    first, second = document.passages
    assert first.text.startswith("Citation recommendation has been studied for decades [CIT].")
    assert (first.line, first.section, second.line) == (6, "1 Introduction", 10)
    assert [(m.text, m.placeholder, m.references) for m in first.markers] == [("[CIT]", True, []), ("[1]", False, [0])]
    assert document.references[0].line == 13 and document.references[0].year == 1955


def test_plain_text_pasted_without_blank_lines():
    pasted = "\n".join(line for line in TEXT.splitlines() if line.strip())
    document = read_document(pasted.encode(), "pasted.txt")
    assert document.title == "Reading Drafts Copied from PDFs"
    assert document.abstract == "We read plain text drafts, as copied out of a PDF."
    assert document.passages[0].section == "1 Introduction" and document.passages[0].line == 4
    assert markers_of(document) == {"[CIT]": (True, []), "[1]": (False, [0]), "[?]": (True, [])}
    assert len(document.references) == 1  # the two paragraphs run together: no blank line tells them apart


def test_numbers_resolve_to_the_entries_that_print_them_when_reading_lost_or_merged_one():
    text = ("Reading Reference Lists\n\nAbstract: We resolve numbered citations.\n\n1 Introduction\n"
            "Graph methods [1], dense retrieval [3], learned rankers [4] and query expansion [5] all help.\n\n"
            "References\n"
            "[1] A. One. 2001. Citation graphs for recommending references. Graph Venue.\n"
            "[3] C. Three. 2003. Dense retrieval with two encoders. Neural Venue.\n"  # [2] lost in reading
            "[4] D. Four. 2004. Learning to rank with trees. Rank Venue. [5] E. Five. 2005. Query expansion from "
            "feedback. Search Venue.\n")  # [5] run into [4]
    document = read_document(text.encode(), "draft.txt")
    assert [item.number for item in document.references] == [1, 3, 4]
    assert markers_of(document) == {"[1]": (False, [0]), "[3]": (False, [1]), "[4]": (False, [2]),
                                    "[5]": (False, [2])}  # by position, [3] would be [4]'s and [4] nobody's


def test_an_abstract_with_citation_places_and_no_body_is_reviewed_as_the_passage():
    """A user pastes only a title, an abstract with [CIT] and a reference list: its places are not dropped."""
    pasted = ("Recommending citations for a manuscript\n\nAbstract\nWe study how to suggest the papers a draft "
              "should cite. Earlier work used BM25 and neural sentence em-\nbeddings [CIT]. Graph methods rank "
              "pages by their links [1].\n\nReferences\n[1] L. Page, S. Brin, R. Motwani, T. Winograd. The "
              "PageRank citation ranking: bringing order to the web. 1998.\n")
    document = read_document(pasted.encode(), "pasted.txt")
    assert document.abstract.startswith("We study how to suggest")
    [passage] = document.passages
    assert passage.section == "Abstract" and "sentence embeddings [CIT]" in passage.text
    assert [(m.text, m.placeholder, m.references) for m in passage.markers] == [("[CIT]", True, []), ("[1]", False, [0])]
    assert any("citation places in the abstract are reviewed" in n for n in document.notices)
    plain = read_document(pasted.replace(" [CIT]", "").replace(" [1]", "").encode(), "pasted.txt")
    assert not plain.passages and any("No body text was found (only" in n for n in plain.notices)


# ------------------------------------------------------------------------------------------------ markers


def test_markers_in_text():
    references = parse_reference_list("\n".join(AUTHOR_YEAR_REFERENCES))
    text = ("As (Bhagavatula et al., 2018; He et al. 2010) and van der Berg and Smith (2019a) show [3, 5–7] "
            "[0, 1] (founded in 2020) (see Garfield, 1955, p. 4) [@key; @other, p. 3] \\cite{TODO} [CIT].")
    found = [(m.text, m.placeholder, m.references) for m in find_markers(text, references)]
    assert found == [
        ("(Bhagavatula et al., 2018; He et al. 2010)", False, [0, 2]),
        ("van der Berg and Smith (2019a)", False, [3]),
        ("[3, 5–7]", False, [2, 4]),  # 3, 5, 6, 7: only 3 and 5 are in this five-entry list
        ("(see Garfield, 1955, p. 4)", False, [1]),
        ("[@key; @other, p. 3]", False, []),
        ("\\cite{TODO}", True, []),
        ("[CIT]", True, []),
    ]
    for marker in find_markers(text, references):
        assert text[marker.start:marker.end] == marker.text


def test_author_year_surnames_that_look_like_particles():
    references = parse_reference_list("Le, Q. V., & Mikolov, T. (2014). Distributed representations of sentences "
                                      "and documents. In Proceedings of ICML (pp. 1188–1196).\n"
                                      "Mikolov, T., Chen, K., Corrado, G., & Dean, J. (2014). Efficient estimation of "
                                      "word representations. In Proceedings of ICLR (pp. 1–12).")
    found = find_markers("Paragraph vectors (Le and Mikolov 2014; Mikolov et al., 2014) embed text.", references)
    assert [m.references for m in found] == [[0, 1]]


def test_number_ranges():
    assert expand_numbers("3, 5–7") == [3, 5, 6, 7]
    assert expand_numbers("12-14; 2") == [12, 13, 14, 2]
    assert expand_numbers("0, 1") == [] and expand_numbers("7–3") == [] and expand_numbers("1–500") == []


# ------------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("data, name, message", [
    (b"", "empty.pdf", "empty"),
    (b"  \n\n\t ", "blank.txt", "empty"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "figure.pdf", "PNG image"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(200), "old.doc", "old Office file"),
    (bytes(range(256)) * 40, "junk.txt", "binary data"),
    (BIB.encode(), "refs.txt", "BibTeX file"),
    (b"Plain text, not a PDF at all.", "paper.pdf", "named .pdf but is no PDF"),
], ids=["empty", "blank", "png-named-pdf", "old-doc", "binary", "bibtex", "text-named-pdf"])
def test_bad_input_is_refused_with_a_message(data, name, message):
    with pytest.raises(DocumentError, match=message):
        read_document(data, name)


def test_renamed_spreadsheet_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(DocumentError, match="Excel workbook"):
        read_document(buffer.getvalue(), "paper.docx")


def test_zip_without_a_document_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data.csv", "a,b\n1,2\n")
    with pytest.raises(DocumentError, match="no .tex file"):
        read_document(buffer.getvalue(), "project.zip")


def test_huge_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.pdf"
    with open(path, "wb") as handle:  # sparse: nothing is written but its size
        handle.truncate(MAX_BYTES + 1)
    with pytest.raises(DocumentError, match="50 MB"):
        read_document(path)
    assert os.path.getsize(path) == MAX_BYTES + 1


def test_document_with_nothing_in_it_is_refused():
    with pytest.raises(DocumentError, match="empty"):
        read_document(b"\\documentclass{article}\n\\begin{document}\n\\end{document}\n", "empty.tex")
