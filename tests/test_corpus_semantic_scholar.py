"""Semantic Scholar: the Graph API builder against a real local HTTP server (tests/fixtures/semantic_scholar),
and the Datasets builder on small shards (tests/fixtures/s2_datasets)."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from recommender.cli import main
from recommender.corpus.loaders import load_corpus
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.partial import partial_path
from recommender.corpus.sources.semantic_scholar import SemanticScholarDownload, seed_id
from recommender.corpus.sources.semantic_scholar_datasets import DatasetFilter, build_from_datasets
from recommender.corpus.sources.web import JsonClient

from support.fixture_server import FIXTURES, Failure, FixtureServer, fixture

GRAPH = fixture("semantic_scholar", "graph.json")
SHA = {p["corpusId"]: p["paperId"] for p in GRAPH["papers"]}


def _find(paper_id: str):
    for paper in GRAPH["papers"]:
        external = {f"{k}:{v}".lower() for k, v in paper["externalIds"].items() if v}
        if paper_id.lower() in external | {paper["paperId"], f"corpusid:{paper['corpusId']}"}:
            return paper
    return None


def route(request):
    if request.method == "POST" and request.path == "/graph/v1/paper/batch":
        if "foo" in request.query.get("fields", ""):
            return 400, fixture("semantic_scholar", "error_400.json"), {}
        return 200, [_find(i) for i in request.body["ids"]], {}
    if request.method == "GET" and request.path.endswith("/citations"):
        paper = _find(request.path.split("/")[-2])
        citing = GRAPH["citations"].get(paper["paperId"], []) if paper else []
        offset, limit = int(request.query["offset"]), int(request.query["limit"])
        page = {"offset": offset, "data": [{"citingPaper": {"paperId": p}} for p in citing[offset:offset + limit]]}
        if offset + limit < len(citing):
            page["next"] = offset + limit
        return 200, page, {}
    return 404, {"error": "Not found"}, {}


@pytest.fixture
def server():
    with FixtureServer(route) as running:
        yield running


def download(server, out, seeds=("DOI:10.5555/s2.seed1", "CorpusId:1002", "arXiv:2201.00003"), retries=2, **kw):
    client = JsonClient("Semantic Scholar", per_second=50, retries=retries, backoff=0.0)
    return SemanticScholarDownload(seeds, out, api_url=server.url, client=client, progress=False, **kw)


def test_seed_set_with_references_and_citations(server, tmp_path):
    out = tmp_path / "s2.jsonl.gz"
    summary = download(server, out, expand="both").run()

    loaded = load_corpus(out)
    assert not loaded.problems
    papers = {p.id: p for p in loaded.papers}
    seeds = {"CorpusId:1001", "CorpusId:1002", "CorpusId:1003"}
    assert set(papers) == seeds | {"CorpusId:2001", "CorpusId:2002", "CorpusId:2003", "CorpusId:3001",
                                   "CorpusId:3002", "CorpusId:3003"}  # 3004 has no text; 7777 is unknown
    assert papers["CorpusId:1001"].references == ["CorpusId:2001", "CorpusId:2002", "CorpusId:1002"]
    assert papers["CorpusId:3002"].references == ["CorpusId:1001", "CorpusId:1003", "CorpusId:2002"]
    assert papers["CorpusId:1001"].doi == "10.5555/s2.seed1" and papers["CorpusId:1003"].extra["arxiv"] == "2201.00003"
    assert papers["CorpusId:1002"].authors == ["Bo Chen", "Carla Mendes"]
    assert summary.parts == {"seeds": 3, "referenced": 3, "citing": 3}
    batch = [r for r in server.requests if r.method == "POST"]
    assert batch[0].body == {"ids": ["DOI:10.5555/s2.seed1", "CorpusId:1002", "ARXIV:2201.00003"]}
    assert "references.paperId" in batch[0].query["fields"]
    assert not partial_path(out).exists()


def test_citation_pages_resume_after_a_failure(server, tmp_path):
    out = tmp_path / "s2.jsonl"
    server.failures.append(Failure(lambda r: r.path.endswith("/citations") and r.query["offset"] != "0", 502,
                                   times=None))
    with pytest.raises(SourceError, match="HTTP 502"):  # the first seed has 5 citing papers: three pages of 2
        download(server, out, expand="cites", retries=0, citation_page=2).run()
    assert partial_path(out).exists()
    server.failures.clear()
    before = len(server.requests)
    summary = download(server, out, expand="cites", citation_page=2).run()
    resumed = server.requests[before]
    assert resumed.path.endswith("/CorpusId:1001/citations") and resumed.query["offset"] == "2"
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == summary.papers == 6


def test_unknown_seeds_are_reported(server, tmp_path):
    summary = download(server, tmp_path / "s2.jsonl", seeds=("10.5555/s2.seed1", "10.5555/nowhere")).run()
    assert summary.papers == 1
    assert summary.notes == ["1 seed ids were not found: DOI:10.5555/nowhere"]


def test_api_key_is_sent_when_set(server, tmp_path, monkeypatch):
    monkeypatch.setenv("S2_API_KEY", "fixture-key")
    out = tmp_path / "s2.jsonl"
    assert main(["corpus", "semantic-scholar", "--seed", "CorpusId:1002", "--api-url", server.url, "--out", str(out),
                 "--quiet"]) == 0
    assert server.requests[0].headers.get("x-api-key") == "fixture-key"


def test_seed_ids_are_normalised_and_bad_ones_refused():
    assert seed_id("https://doi.org/10.1000/ABC") == "DOI:10.1000/abc"
    assert seed_id("2201.00003v2") == "ARXIV:2201.00003v2"
    assert seed_id("CorpusId:42") == "CorpusId:42"
    assert seed_id("A" * 40) == "a" * 40
    with pytest.raises(SourceError, match="not a paper id"):
        seed_id("Attention is all you need")


def test_seed_file_and_errors_on_the_command_line(server, tmp_path, capsys):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# my seeds\n10.5555/s2.seed1\nCorpusId:1002  # the reviewer study\n\n", encoding="utf-8")
    out = tmp_path / "s2.jsonl"
    assert main(["corpus", "semantic-scholar", "--seed-file", str(seeds), "--api-url", server.url, "--out", str(out),
                 "--quiet"]) == 0
    assert "wrote 2 papers" in capsys.readouterr().out
    assert main(["corpus", "semantic-scholar", "--out", str(out)]) == 2
    assert "give the seed papers" in capsys.readouterr().err
    assert main(["corpus", "semantic-scholar", "--seed-file", str(tmp_path / "none.txt"), "--out", str(out)]) == 2
    assert "cannot read it" in capsys.readouterr().err


# ---------------------------------------------------------------------- Datasets files


@pytest.fixture
def shards(tmp_path) -> Path:
    """The fixture shards, one of them gzipped and renamed as downloads are (no extension)."""
    folder = tmp_path / "s2"
    shutil.copytree(FIXTURES / "s2_datasets", folder)
    plain = folder / "papers" / "part-001.jsonl"
    with gzip.open(folder / "papers" / "20240101_part_1", "wb") as handle:
        handle.write(plain.read_bytes())
    plain.unlink()
    return folder


def test_datasets_filtered_by_field_and_years(shards, tmp_path):
    out = tmp_path / "cs.jsonl.gz"
    summary = build_from_datasets(shards, out, DatasetFilter(fields_of_study=("computer science",), year_min=2005),
                                  progress=False)
    loaded = load_corpus(out)
    assert not loaded.problems
    papers = {p.id: p for p in loaded.papers}
    # 13 is biology, 14 is too old, 16 has no title, 17 has no year
    assert set(papers) == {"CorpusId:11", "CorpusId:12", "CorpusId:15"} and summary.papers == 3
    assert papers["CorpusId:11"].abstract == ("Expanding a query with the papers its best matches cite improves recall "
                                              "on small corpora.")
    assert papers["CorpusId:12"].abstract == "" and papers["CorpusId:12"].venue == "Fixture Letters"
    assert papers["CorpusId:15"].references == ["CorpusId:11", "CorpusId:12"]
    assert papers["CorpusId:11"].references == [] and papers["CorpusId:11"].doi == "10.5555/ds.11"
    assert summary.references.kept == 3


def test_datasets_by_venue_and_limit(shards, tmp_path):
    out = tmp_path / "venue.jsonl"
    summary = build_from_datasets(shards, out, DatasetFilter(venues=("fixture retrieval  review",)), progress=False)
    assert {json.loads(line)["id"] for line in out.read_text().splitlines()} == \
        {"CorpusId:11", "CorpusId:14", "CorpusId:15"}
    assert summary.references.kept == 2  # 11 -> 14, 15 -> 11
    summary = build_from_datasets(shards, out, DatasetFilter(), limit=2, progress=False)
    assert summary.papers == 2


def test_datasets_errors(shards, tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["corpus", "s2-datasets", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "not a folder" in capsys.readouterr().err
    damaged = shards / "papers" / "20240101_part_1"
    damaged.write_bytes(damaged.read_bytes()[:-20])
    assert main(["corpus", "s2-datasets", str(shards), "--field", "Computer Science", "--out", str(out),
                 "--quiet"]) == 2
    assert "cut short" in capsys.readouterr().err and not out.exists()
    shutil.rmtree(shards / "papers")
    assert main(["corpus", "s2-datasets", str(shards), "--out", str(out)]) == 2
    assert "no `papers` shards" in capsys.readouterr().err
    assert not list(tmp_path.glob(".x.jsonl*"))  # no spool or temporary file left
