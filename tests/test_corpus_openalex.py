"""The OpenAlex corpus builder against a real local HTTP server answering from fixtures (tests/fixtures/openalex)."""
from __future__ import annotations

import gzip
import json
from urllib.parse import unquote

import pytest

from recommender.cli import main
from recommender.corpus.loaders import load_corpus
from recommender.corpus.loaders.openalex import rebuild_abstract
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.openalex import OpenAlexDownload, OpenAlexQuery
from recommender.corpus.sources.partial import partial_path
from recommender.corpus.sources.web import JsonClient

from support.fixture_server import Failure, FixtureServer, fixture

SEED_PAGES = {"*": "works_seed_1.json", "c2": "works_seed_2.json", "c3": "works_seed_3.json"}
CITE_PAGES = {"*": "works_cites_1.json", "k2": "works_cites_2.json"}
SEEDS = {"W101", "W102", "W103", "W104", "W105"}  # W106 has neither title nor abstract


def route(request):
    if request.path != "/works":
        return 404, {"error": "no such endpoint"}, {}
    if request.query.get("search") == "bad filter":
        return 400, fixture("openalex", "error_400.json"), {}
    wanted = request.query.get("filter", "")
    cursor = request.query.get("cursor", "*")
    if wanted.startswith("openalex:"):
        return 200, fixture("openalex", "works_refs.json"), {}
    if wanted.startswith("cites:"):
        return 200, fixture("openalex", CITE_PAGES[cursor]), {}
    return 200, fixture("openalex", SEED_PAGES[cursor]), {}


@pytest.fixture
def server():
    with FixtureServer(route) as running:
        yield running


def download(server, out, expand="none", retries=2, **settings):
    query = OpenAlexQuery(search=settings.pop("search", "citation recommendation"))
    return OpenAlexDownload(query, out, expand=expand, api_url=server.url, mailto="reader@example.org", progress=False,
                            client=JsonClient("OpenAlex", retries=retries, backoff=0.0, per_second=50), **settings)


def read_jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_seed_set_is_written_as_a_corpus_the_index_reads(server, tmp_path):
    out = tmp_path / "field.jsonl.gz"
    summary = download(server, out).run()

    loaded = load_corpus(out)
    assert not loaded.problems  # no bad record, no dangling reference
    papers = {p.id: p for p in loaded.papers}
    assert set(papers) == SEEDS and summary.papers == 5
    first = papers["W101"]
    assert first.abstract == ("We score every paper of a collection against the draft's title and abstract and show "
                              "that lexical and dense signals complement each other.")
    assert first.authors == ["Mira Halvorsen", "Tomás Quiroga"] and first.year == 2019
    assert first.venue == "Journal of Fixture Studies" and first.doi == "10.5555/fixture.101"
    assert first.references == ["W102"]  # W201 and W202 are not in a corpus without expansion
    assert papers["W105"].references == ["W101"]
    assert summary.references.kept == 2 and summary.references.outside == 5
    assert not partial_path(out).exists()

    assert [r.query.get("cursor") for r in server.requests] == ["*", "c2", "c3"]
    assert all(r.query["mailto"] == "reader@example.org" and "abstract_inverted_index" in r.query["select"]
               for r in server.requests)
    assert unquote(server.requests[0].query["search"]) == "citation recommendation"


def test_one_hop_along_references_and_citations_closes_the_graph(server, tmp_path):
    out = tmp_path / "field.jsonl"
    summary = download(server, out, expand="both").run()

    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)) == 10  # W105 cites a seed and is a seed: written once
    assert set(ids) == SEEDS | {"W201", "W202", "W203", "W301", "W302"}
    refs = {r["id"]: r["references"] for r in records}
    assert refs["W101"] == ["W102", "W201", "W202"] and refs["W103"] == ["W203"]  # W999: not in OpenAlex
    assert refs["W302"] == ["W101", "W103"] and refs["W202"] == ["W201"]
    assert summary.parts == {"seeds": 5, "referenced": 3, "citing": 2}
    expansion = [r.query["filter"] for r in server.requests if "filter" in r.query]
    assert expansion[0] == "openalex:W201|W202|W203|W999"
    assert expansion[1].startswith("cites:W101|W102|W103|W104|W105")
    assert not load_corpus(out).problems


def test_expansion_stops_at_its_limit(server, tmp_path):
    summary = download(server, tmp_path / "small.jsonl", expand="both", expand_limit=2).run()
    assert summary.parts == {"seeds": 5, "referenced": 2, "citing": 0}
    assert any("--expand-limit 2" in note for note in summary.notes)


def test_limit_caps_the_seed_set(server, tmp_path):
    summary = download(server, tmp_path / "three.jsonl", limit=3).run()
    assert summary.papers == 3
    assert [r.query["per-page"] for r in server.requests] == ["3", "1"]


@pytest.mark.parametrize("failing", [
    lambda r: r.query.get("cursor") == "c3" and "filter" not in r.query,  # the seed set's last page
    lambda r: r.query.get("cursor") == "k2",  # the second page of citing works
], ids=["seed-page", "citations-page"])
def test_an_interrupted_download_resumes_without_duplicates(server, tmp_path, failing):
    out = tmp_path / "field.jsonl.gz"
    server.failures.append(Failure(failing, 503, times=None))
    with pytest.raises(SourceError, match="HTTP 503"):
        download(server, out, expand="both", retries=1).run()
    assert not out.exists() and partial_path(out).exists()
    with partial_path(out).open("a", encoding="utf-8") as handle:  # killed while writing a line
        handle.write('{"record": {"id": "W777", "title": "half')

    server.failures.clear()
    first_run = len(server.requests)
    summary = download(server, out, expand="both").run()

    resumed = server.requests[first_run:]
    assert failing(resumed[0])  # continued at the request that failed, nothing earlier fetched again
    ids = [r["id"] for r in read_jsonl(out)]
    assert len(ids) == len(set(ids)) == summary.papers == 10 and "W777" not in ids
    assert not partial_path(out).exists()


def test_rate_limit_answers_are_retried(server, tmp_path):
    server.failures.append(Failure(lambda r: True, 429, times=1, headers={"Retry-After": "0"}))
    summary = download(server, tmp_path / "field.jsonl").run()
    assert summary.papers == 5
    assert [r.query.get("cursor") for r in server.requests] == ["*", "*", "c2", "c3"]


def test_a_lasting_rate_limit_is_a_clear_error_and_keeps_the_partial(server, tmp_path, capsys):
    server.failures.append(Failure(lambda r: r.query.get("cursor") == "c2", 429, times=None,
                                   headers={"Retry-After": "0"}))
    out = tmp_path / "field.jsonl"
    code = main(["corpus", "openalex", "--search", "citation recommendation", "--api-url", server.url,
                 "--retries", "2", "--out", str(out), "--quiet"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2
    assert "HTTP 429 (too many requests), 3 tries" in error and "run the same command again" in error
    assert partial_path(out).exists() and not out.exists()


def test_refused_filter_and_bad_ids_are_clear_errors(server, tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["corpus", "openalex", "--search", "bad filter", "--api-url", server.url, "--out", str(out)]) == 2
    assert "OpenAlex refused the request (HTTP 400): Invalid query parameters error.: primary_location" in \
        capsys.readouterr().err
    assert main(["corpus", "openalex", "--venue", "Nature", "--out", str(out)]) == 2
    assert "'Nature' is not an OpenAlex source (venue) id" in capsys.readouterr().err
    assert main(["corpus", "openalex", "--years", "2020-2015", "--search", "x", "--out", str(out)]) == 2
    assert "the first year is after the last" in capsys.readouterr().err
    assert main(["corpus", "openalex", "--search", "x", "--out", str(tmp_path / "x.csv")]) == 2
    assert "*.jsonl or *.jsonl.gz" in capsys.readouterr().err


def test_network_down_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["corpus", "openalex", "--search", "x", "--api-url", "http://127.0.0.1:9", "--retries", "0",
                 "--out", str(tmp_path / "x.jsonl"), "--mailto", "a@example.org"])
    error = capsys.readouterr().err.strip()
    assert code == 2 and error.count("\n") == 0
    assert error.startswith("error: cannot reach OpenAlex (127.0.0.1:9): connection refused, 1 try")


def test_a_partial_file_of_other_settings_is_not_mixed_in(server, tmp_path):
    out = tmp_path / "field.jsonl"
    server.failures.append(Failure(lambda r: r.query.get("cursor") == "c2", 500, times=None))
    with pytest.raises(SourceError):
        download(server, out, retries=0).run()
    with pytest.raises(SourceError, match="other settings .*search"):
        download(server, out, search="something else").run()


def test_query_filters_are_composed_for_openalex():
    query = OpenAlexQuery(search="citation", concepts=("C41008148", "https://openalex.org/c2"), venues=("S1",),
                          authors=("A5",), institutions=("I7",), topics=("T9",), year_min=2015, year_max=2020)
    text = unquote(query.works().url)
    for part in ("search=citation", "concepts.id:C41008148|C2", "topics.id:T9", "primary_location.source.id:S1",
                 "authorships.author.id:A5", "authorships.institutions.id:I7", "from_publication_date:2015-01-01",
                 "to_publication_date:2020-12-31"):
        assert part in text
    with pytest.raises(SourceError, match="at least one of --search"):
        OpenAlexQuery(year_min=2020)


def test_abstract_is_rebuilt_in_word_order():
    assert rebuild_abstract({"b": [1, 3], "a": [0], "c": [2]}) == "a b c b"
    assert rebuild_abstract(None) == ""
