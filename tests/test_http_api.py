"""The HTTP API against real uvicorn servers on free ports, through httpx: one in this process over the shared small
recommender (no token, one CORS origin, a low rate limit), and one started as `python -m recommender serve` with
a token from the environment."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import bibtexparser
import httpx
import pytest
import uvicorn

from recommender.documents.read import read_document
from recommender.pipeline.retracted import RetractedPapers
from recommender.query import Query
from recommender.review.document import DocumentReviewer
from recommender.serve import http
from recommender.serve.guard import DRAIN, RateLimiter

PROJECT = Path(__file__).resolve().parents[1]
ORIGIN = "https://editor.example"
TOKEN = "s3cret-token"
MAX_BODY = 64 * 1024
RATE = 120  # a minute per address: this module's requests from 127.0.0.1 stay under it
DRAFT = {"title": "Recommending citations for scientific drafts",
         "abstract": "We suggest references for a manuscript from its abstract with neural embeddings."}
LATEX = r"""\documentclass{article}
\title{Search engines for scientific text}
\begin{document}
\begin{abstract}We study ranking for ad hoc retrieval.\end{abstract}
Ranking documents with the BM25 weighting of term frequency and document length \cite{} is a strong baseline.
\end{document}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def base(small_recommender) -> str:
    """The URL of a uvicorn server in this process: no token, CORS for ORIGIN, a 64 KiB body limit, RATE."""
    settings = http.Settings(cors_origins=(ORIGIN,), max_body=MAX_BODY, rate_limit=RATE, threads=4)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(http.create_app(small_recommender, settings), port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


@pytest.fixture(scope="module")
def client(base):
    with httpx.Client(base_url=base, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def guarded(small_index):
    """`python -m recommender serve` with the token in CITREC_API_TOKEN and ORIGIN allowed: its URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "recommender", "serve", "--index", str(small_index),
                                "--port", str(port), "--cors-origin", ORIGIN], cwd=PROJECT,
                               env={**os.environ, http.TOKEN_ENV: TOKEN, "HF_HUB_OFFLINE": "1"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        assert process.poll() is None, process.stderr.read().decode(errors="replace")
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not answer /health"
            time.sleep(0.5)
    yield url
    process.terminate()
    process.wait(timeout=30)


def ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [r["paper_id"] for r in response.json()["recommendations"]]


def from_address(base: str, address: str) -> httpx.Client:
    """A client whose requests come from another loopback address (a client of its own for the rate limit)."""
    return httpx.Client(base_url=base, timeout=120, transport=httpx.HTTPTransport(local_address=address))


# -- routes -------------------------------------------------------------------------------------------------


def test_health_and_openapi(client):
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["papers"] == 24 and health["multilingual"] is True
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths) == {"/recommend", "/batch", "/review", "/papers/{paper_id}", "/papers/{paper_id}/bibtex",
                          "/health"}
    assert client.get("/docs").status_code == 200


def test_recommend_a_draft_a_passage_and_a_document_at_the_cursor(client, small_recommender):
    answer = client.post("/recommend", json={**DRAFT, "k": 3}).json()
    assert [r["paper_id"] for r in answer["recommendations"]] == \
        [r.paper_id for r in small_recommender.recommend(Query(**DRAFT, k=3))]
    first = answer["recommendations"][0]
    assert first["rank"] == 1 and first["title"] and first["explanation"] and "dense" in first["components"]
    assert answer["route"]["language"]["code"] == "en" and answer["left_out"] == [] and first["retraction"] == ""

    assert ids(client.post("/recommend", json={"context": "Ranking with BM25 [CIT] is standard.", "k": 3}))[0] == "ir0"

    at_cursor = client.post("/recommend", json={"text": LATEX, "cursor": LATEX.index(r"\cite{") + 6, "k": 3})
    assert ids(at_cursor)[0] == "ir0"
    asked = at_cursor.json()["query"]
    assert asked["title"] == "Search engines for scientific text" and "[CIT]" in asked["context"]
    assert "ad hoc retrieval" in asked["abstract"]


def test_recommend_filters_and_exclusions(client):
    passage = {"context": "Ranking with BM25 [CIT] is standard.", "k": 5}
    assert "ir0" not in ids(client.post("/recommend", json={**passage, "exclude": ["ir0"]}))
    bib = "@inproceedings{x, title={Probabilistic relevance weighting with BM25}, doi={10.9999/ir.0}}"
    assert "ir0" not in ids(client.post("/recommend", json={**passage, "references": bib}))
    recent = client.post("/recommend", json={**passage, "year_min": 2013}).json()["recommendations"]
    assert recent and all(r["year"] >= 2013 for r in recent)
    assert set(r["venue"] for r in client.post("/recommend", json={**passage, "venues": ["CVPR"]}).json()[
        "recommendations"]) == {"CVPR"}


def test_retracted_papers_left_out_unless_asked_for(client, small_recommender, monkeypatch):
    class OneRetraction:  # a retraction store that flags ir0's DOI
        def dois(self):
            return {"10.9999/ir.0"}

        def find(self, doi="", title="", year=None):
            return None

    monkeypatch.setattr(small_recommender, "retracted", RetractedPapers(small_recommender.index, OneRetraction()))
    passage = {"context": "Ranking with BM25 [CIT] is standard.", "k": 3}
    hidden = client.post("/recommend", json=passage).json()
    assert "ir0" not in [r["paper_id"] for r in hidden["recommendations"]] and hidden["left_out"] == ["ir0"]
    shown = client.post("/recommend", json={**passage, "show_retracted": True}).json()["recommendations"][0]
    assert shown["paper_id"] == "ir0" and shown["retraction"].startswith("Retracted")
    assert client.get("/papers/ir0").json()["retraction"].startswith("Retracted")
    assert "Retracted" in bibtexparser.parse_string(client.get("/papers/ir0/bibtex").text).entries[0]["note"]


def test_batch_answers_each_request_as_recommend_does(client):
    requests = [{**DRAFT, "k": 4}, {"context": "Ranking with BM25 [CIT] is standard.", "k": 2}]
    results = client.post("/batch", json={"requests": requests}).json()["results"]
    assert [[r["paper_id"] for r in result["recommendations"]] for result in results] == \
        [ids(client.post("/recommend", json=request)) for request in requests]
    bad = client.post("/batch", json={"requests": [DRAFT, {"title": " "}]})
    assert bad.status_code == 400 and bad.json()["error"].startswith("requests[1]: Give a title")
    assert client.post("/batch", json={"requests": [DRAFT] * (http.MAX_BATCH + 1)}).status_code == 422


def test_paper_and_its_bibtex(client):
    paper = client.get("/papers/ir0").json()
    assert paper["title"] == "Probabilistic relevance weighting with BM25" and paper["year"] == 2010
    response = client.get("/papers/ir0/bibtex")
    assert response.headers["content-type"].startswith("application/x-bibtex")
    entry = bibtexparser.parse_string(response.text).entries[0]
    assert entry["title"] == paper["title"] and entry["doi"] == "10.9999/ir.0"
    missing = client.get("/papers/10.9999%2Fnone")
    assert missing.status_code == 404 and missing.json() == {"error": "No paper with id '10.9999/none' in this index."}
    assert client.get("/papers/none/bibtex").status_code == 404


def test_review_gives_the_json_of_review_json(client, small_recommender, tmp_path):
    draft = ("# Ranking papers\n\nRanking with BM25 [CIT] is standard. Dense passage retrieval embeds questions "
             "and passages with two encoders.\n\nSee also [@x].\n").encode()
    bib = b"@inproceedings{x, title={Probabilistic relevance weighting with BM25}, doi={10.9999/ir.0}}"
    response = client.post("/review", files={"document": ("draft.md", draft), "references": ("refs.bib", bib)},
                           data={"k": "3"})
    assert response.status_code == 200, response.text
    expected = DocumentReviewer(small_recommender).review(read_document(draft, "draft.md", bib=bib), place_k=3)
    assert response.json() == json.loads(json.dumps(expected.to_dict()))
    assert response.json()["places"][0]["recommendations"]

    image = client.post("/review", files={"document": ("scan.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64)})
    assert image.status_code == 400 and "PNG image" in image.json()["error"]
    assert client.post("/review", data={"k": "3"}).json() == {"error": "document: Field required"}


# -- bad requests -------------------------------------------------------------------------------------------


def test_bad_requests_get_a_4xx_with_a_message(client):
    def error(response: httpx.Response, status: int) -> str:
        assert response.status_code == status, response.text
        assert set(response.json()) == {"error"} and "Traceback" not in response.text
        return response.json()["error"]

    assert "not valid JSON" in error(client.post("/recommend", content=b'{"title": "x",',
                                                 headers={"content-type": "application/json"}), 400)
    assert "k: Input should be greater than or equal to 1" in error(client.post("/recommend",
                                                                                json={**DRAFT, "k": 0}), 422)
    assert "contxt: Extra inputs are not permitted" in error(client.post("/recommend", json={"contxt": "x"}), 422)
    assert "Content-Type: application/json" in error(client.post("/recommend", content=b'{"title": "x"}'), 415)
    too_long = "x " * (http.MAX_PASSAGE_CHARS // 2) + "[CIT]"
    assert "context: String should have at most 20000 characters" in error(
        client.post("/recommend", json={"context": too_long}), 422)
    assert "venues: List should have at most 100 items" in error(
        client.post("/recommend", json={**DRAFT, "venues": ["SIGIR"] * (http.MAX_LIST + 1)}), 422)
    assert "Give a title" in error(client.post("/recommend", json={}), 400)
    assert "year_min is later" in error(client.post("/recommend", json={**DRAFT, "year_min": 2020,
                                                                         "year_max": 2010}), 400)
    assert "`cursor`" in error(client.post("/recommend", json={"text": LATEX}), 400)
    assert "outside the document" in error(client.post("/recommend", json={"text": "short", "cursor": 99}), 400)
    assert error(client.get("/recommend"), 405) == "Method Not Allowed"
    assert error(client.get("/nowhere"), 404) == "Not Found"


def test_an_unexpected_failure_is_a_bare_500(client, monkeypatch):
    monkeypatch.setattr(http, "to_bibtex", lambda papers: 1 / 0)
    response = client.get("/papers/ir0/bibtex")
    assert response.status_code == 500
    assert response.json() == {"error": "Internal error; the server's log has the details."}


def test_oversized_bodies_are_refused_before_they_are_read(client, base):
    big = json.dumps({"title": "x" * MAX_BODY}).encode()
    declared = client.post("/recommend", content=big, headers={"content-type": "application/json"})
    assert declared.status_code == 413 and "65,536 bytes" in declared.json()["error"]

    def chunks():  # no Content-Length: counted as it arrives
        for start in range(0, len(big), 8192):
            yield big[start:start + 8192]

    streamed = client.post("/recommend", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413

    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:  # headers only: the body is never sent
        sock.sendall(f"POST /review HTTP/1.1\r\nHost: {host}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                     f"Content-Length: {http.REVIEW_BODY + DRAIN + 1}\r\n\r\n".encode())
        assert sock.recv(65536).startswith(b"HTTP/1.1 413 ")


# -- access -------------------------------------------------------------------------------------------------


def test_cors_only_for_the_configured_origin(client):
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization,content-type"}
    allowed = client.options("/recommend", headers={"Origin": ORIGIN, **preflight})
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    other = client.options("/recommend", headers={"Origin": "https://elsewhere.example", **preflight})
    assert other.status_code == 400 and "access-control-allow-origin" not in other.headers
    simple = client.post("/recommend", json={**DRAFT, "k": 1}, headers={"Origin": ORIGIN})
    assert simple.headers["access-control-allow-origin"] == ORIGIN


def test_rate_limit_per_client_address(base):
    with from_address(base, "127.0.0.2") as flooding, from_address(base, "127.0.0.3") as calm:
        answers = [flooding.get("/papers/ir0") for _ in range(RATE + 5)]
        refused = [r for r in answers if r.status_code == 429]
        assert refused and int(refused[0].headers["retry-after"]) >= 1 and "Too many requests" in refused[0].text
        assert calm.get("/papers/ir0").status_code == 200
        assert flooding.get("/health").status_code == 200  # never limited


def test_rate_limiter_refills_over_time():
    now = [0.0]
    limiter = RateLimiter(60, clock=lambda: now[0])
    assert [limiter.wait("a") for _ in range(60)] == [0.0] * 60
    assert limiter.wait("a") == pytest.approx(1.0) and limiter.wait("b") == 0.0
    now[0] += 2.5
    assert [limiter.wait("a") for _ in range(3)][:2] == [0.0, 0.0]


def test_token_needed_except_for_health_and_docs(guarded):
    with httpx.Client(base_url=guarded, timeout=120) as c:
        assert c.get("/health").status_code == 200 and c.get("/openapi.json").status_code == 200
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            refused = c.post("/recommend", json=DRAFT, headers=headers)
            assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
            assert "bearer token" in refused.json()["error"]
        assert ids(c.post("/recommend", json={**DRAFT, "k": 2}, headers={"Authorization": f"Bearer {TOKEN}"}))
        assert c.get("/papers/ir0", headers={"Authorization": f"bearer {TOKEN}"}).status_code == 200
        preflight = c.options("/recommend", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
                                                     "Access-Control-Request-Headers": "authorization"})
        assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == ORIGIN


# -- concurrency --------------------------------------------------------------------------------------------


def test_twenty_concurrent_clients_get_the_answers_they_get_alone(base, client):
    contexts = ["Ranking with BM25 [CIT] is standard.", "Residual connections [CIT] train very deep networks.",
                "Protein structures are predicted [CIT] from sequences.",
                "Nearest neighbours in a forest of trees [CIT]."]
    requests = [{"context": contexts[i % 4], "k": 5, "diversity": 0.1 * (i % 3)} if i % 2 else
                {**DRAFT, "k": 3 + i % 5} for i in range(18)]
    requests += [{"text": LATEX, "cursor": LATEX.index(r"\cite{") + 6}, {"text": LATEX, "cursor": 10, "k": 2}]
    alone = [client.post("/recommend", json=request).json() for request in requests]
    together: list = [None] * len(requests)
    start = threading.Barrier(len(requests))

    def ask(i: int) -> None:
        with from_address(base, f"127.0.1.{i + 1}") as c:
            start.wait()
            together[i] = c.post("/recommend", json=requests[i]).json()

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert together == alone


def test_a_slow_review_does_not_hold_up_other_requests(base, client, monkeypatch):
    release, reading = threading.Event(), threading.Event()

    def slow_read(*args, **kwargs):  # a review that lasts until the test lets it go on
        reading.set()
        assert release.wait(timeout=120)
        return read_document(*args, **kwargs)

    monkeypatch.setattr(http, "read_document", slow_read)
    finished = {}

    def review() -> None:
        with from_address(base, "127.0.0.4") as c:
            finished["status"] = c.post("/review", files={"document": ("draft.txt", b"Ranking with BM25 [CIT].")}
                                        ).status_code

    slow = threading.Thread(target=review)
    slow.start()
    try:
        assert reading.wait(timeout=60)
        assert ids(client.post("/recommend", json={**DRAFT, "k": 2}))
        assert client.post("/batch", json={"requests": [DRAFT, DRAFT]}).status_code == 200
        assert client.get("/papers/ir0").status_code == 200 and not finished
    finally:
        release.set()
        slow.join(timeout=120)
    assert finished["status"] == 200
