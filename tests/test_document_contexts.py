"""Citation contexts collected from full papers (`contexts`, then `train --contexts`): real files (Markdown, a PDF
laid out with wrapped and hyphenated lines), references matched to the small index, every marker written [CIT]."""
import gzip
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bench.pdf_writer import write_pdf
from recommender.documents.read import read_document
from recommender.paper import Paper
from recommender.pipeline.learned import model_path
from recommender.references.match import ReferenceIndex
from recommender.references.parse import parse_reference_line
from recommender.store.index import Index
from recommender.training.document_contexts import (cited_papers, contexts_from_files, document_contexts,
                                                      write_contexts)
from recommender.training.local import read_contexts
from support.documents import SEARCH, VISION

PROJECT = Path(__file__).resolve().parents[1]

def cli(*args):
    return subprocess.run([sys.executable, "-m", "recommender", *map(str, args)], cwd=PROJECT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def papers(tmp_path_factory) -> Path:
    """A folder of papers as a user has them: Markdown, a PDF, a picture named .pdf, and files that are no paper."""
    root = tmp_path_factory.mktemp("papers")
    (root / "search.md").write_text(SEARCH, encoding="utf-8")
    (root / "sub").mkdir()
    write_pdf(root / "sub" / "vision.pdf", VISION)
    (root / "scan.pdf").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (root / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (root / ".cache").mkdir()
    (root / ".cache" / "old.md").write_text(SEARCH, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def references(small_recommender) -> ReferenceIndex:
    return ReferenceIndex(small_recommender.index.all_papers())


def test_a_paragraph_and_its_citing_sentences_become_contexts(papers, references):
    found = document_contexts(read_document(papers / "search.md"), "search.md", references)
    assert (found.references, found.matched) == (3, 2)
    by_kind = {(row["granularity"], row["context"]): row["relevant"] for row in found.rows}
    assert by_kind == {
        ("paragraph", "Term frequency and document length are weighted by BM25 [CIT]. Terms from the top documents "
                      "can be added to the query [CIT], a step that also helps recall [CIT]."): ["ir0", "ir1"],
        ("sentence", "Term frequency and document length are weighted by BM25 [CIT]."): ["ir0"],
        ("sentence", "Terms from the top documents can be added to the query [CIT], a step that also helps recall "
                     "[CIT]."): ["ir1"],
    }  # the paragraph citing only a paper the index lacks, and the one citing nothing, give no context
    row = found.rows[0]
    assert row["citing_title"] == "Ranking for ad hoc search engines"
    assert row["citing_abstract"].startswith("We study ranking functions")
    assert row["citing_id"] == "title:ranking for ad hoc search engines"  # the fold unit: the paper, not the file
    assert row["source"] == "search.md" and row["line"] == 11


def test_a_pdf_laid_out_in_lines_gives_whole_sentences(papers, references):
    found = document_contexts(read_document(papers / "sub" / "vision.pdf"), "vision.pdf", references)
    assert found.matched == 3
    paragraphs = [row for row in found.rows if row["granularity"] == "paragraph"]
    assert [row["relevant"] for row in paragraphs] == [["vision0", "vision1"], ["vision3"]]
    assert paragraphs[0]["context"].startswith("Residual connections let very deep convolutional networks")
    assert "- " not in paragraphs[0]["context"] and paragraphs[0]["context"].count("[CIT]") == 2
    assert paragraphs[0]["page"] == 1
    sentences = [row["relevant"] for row in found.rows if row["granularity"] == "sentence"]
    assert sentences == [["vision0"], ["vision1"]]  # the second paragraph is one sentence: no copy of it


def test_a_paper_the_index_holds_is_not_its_own_citation(references):
    text = SEARCH.replace("Ranking for ad hoc search engines", "Probabilistic relevance weighting with BM25")
    document = read_document(text.encode("utf-8"), "bm25.md")
    found = document_contexts(document, "bm25.md", references)
    assert {row["citing_id"] for row in found.rows} == {"ir0"}  # never a candidate when training on it
    assert all("ir0" not in row["relevant"] for row in found.rows)
    assert [row["relevant"] for row in found.rows if row["granularity"] == "paragraph"] == [["ir1"]]


def test_a_folder_is_searched_and_unreadable_files_are_reported(papers, small_index, tmp_path):
    found = contexts_from_files([papers], Index.load(small_index), progress=False)
    assert [d.name for d in found] == ["scan.pdf", "search.md", "vision.pdf"]  # no .csv, nothing hidden
    assert "PNG image" in found[0].problem and not found[0].rows
    assert found[0].describe().startswith("scan.pdf: skipped (")
    assert found[1].describe() == "search.md: 2 of 3 references in the index; 1 paragraph and 2 sentence contexts"
    (tmp_path / "table.csv").write_text("a,b\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no papers found"):
        contexts_from_files([tmp_path], Index.load(small_index), progress=False)
    with pytest.raises(ValueError, match="does not exist"):
        contexts_from_files([papers / "missing.pdf"], Index.load(small_index), progress=False)
    (tmp_path / "search.md").write_text(SEARCH, encoding="utf-8")  # one paper twice: as Markdown and as text
    (tmp_path / "search.txt").write_text(SEARCH.replace("---\ntitle: ", "").replace("\n---\n", "\n"),
                                         encoding="utf-8")
    twice = contexts_from_files([tmp_path / "search.md", tmp_path / "search.txt"], Index.load(small_index),
                                progress=False)
    assert twice[1].problem == "the same paper as search.md" and not twice[1].rows and len(twice[0].rows) == 3


def test_the_file_written_is_read_back_as_training_contexts(papers, small_index, tmp_path):
    index = Index.load(small_index)
    rows = [row for d in contexts_from_files([papers], index, progress=False) for row in d.rows]
    path = tmp_path / "contexts.jsonl.gz"
    write_contexts(rows, path)
    assert [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()] == rows
    contexts = read_contexts(path, index)
    assert len(contexts.queries) == len(rows) == 7 and contexts.citing_papers == 2
    first = contexts.queries[0].query
    assert first.title == "Ranking for ad hoc search engines" and "[CIT]" in first.context
    assert not list(tmp_path.glob("*.part"))


def test_cli_collects_contexts_then_trains_on_them(papers, index_copy, tmp_path):
    out = tmp_path / "contexts.jsonl"
    proc = cli("contexts", "--index", index_copy, papers, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "wrote 7 contexts from 2 of 3 papers" in proc.stdout
    assert "scan.pdf: skipped" in proc.stderr and "vision.pdf: 3 of 3 references" in proc.stderr
    trained = cli("train", "--index", index_copy, "--contexts", out)
    assert trained.returncode == 0, trained.stderr
    assert "trained on 7 contexts from 2 citing papers" in trained.stdout
    assert model_path(index_copy, local=True).is_file() == ("model written to" in trained.stdout)


def test_cli_writes_nothing_when_no_paper_cites_the_index(index_copy, tmp_path):
    (tmp_path / "other.md").write_text(SEARCH.split("## References")[0] + "## References\n\n"
                                       "1. Nobody, A. (1999). A paper that no index holds. Nowhere.\n", encoding="utf-8")
    out = tmp_path / "contexts.jsonl"
    out.write_text("kept\n", encoding="utf-8")
    proc = cli("contexts", "--index", index_copy, tmp_path / "other.md", "-o", out)
    assert proc.returncode == 2
    assert "no citation contexts" in proc.stderr and "not written" in proc.stderr
    assert out.read_text(encoding="utf-8") == "kept\n"  # an earlier file is not lost
    missing = cli("contexts", "--index", index_copy, tmp_path / "other.md", "-o", tmp_path / "no" / "c.jsonl")
    assert missing.returncode == 2 and "the folder" in missing.stderr and "does not exist" in missing.stderr


def test_a_latex_project_is_read_from_its_main_file(small_index, tmp_path):
    (tmp_path / "sections").mkdir()
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\title{Ranking for ad hoc search engines}\n\\begin{document}\n\\maketitle\n"
        "\\input{sections/intro}\n\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    (tmp_path / "sections" / "intro.tex").write_text(
        "\\section{Introduction}\nTerm frequency and document length are weighted by BM25~\\cite{sparck2010}.\n"
        "Dual encoders retrieve passages \\cite{?}.\n", encoding="utf-8")
    (tmp_path / "refs.bib").write_text(
        "@inproceedings{sparck2010, title={Probabilistic relevance weighting with {BM25}},\n"
        "  author={Sparck Jones, Karen}, year={2010}, booktitle={SIGIR}}\n", encoding="utf-8")
    found = contexts_from_files([tmp_path], Index.load(small_index), progress=False)
    assert [d.name for d in found] == ["main.tex"]  # the section file is read through \input, not on its own
    rows = [(row["granularity"], row["context"], row["relevant"]) for row in found[0].rows]
    assert rows == [
        ("paragraph", "Term frequency and document length are weighted by BM25 [CIT]. Dual encoders retrieve "
                      "passages [CIT].", ["ir0"]),
        ("sentence", "Term frequency and document length are weighted by BM25 [CIT].", ["ir0"])]
    downloads = tmp_path.parent / "downloads"  # the same project as arXiv serves its source
    downloads.mkdir()
    with tarfile.open(downloads / "2301.01234.tar.gz", "w:gz") as archive:
        for name in ("main.tex", "sections/intro.tex", "refs.bib"):
            archive.add(tmp_path / name, arcname=name)
    found = contexts_from_files([downloads], Index.load(small_index), progress=False)
    assert [d.name for d in found] == ["2301.01234.tar.gz"]
    assert [(row["granularity"], row["context"], row["relevant"]) for row in found[0].rows] == rows


def test_of_a_paper_and_its_reprint_the_reference_cites_the_one_of_its_year():
    papers = [Paper(id="orig", title="Relevance based language models", authors=["Victor Lavrenko"], year=2001),
              Paper(id="reprint", title="Relevance based language models", authors=["Victor Lavrenko"], year=2017)]
    references = ReferenceIndex(papers)
    item = parse_reference_line("[4] V. Lavrenko and W. B. Croft. 2001. Relevance based language models. In SIGIR.")
    assert references.match_item(item) == {"orig", "reprint"}  # the reviewer excludes both
    assert cited_papers(item, references) == {"orig"}  # a training positive is the one cited
    undated = parse_reference_line("[4] V. Lavrenko. Relevance based language models. SIGIR.")
    assert cited_papers(undated, references) == {"orig", "reprint"}
