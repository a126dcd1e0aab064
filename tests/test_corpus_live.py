"""One real call per corpus source. The network ones skip without internet; the file ones need the real files,
named by an environment variable: ARXIV_SNAPSHOT (arxiv-metadata-oai-snapshot.json), S2_DATASETS_DIR (a folder of
Datasets shards), ZOTERO_SQLITE (a real zotero.sqlite; only a copy of it is read)."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from recommender.corpus.loaders import load_corpus
from recommender.corpus.sources.arxiv_snapshot import ArxivFilter, build_from_snapshot
from recommender.corpus.sources.openalex import OpenAlexDownload, OpenAlexQuery
from recommender.corpus.sources.semantic_scholar import SemanticScholarDownload
from recommender.corpus.sources.semantic_scholar_datasets import DatasetFilter, build_from_datasets
from recommender.corpus.sources.web import JsonClient
from recommender.corpus.sources.zotero import build_from_zotero


def reachable(host: str) -> bool:
    try:
        socket.create_connection((host, 443), timeout=3).close()
        return True
    except OSError:
        return False


def needs_host(host: str):
    if not reachable(host):
        pytest.skip(f"{host} cannot be reached (no internet here)")


def needs_file(variable: str) -> Path:
    value = os.environ.get(variable)
    if not value or not Path(value).exists():
        pytest.skip(f"set {variable} to a real file or folder to run this test")
    return Path(value)


def test_openalex_live(tmp_path):
    needs_host("api.openalex.org")
    out = tmp_path / "live.jsonl.gz"
    summary = OpenAlexDownload(OpenAlexQuery(search="citation recommendation", year_min=2018), out, limit=5,
                               expand="refs", expand_limit=5, progress=False,
                               client=JsonClient("OpenAlex", retries=2)).run()
    loaded = load_corpus(out)
    assert summary.parts["seeds"] == 5 and len(loaded.papers) == summary.papers and not loaded.errors
    assert all(p.id.startswith("W") for p in loaded.papers)
    assert any(p.references for p in loaded.papers)  # the expansion joined references to the seeds


def test_semantic_scholar_live(tmp_path):
    needs_host("api.semanticscholar.org")
    out = tmp_path / "live.jsonl"
    summary = SemanticScholarDownload(["10.18653/v1/N19-1423"], out, expand="refs", expand_limit=5, progress=False,
                                      client=JsonClient("Semantic Scholar", per_second=1.0, retries=3)).run()
    loaded = load_corpus(out)
    assert summary.parts["seeds"] == 1 and not loaded.errors
    bert = next(p for p in loaded.papers if p.doi == "10.18653/v1/n19-1423")
    assert "BERT" in bert.title and bert.references


def test_arxiv_snapshot_real_file(tmp_path):
    snapshot = needs_file("ARXIV_SNAPSHOT")
    out = tmp_path / "cs-cl.jsonl"
    summary = build_from_snapshot(snapshot, out, ArxivFilter(categories=("cs.CL",), year_min=2019, year_max=2019),
                                  limit=200, progress=False)
    loaded = load_corpus(out)
    assert summary.papers == len(loaded.papers) == 200 and not loaded.errors
    assert all(p.year == 2019 and "cs.CL" in p.extra["categories"] for p in loaded.papers)


def test_s2_datasets_real_files(tmp_path):
    folder = needs_file("S2_DATASETS_DIR")
    out = tmp_path / "cs.jsonl"
    summary = build_from_datasets(folder, out, DatasetFilter(fields_of_study=("Computer Science",)), limit=1000,
                                  progress=False)
    assert summary.papers == len(load_corpus(out).papers) > 0


def test_zotero_real_library(tmp_path):
    library = needs_file("ZOTERO_SQLITE")
    before = library.stat().st_mtime_ns
    summary = build_from_zotero(library, tmp_path / "zotero.jsonl")
    assert summary.papers > 0 and library.stat().st_mtime_ns == before
