"""The reference check's online sources (OpenAlex, Crossref) against a real local HTTP server answering from recorded
responses in the APIs' documented shapes (tests/fixtures/online); the two live tests at the end skip without
internet. No other test here reaches the network."""
from __future__ import annotations

import json
import socket
import time
from types import SimpleNamespace
from urllib.parse import unquote

import pytest
import requests

from recommender.references import online
from recommender.references.check import Record, Retraction, Source
from recommender.references.online import (Budget, CrossrefSource, OpenAlexSource, ResponseCache, online_sources)
from recommender.references.parse import ReferenceItem, parse_reference_line

from support import fixture_server
from support.fixture_server import Failure, FixtureServer, fixture

MAIL = "reader@example.org"
OPENALEX_DOIS = {"10.5555/online.3001": "work_doi.json", "10.48550/arxiv.2401.99901": "work_arxiv.json",
                 "10.5555/online.3005": "work_retracted.json"}
CROSSREF_DOIS = {"10.5555/online.3001": "work_doi.json", "10.5555/online.3005": "work_retracted.json",
                 "10.5555/online.3006": "work_notice.json", "10.5555/online.3007": "work_concern.json"}
CONTEXT_REFERENCE = ("[4] Lindqvist O, Raman P, Whitfield D. Citation context windows for recommendation. "
                     "Proceedings of the Fixture Workshop, 2019.")


def route(request):
    path = unquote(request.path)
    if path.startswith("/openalex/works/doi:"):
        name = OPENALEX_DOIS.get(path.removeprefix("/openalex/works/doi:").lower())
        if name is None:
            return 404, fixture("online", "openalex", "error_404.json"), {}
        return 200, fixture("online", "openalex", name), {}
    if path == "/openalex/works":
        found = "citation context windows" in request.query.get("filter", "")
        return 200, fixture("online", "openalex",
                            "works_title_search.json" if found else "works_title_search_empty.json"), {}
    if path.startswith("/crossref/works/"):
        name = CROSSREF_DOIS.get(path.removeprefix("/crossref/works/").lower())
        if name is None:
            return 404, "Resource not found.", {}  # Crossref's 404 is this plain text
        return 200, fixture("online", "crossref", name), {}
    if path == "/crossref/works":
        query = request.query.get("query.bibliographic", "").lower()
        name = "works_query_notice.json" if "image duplication" in query else "works_query.json"
        return 200, fixture("online", "crossref", name), {}
    return 404, {"error": "no such endpoint"}, {}


@pytest.fixture
def server():
    with FixtureServer(route) as running:
        yield running


def make_sources(server, tmp_path, *, budget_s=30.0, clock=time.time, backoff=0.05):
    cache = ResponseCache(tmp_path / "cache.sqlite3", 86400.0, clock=clock)
    budget = Budget(budget_s)
    return (OpenAlexSource(f"{server.url}/openalex", cache, budget, mailto=MAIL, api_key="fixture-key",
                           per_second=200, backoff=backoff),
            CrossrefSource(f"{server.url}/crossref", cache, budget, mailto=MAIL, per_second=200, backoff=backoff))


def api_urls(server):
    return {"openalex": f"{server.url}/openalex", "crossref": f"{server.url}/crossref"}


# ---------------------------------------------------------------------- OpenAlex


def test_openalex_doi_hit_in_the_polite_pool(server, tmp_path):
    openalex, _ = make_sources(server, tmp_path)
    item = ReferenceItem(raw="...", title="Checking reference lists against open records: a field study",
                         doi="10.5555/online.3001", year=2021)

    records = openalex.lookup(item)

    assert records == [Record(title="Checking reference lists against open records: a field study",
                              authors=("Mira Halvorsen", "Tomás Quiroga"), year=2021,
                              venue="Journal of Fixture Studies", doi="10.5555/online.3001", arxiv="",
                              source="OpenAlex", url="https://openalex.org/W3001")]
    (request,) = server.requests  # the DOI found the title: no search
    assert request.path == "/openalex/works/doi:10.5555/online.3001"
    assert request.query["mailto"] == MAIL and request.query["api_key"] == "fixture-key"
    assert set(request.query["select"].split(",")) == set(OpenAlexSource.fields)
    assert MAIL in request.headers["User-Agent"]


def test_openalex_title_search(server, tmp_path):
    openalex, _ = make_sources(server, tmp_path)

    records = openalex.lookup(ReferenceItem(raw="...", title="Citation Context Windows, for Recommendation"))

    assert [r.title for r in records] == ["Citation context windows for recommendation",
                                          "Citation context windows for recommendation revisited"]
    assert records[0].arxiv == "1905.99903"  # from the arXiv location
    assert records[0].venue == "Proceedings of the Fixture Workshop" and records[1].venue == ""
    (request,) = server.requests
    assert request.path == "/openalex/works"
    assert request.query["filter"] == "title.search:citation context windows for recommendation"
    assert request.query["per-page"] == "5"


def test_openalex_arxiv_lookup_through_the_datacite_doi(server, tmp_path):
    openalex, _ = make_sources(server, tmp_path)

    records = openalex.lookup(ReferenceItem(raw="...", title="Fabricated references in generated manuscripts",
                                            arxiv="2401.99901"))

    assert [(r.arxiv, r.doi, r.venue, r.year) for r in records] == [
        ("2401.99901", "10.48550/arxiv.2401.99901", "arXiv (Cornell University)", 2024)]
    assert [unquote(r.path) for r in server.requests] == ["/openalex/works/doi:10.48550/arxiv.2401.99901"]


def test_openalex_retraction_flag(server, tmp_path):
    openalex, _ = make_sources(server, tmp_path)

    (record,) = openalex.lookup(ReferenceItem(raw="...", title="Image duplication in a fixture cell line study",
                                              doi="10.5555/online.3005"))

    assert record.retraction == Retraction(nature="retraction", date="", notice_doi="", source="OpenAlex")


def test_an_unknown_doi_and_an_unknown_title_are_an_answer_not_a_failure(server, tmp_path):
    openalex, crossref = make_sources(server, tmp_path)
    item = ReferenceItem(raw="Nobody N. A paper nobody wrote. Imaginary Letters, 2023.",
                         title="A paper nobody wrote", doi="10.5555/online.9999", year=2023)

    assert openalex.lookup(item) == []  # 404 on the DOI, no result for the title
    assert [r.doi for r in crossref.lookup(item)] == ["10.5555/online.3003", "10.5555/online.3008"]  # candidates
    assert [r.path for r in server.requests] == ["/openalex/works/doi:10.5555/online.9999", "/openalex/works",
                                                 "/crossref/works/10.5555/online.9999", "/crossref/works"]


def test_a_reference_without_doi_arxiv_or_title_is_outside_openalex(server, tmp_path):
    openalex, _ = make_sources(server, tmp_path)

    assert openalex.lookup(ReferenceItem(raw="[3] ibid.")) is None
    assert "DOI, arXiv id or title" in openalex.problem and not server.requests


# ---------------------------------------------------------------------- Crossref


def test_crossref_doi_hit_with_mailto_in_the_user_agent(server, tmp_path):
    _, crossref = make_sources(server, tmp_path)
    item = ReferenceItem(raw="...", title="Checking reference lists against open records: a field study",
                         doi="10.5555/online.3001")

    records = crossref.lookup(item)

    assert records == [Record(title="Checking reference lists against open records: A field study",
                              authors=("Mira Halvorsen", "Tomás Quiroga"), year=2021,
                              venue="Journal of Fixture Studies", doi="10.5555/online.3001", arxiv="",
                              source="Crossref", url="https://doi.org/10.5555/online.3001")]
    (request,) = server.requests
    assert request.path == "/crossref/works/10.5555/online.3001" and request.query == {}
    assert f"mailto:{MAIL}" in request.headers["User-Agent"]


def test_crossref_bibliographic_query_with_the_reference_text(server, tmp_path):
    _, crossref = make_sources(server, tmp_path)
    item = parse_reference_line(CONTEXT_REFERENCE)

    records = crossref.lookup(item)

    assert records[0] == Record(title="Citation context windows for recommendation",  # the <i> markup removed
                                authors=("Oskar Lindqvist", "Priya Raman", "Dana Whitfield"), year=2019,
                                venue="Proceedings of the Fixture Workshop", doi="10.5555/online.3003", arxiv="",
                                source="Crossref", url="https://doi.org/10.5555/online.3003")
    assert records[1].authors == ("Fixture Consortium",)
    (request,) = server.requests
    assert request.query["query.bibliographic"] == item.raw
    assert request.query["rows"] == "5"
    assert set(request.query["select"].split(",")) == set(CrossrefSource.fields)


def test_crossref_retraction_from_updated_by(server, tmp_path):
    _, crossref = make_sources(server, tmp_path)

    (record,) = crossref.lookup(ReferenceItem(raw="...", title="Image duplication in a fixture cell line study",
                                              doi="10.5555/online.3005"))

    assert record.retraction == Retraction(nature="retraction", date="2023-05-10", notice_doi="10.5555/online.3006",
                                           source="Crossref")


def test_crossref_expression_of_concern_outranks_a_correction(server, tmp_path):
    _, crossref = make_sources(server, tmp_path)

    (record,) = crossref.lookup(ReferenceItem(raw="...", title="Survival curves of a fixture cohort",
                                              doi="10.5555/online.3007"))

    assert record.retraction == Retraction(nature="expression of concern", date="2022-11-03",
                                           notice_doi="10.5555/online.3010", source="Retraction Watch")


@pytest.mark.parametrize("item", [
    ReferenceItem(raw="...", title="Image duplication in a fixture cell line study", doi="10.5555/online.3006"),
    parse_reference_line("Morimoto K. Image duplication in a fixture cell line study. J Fixture Stud, 2020."),
], ids=["doi-of-the-notice", "search-finds-the-notice"])
def test_a_retraction_notice_gives_way_to_the_work_it_retracts(server, tmp_path, item):
    _, crossref = make_sources(server, tmp_path)

    (record,) = crossref.lookup(item)

    assert record.doi == "10.5555/online.3005" and record.title == "Image duplication in a fixture cell line study"
    assert record.retraction == Retraction(nature="retraction", date="2023-05-10", notice_doi="10.5555/online.3006",
                                           source="Crossref")
    assert server.requests[-1].path == "/crossref/works/10.5555/online.3005"


# ---------------------------------------------------------------------- politeness, failures, budget


def test_429_with_retry_after_is_waited_out(server, tmp_path):
    openalex, _ = make_sources(server, tmp_path)
    server.failures.append(Failure(lambda r: True, 429, times=1, headers={"Retry-After": "1"}))
    item = ReferenceItem(raw="...", title="Checking reference lists against open records: a field study",
                         doi="10.5555/online.3001")

    started = time.monotonic()
    records = openalex.lookup(item)

    assert [r.doi for r in records] == ["10.5555/online.3001"]
    assert len(server.requests) == 2 and time.monotonic() - started >= 0.9


def test_server_errors_until_the_budget_runs_out_leave_the_reference_not_checked(server, tmp_path):
    _, crossref = make_sources(server, tmp_path, budget_s=0.6, backoff=0.1)
    server.failures.append(Failure(lambda r: True, 500, times=None))
    item = ReferenceItem(raw="...", title="Survival curves of a fixture cohort", doi="10.5555/online.3007")

    started = time.monotonic()
    assert crossref.lookup(item) is None
    assert time.monotonic() - started < 1.0
    assert len(server.requests) >= 2  # retried with growing waits (0.1, 0.2, ...) until the next would overrun
    assert "HTTP 500" in crossref.problem and "overrun" in crossref.problem

    time.sleep(0.6)  # the document's budget is spent: no more requests
    asked = len(server.requests)
    assert crossref.lookup(ReferenceItem(raw="...", doi="10.5555/online.3001")) is None
    assert len(server.requests) == asked and "is spent" in crossref.problem


def test_retries_of_one_request_are_limited(server, tmp_path):
    openalex, _ = make_sources(server, tmp_path, backoff=0.01)
    server.failures.append(Failure(lambda r: True, 503, times=None))

    assert openalex.lookup(ReferenceItem(raw="...", doi="10.5555/online.3001")) is None
    assert len(server.requests) == online.RETRIES + 1 and "HTTP 503" in openalex.problem


def test_a_retry_after_beyond_the_budget_pauses_the_api_for_the_document(server, tmp_path):
    openalex, crossref = make_sources(server, tmp_path)
    server.failures.append(Failure(lambda r: r.path.startswith("/openalex"), 429, times=None,
                                   headers={"Retry-After": "3600"}))

    assert openalex.lookup(ReferenceItem(raw="...", doi="10.5555/online.3001")) is None
    assert openalex.lookup(ReferenceItem(raw="...", doi="10.5555/online.3005")) is None
    assert len(server.requests) == 1 and "asked to wait" in openalex.problem
    assert crossref.lookup(ReferenceItem(raw="...", doi="10.5555/online.3001"))  # the other API still answers


def test_malformed_json_is_not_checked_and_not_cached(server, tmp_path, monkeypatch):
    openalex, crossref = make_sources(server, tmp_path)
    item = ReferenceItem(raw="...", title="Checking reference lists against open records: a field study",
                         doi="10.5555/online.3001")
    truncated = SimpleNamespace(loads=json.loads,
                                dumps=lambda payload: '{"id": "https://openalex.org/W3001", "doi": "https://doi')
    with monkeypatch.context() as patch:
        patch.setattr(fixture_server, "json", truncated)  # the server sends bodies cut off mid-way
        assert openalex.lookup(item) is None
        assert crossref.lookup(item) is None
    assert "not JSON" in openalex.problem and "not JSON" in crossref.problem
    asked = len(server.requests)

    assert openalex.lookup(item)  # nothing was cached: asked again, answered
    assert len(server.requests) == asked + 1


@pytest.mark.parametrize("body, which", [
    ({"results": "none"}, "openalex"), ([1, 2], "openalex"), ({"message": ["x"]}, "crossref"),
    ({"status": "ok", "message": {"items": [17]}}, "crossref"),
])
def test_json_in_another_shape_is_not_checked(server, tmp_path, body, which):
    sources = dict(zip(("openalex", "crossref"), make_sources(server, tmp_path)))
    server.failures.append(Failure(lambda r: True, 200, times=None, body=body))

    assert sources[which].lookup(ReferenceItem(raw="Someone. Some title of a paper. 2020.",
                                               title="Some title of a paper")) is None
    assert which.replace("openalex", "OpenAlex").replace("crossref", "Crossref") in sources[which].problem


def test_works_with_fields_of_unexpected_types_do_not_crash(server, tmp_path):
    openalex, crossref = make_sources(server, tmp_path)
    odd_openalex = {"id": "https://openalex.org/W1", "display_name": "Some title of a paper", "doi": None,
                    "authorships": 5, "locations": "abc", "primary_location": [], "publication_year": "2020",
                    "is_retracted": "yes"}
    odd_crossref = {"DOI": 7, "title": "Some title of a paper", "author": {"given": "A"}, "issued": {"date-parts": "x"},
                    "container-title": [None, 3], "updated-by": [{"type": 3}, "retraction"], "update-to": "x"}
    server.failures += [Failure(lambda r: r.path.startswith("/openalex"), 200, None, body={"results": [odd_openalex]}),
                        Failure(lambda r: r.path.startswith("/crossref"), 200, None,
                                body={"message": {"items": [odd_crossref]}})]
    item = ReferenceItem(raw="Someone. Some title of a paper. 2020.", title="Some title of a paper")

    assert openalex.lookup(item) == [Record(title="Some title of a paper", authors=(), year=None, venue="", doi="",
                                            arxiv="", source="OpenAlex", url="https://openalex.org/W1")]
    assert crossref.lookup(item) == [Record(title="Some title of a paper", authors=(), year=None, venue="", doi="",
                                            arxiv="", source="Crossref", url="")]


def test_an_unreachable_api_is_given_up_for_the_document(tmp_path):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    cache = ResponseCache(tmp_path / "cache.sqlite3", 86400.0)
    crossref = CrossrefSource(f"http://127.0.0.1:{port}", cache, Budget(30.0), per_second=200, backoff=0.05)

    started = time.monotonic()
    assert crossref.lookup(ReferenceItem(raw="...", doi="10.5555/online.3001")) is None
    assert crossref.lookup(ReferenceItem(raw="...", doi="10.5555/online.3005")) is None
    assert time.monotonic() - started < 2.0 and "cannot be reached" in crossref.problem


# ---------------------------------------------------------------------- the disk cache


def test_the_cache_answers_the_second_time_without_a_request(server, tmp_path):
    item = ReferenceItem(raw="...", title="Image duplication in a fixture cell line study",
                         doi="10.5555/online.3005")
    unknown = ReferenceItem(raw="", doi="10.5555/online.9999")
    first = online_sources(MAIL, tmp_path, api_urls=api_urls(server))
    answers = [source.lookup(item) for source in first] + [source.lookup(unknown) for source in first]
    asked = len(server.requests)

    for sources in (first, online_sources(MAIL, tmp_path, api_urls=api_urls(server))):  # the same, a new process
        assert [source.lookup(item) for source in sources] + [source.lookup(unknown) for source in sources] == answers
    assert len(server.requests) == asked == 4
    assert all(isinstance(source, Source) for source in first)
    assert answers[1][0].retraction.notice_doi == "10.5555/online.3006" and answers[2:] == [[], []]


def test_cached_answers_expire(server, tmp_path):
    now = [1_000_000.0]
    openalex, _ = make_sources(server, tmp_path, clock=lambda: now[0])
    item = ReferenceItem(raw="...", title="Checking reference lists against open records: a field study",
                         doi="10.5555/online.3001")
    openalex.lookup(item)
    now[0] += 86400.0 - 1
    openalex.lookup(item)
    assert len(server.requests) == 1
    now[0] += 2
    assert openalex.lookup(item)
    assert len(server.requests) == 2


def test_the_cache_keeps_only_the_fields_read(server, tmp_path):
    _, crossref = make_sources(server, tmp_path)
    crossref.lookup(ReferenceItem(raw="...", doi="10.5555/online.3001"))

    (key,) = [k for (k,) in crossref.cache._db.execute("SELECT key FROM answers")]
    (work,) = crossref.cache.get(key)
    assert set(work) <= set(CrossrefSource.fields) and "reference" not in work


def test_the_default_cache_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("CITREC_ONLINE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert online.default_cache_dir() == tmp_path / "citrec" / "references"
    monkeypatch.setenv("CITREC_ONLINE_CACHE", str(tmp_path / "elsewhere"))
    assert online.default_cache_dir() == tmp_path / "elsewhere"


# ---------------------------------------------------------------------- live: one real call per API


def needs_api(url: str) -> None:
    try:
        requests.head(url, timeout=3)
    except requests.RequestException as exc:
        pytest.skip(f"{url} cannot be reached (no internet here?): {type(exc).__name__}")


def test_openalex_live(tmp_path):
    needs_api(online.API_URLS["openalex"])
    openalex, _ = online_sources(cache_dir=tmp_path)  # $OPENALEX_MAILTO / $OPENALEX_API_KEY when set
    records = openalex.lookup(ReferenceItem(raw="...", doi="10.18653/v1/n19-1423",
                                            title="BERT: Pre-training of Deep Bidirectional Transformers for "
                                                  "Language Understanding"))
    assert records is not None, openalex.problem
    assert any("BERT" in r.title and r.year in (2018, 2019) and r.authors[0].endswith("Devlin") for r in records)


def test_crossref_live(tmp_path):
    needs_api(online.API_URLS["crossref"])
    _, crossref = online_sources(cache_dir=tmp_path)
    records = crossref.lookup(ReferenceItem(raw="...", doi="10.1016/s0140-6736(97)11096-0"))  # Wakefield 1998
    assert records is not None, crossref.problem
    (record,) = records
    assert record.year == 1998 and record.retraction is not None
    assert record.retraction.nature == "retraction" and record.retraction.date.startswith("2010")
