"""The citation language server (`python -m recommender lsp`), run as a real subprocess over stdio and driven
through an LSP client on the small test index: completion in LaTeX and Markdown, accepting a paper (the .bib
edit), hover, diagnostics and their code actions. Also the pieces it reads a document with (citations at a
cursor, the query for a citation, the draft), and how a newer request supersedes a stale one."""
from __future__ import annotations

import asyncio
import os
import sys
import threading
from pathlib import Path

import bibtexparser
import pytest
from lsprotocol import types

from recommender.serve.citations import citation_at, find_citations
from recommender.serve.context import citation_query, draft_of
from recommender.documents.limits import MAX_TEXT_CHARS
from recommender.serve.lsp import ADD_COMMAND, CLAIM_CODE, TOO_LARGE_CODE, CitationServer, Superseded
from recommender.serve.lsp_client import StdioClient, position_of

REPO = Path(__file__).resolve().parents[1]
BIB = """@inproceedings{sparck-bm25,
  title = {Probabilistic relevance weighting with {BM25}},
  author = {Sparck Jones, Karen},
  booktitle = {SIGIR},
  year = {2010},
  doi = {10.9999/ir.0}
}

@inproceedings{liu-ltr,
  title = {Learning to rank documents with gradient boosted trees},
  author = {Liu, Tie-Yan},
  booktitle = {SIGIR},
  year = {2012},
  doi = {10.9999/ir.2}
}

@book{pasta-cooking,
  title = {The complete guide to cooking fresh pasta at home},
  author = {Cook, Anna},
  year = {1999}
}
"""
TEX = r"""\documentclass{article}
\title{Retrieval for question answering}
\begin{document}
\maketitle
\begin{abstract}
We study how passages are retrieved for open-domain questions.
\end{abstract}
\section{Introduction}
Boosted regression trees rank documents from features such as click data \citep{liu-ltr}.
Questions and passages are embedded by two transformer encoders and retrieved by inner product search \cite{

The BM25 ranking function weights term frequency and document length for ad hoc retrieval \citet{

It has been widely shown that residual connections let very deep convolutional networks train well on ImageNet.

\bibliography{refs}
\end{document}
"""
MARKDOWN = """---
title: Search engines that remember
abstract: How query reformulation improves recall.
bibliography: refs.bib
---

# Introduction

Terms from the top retrieved documents are added to the query to improve recall in search engines [@
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "refs.bib").write_text(BIB, encoding="utf-8")
    (root / "main.tex").write_text(TEX, encoding="utf-8")
    (root / "paper.md").write_text(MARKDOWN, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def client(small_index, project):
    """One server process for the module, initialised on the project and with main.tex open."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with StdioClient([sys.executable, "-m", "recommender", "lsp", "--index", str(small_index)], cwd=REPO,
                     env=env) as client:
        client.initialize(project)
        client.open(project / "main.tex", TEX, "latex")
        yield client


def at(text: str, marker: str) -> tuple[int, int]:
    """The LSP position right after the first `marker` in `text`."""
    return position_of(text, text.index(marker) + len(marker))


def ids(completion: types.CompletionList) -> list[str]:
    return [item.data["paper_id"] for item in completion.items if isinstance(item.data, dict)]


def test_latex_completion_offers_the_paper_and_accepting_it_adds_its_bibtex_entry(client, project, corpus_records):
    uri = (project / "main.tex").as_uri()
    line, character = at(TEX, "inner product search \\cite{")
    completion = client.completion(uri, line, character)
    assert "ir3" in ids(completion)[:3]  # "Dense passage retrieval with dual encoders"
    item = next(item for item in completion.items if item.data["paper_id"] == "ir3")
    assert item.text_edit.new_text == item.label and item.text_edit.range.start == types.Position(line, character)
    assert "Karpukhin" in item.detail and "SIGIR" in item.detail and "Why:" in item.documentation.value

    resolved = client.request(types.COMPLETION_ITEM_RESOLVE, item, types.CompletionItem)
    assert "```bibtex" in resolved.documentation.value
    assert item.command.command == ADD_COMMAND
    assert client.request(types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(
        item.command.command, arguments=item.command.arguments)) is True

    edit = client.applied_edits[-1]
    (bib_uri, changes), = edit.changes.items()
    assert bib_uri == (project / "refs.bib").as_uri()
    (change,) = changes
    assert change.range.start == types.Position(BIB.count("\n"), 0)  # appended
    library = bibtexparser.parse_string(BIB + change.new_text)
    assert not library.failed_blocks
    entry = library.entries_dict[item.label]
    title = next(r["title"] for r in corpus_records if r["id"] == "ir3")
    assert entry.fields_dict["title"].value == title
    assert entry.fields_dict["doi"].value == "10.9999/ir.3"


def test_bib_keys_come_first_and_cited_papers_are_not_suggested(client, project):
    uri = (project / "main.tex").as_uri()
    completion = client.completion(uri, *at(TEX, "ad hoc retrieval \\citet{"))
    first = completion.items[0]
    assert first.label == "sparck-bm25" and "in refs.bib" in first.detail and first.command is None
    assert "ir2" not in ids(completion)  # cited above as liu-ltr
    assert all("ir2" not in ids(client.completion(uri, *at(TEX, marker)))
               for marker in ("inner product search \\cite{",))

    typed = TEX.replace("ad hoc retrieval \\citet{", "ad hoc retrieval \\citet{liu")
    client.replace(uri, typed)
    completion = client.completion(uri, *at(typed, "\\citet{liu"))
    assert "liu-ltr" in [item.label for item in completion.items]  # typed: a cited key still completes
    client.replace(uri, TEX)


def test_hover_shows_the_paper_card(client, project):
    uri = (project / "main.tex").as_uri()
    line, character = at(TEX, "\\citep{liu-")
    hover = client.request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(line, character)), types.Hover)
    text = hover.contents.value
    assert "Learning to rank documents with gradient boosted trees" in text
    assert "Tie-Yan Liu" in text and "2012" in text and "Closeness to this sentence" in text


def test_uncited_claim_diagnostic_and_its_code_action(client, project):
    uri = (project / "main.tex").as_uri()
    bib_uri = (project / "refs.bib").as_uri()
    client.wait_for(lambda: client.diagnostics.get(uri) and bib_uri in client.diagnostics, timeout=120)
    claim_line = TEX[:TEX.index("It has been widely shown")].count("\n")
    claims = [d for d in client.diagnostics[uri] if d.code == CLAIM_CODE]
    assert [d.range.start.line for d in claims] == [claim_line]
    assert all(d.severity in (types.DiagnosticSeverity.Information, types.DiagnosticSeverity.Hint)
               for diagnostics in client.diagnostics.values() for d in diagnostics)
    (unmatched,) = client.diagnostics[bib_uri]
    assert "pasta-cooking" in unmatched.message and unmatched.severity == types.DiagnosticSeverity.Hint

    actions = client.request(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionParams(
        types.TextDocumentIdentifier(uri), claims[0].range, types.CodeActionContext(claims)),
        list[types.CodeAction])
    assert actions and "Deep residual networks" in actions[0].title
    (edit,) = [e for e in actions[0].edit.changes[uri]]
    assert edit.new_text.startswith("~\\cite{") and edit.range.start.line == claim_line
    assert (project / "refs.bib").as_uri() in actions[0].edit.changes  # the paper's entry in the same edit


def test_markdown_pandoc_completion(client, project):
    path = project / "paper.md"
    uri = client.open(path, MARKDOWN, "markdown")
    line, character = at(MARKDOWN, "search engines [@")
    completion = client.completion(uri, line, character)
    assert "ir1" in ids(completion)[:3]  # "Query expansion with pseudo relevance feedback"
    item = next(item for item in completion.items if item.data["paper_id"] == "ir1")
    assert item.text_edit.new_text == item.label and item.command.arguments[0] == (project / "refs.bib").as_uri()


def test_a_document_too_large_for_claims_gets_one_diagnostic_saying_so(client, project):
    text = "It has been widely shown that residual connections train deep networks. " * (MAX_TEXT_CHARS // 70)
    uri = client.open(project / "huge.md", text, "markdown")
    client.wait_for(lambda: client.diagnostics.get(uri), timeout=60)
    (only,) = client.diagnostics[uri]
    assert only.code == TOO_LARGE_CODE and f"{len(text):,} characters" in only.message
    assert f"{MAX_TEXT_CHARS:,}" in only.message


# ---------------------------------------------------------------------- reading a document at a cursor


@pytest.mark.parametrize("command", ["cite", "citep", "citet", "parencite", "textcite", "autocite"])
def test_citation_commands_with_several_keys(command):
    text = f"As shown \\{command}[p.~3]{{smith2020, jo}} here."
    site = citation_at(text, text.index("jo") + 2)
    assert site.prefix == "jo" and site.citation.key_texts == ["smith2020", "jo"]
    assert citation_at(text, text.index("here")) is None
    typing = f"As shown \\{command}{{"
    assert citation_at(typing, len(typing)).prefix == ""


def test_pandoc_citations():
    text = "As [see @doe99, p. 3; @ro] and @bare say, mail me@example.org [@"
    assert [c.key_texts for c in find_citations(text, pandoc=True)] == [["doe99", "ro"], ["bare"], [""]]
    assert citation_at(text, text.index("@ro") + 3, pandoc=True).prefix == "ro"
    assert citation_at(text, len(text), pandoc=True).prefix == ""
    assert citation_at(text, text.index("p. 3"), pandoc=True) is None


def test_citation_query_marks_the_cursor_and_removes_other_citations():
    query = citation_query(TEX, TEX.index("inner product search \\cite{") + len("inner product search \\cite{"))
    assert query.context == ("Boosted regression trees rank documents from features such as click data. Questions "
                             "and passages are embedded by two transformer encoders and retrieved by inner product "
                             "search [CIT]")
    assert (query.title, query.abstract) == ("Retrieval for question answering",
                                             "We study how passages are retrieved for open-domain questions.")
    long = " ".join(f"Sentence number {i} is about retrieval." for i in range(200))
    context = citation_query(long, long.index("number 100 ") + len("number 100")).context
    assert "number 100 [CIT] is about" in context and len(context) <= 1_600 and context.startswith("Sentence")
    assert citation_query("One paragraph.\n\nAnother one here", 26).context == "Another one [CIT] here"


def test_draft_of():
    assert draft_of(MARKDOWN) == ("Search engines that remember", "How query reformulation improves recall.")
    assert draft_of("Plain text without a title.") == ("", "")


def test_a_newer_request_supersedes_a_stale_one(small_recommender):
    server = CitationServer(small_recommender)
    release = threading.Event()

    async def two_requests():
        blocked = asyncio.ensure_future(server._run(release.wait))  # the engine thread is busy: both wait
        stale = asyncio.ensure_future(server._newest_only(("completion", "doc"), lambda: "stale"))
        fresh = asyncio.ensure_future(server._newest_only(("completion", "doc"), lambda: "fresh"))
        await asyncio.sleep(0.05)
        release.set()
        await blocked
        return await asyncio.gather(stale, fresh, return_exceptions=True)

    stale, fresh = asyncio.run(two_requests())
    assert isinstance(stale, Superseded) and fresh == "fresh"
