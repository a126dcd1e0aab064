"""The HTTP API: `python -m recommender serve --index DIR` (FastAPI on uvicorn; OpenAPI at /docs).

    POST /recommend            papers for a draft, a passage with [CIT], or a document with the cursor's offset
    POST /batch                several /recommend requests in one
    POST /review               a document upload (multipart field `document`); the JSON of `review --json`
    GET  /papers/{id}          a paper's record
    GET  /papers/{id}/bibtex   its BibTeX entry (the app's export)
    GET  /health               up, and which index it serves (never needs the token)

The index is loaded once. Engine calls run in worker threads, so a slow request (a review, a large batch) never
holds up the others: queries and reviews each have their own threads (`Settings.threads`, `REVIEW_THREADS`).
The engine is safe to call from several threads (its caches and the paper store take locks; the encoders give
the same vectors when called at once). Every refusal is JSON `{"error": message}` with a 4xx status; an
unexpected failure is a 500 with no detail (the traceback goes to the server's log).
"""
from __future__ import annotations

import dataclasses
import logging
import os
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import anyio
import uvicorn
from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware

from recommender.backends.base import BackendError
from recommender.config import DEFAULT_DIVERSITY
from recommender.corpus.export import to_bibtex
from recommender.documents.limits import MAX_BYTES, MAX_PROJECT_BIB_BYTES, MB
from recommender.documents.read import read_document
from recommender.pipeline.recommender import Recommender
from recommender.query import Query, RecommendResult
from recommender.references.parse import parse_reference_list
from recommender.review.document import DocumentReviewer
from recommender.serve.context import citation_query
from recommender.serve.guard import CatchAll, Guard, RateLimiter, error_response

TOKEN_ENV = "CITREC_API_TOKEN"
MAX_K = 100
MAX_BATCH = 32
MAX_TITLE_CHARS = 2_000
MAX_PASSAGE_CHARS = 20_000  # an abstract or a passage (a whole document goes in `text`, read around its cursor)
MAX_LIST = 100  # venues, authors
REVIEW_THREADS = 2  # reviews at once (each is seconds of work; the rest wait their turn)
REVIEW_BODY = MAX_BYTES + MAX_PROJECT_BIB_BYTES + MB  # a document and its .bib at their limits, and the form
JSON_PATHS = frozenset({"/recommend", "/batch"})
OPEN_PATHS = frozenset({"/health", "/docs", "/docs/oauth2-redirect", "/openapi.json"})
log = logging.getLogger("recommender.serve")


@dataclass(frozen=True)
class Settings:
    """token: the bearer token every route but /health and the docs needs ("" : none); cors_origins: the web
    origins whose pages may call the API (none: no cross-origin calls); max_body: the most bytes of a request's
    body (/review: REVIEW_BODY); rate_limit: requests a minute per client address (0: unlimited); threads:
    query requests answered at once."""

    token: str = ""
    cors_origins: tuple[str, ...] = ()
    max_body: int = 2 * MB
    rate_limit: int = 300
    threads: int = 4


class RecommendRequest(BaseModel):
    """A draft (`title`, `abstract`: global mode), a passage with a [CIT] placeholder (`context`: local mode, the
    draft as its global context), or a whole LaTeX, Markdown or plain-text document with the character offset
    where the citation goes (`text`, `cursor`: the passage is read around the cursor, the draft from the document
    unless given)."""

    model_config = ConfigDict(extra="forbid")
    title: str = Field("", max_length=MAX_TITLE_CHARS)
    abstract: str = Field("", max_length=MAX_PASSAGE_CHARS)
    context: str = Field("", max_length=MAX_PASSAGE_CHARS, description="a passage with [CIT] where the citation goes")
    text: str = Field("", description="a whole document; with `cursor`")
    cursor: int | None = Field(None, ge=0, description="character offset (code points) of the citation in `text`")
    k: int = Field(10, ge=1, le=MAX_K)
    year_min: int | None = None
    year_max: int | None = None
    venues: list[str] = Field([], max_length=MAX_LIST, description="only papers of these venues")
    exclude: list[str] = Field([], description="ids of papers never to recommend")
    references: str = Field("", description="a reference list already cited (BibTeX, LaTeX or plain text): its "
                                            "papers are not recommended")
    authors: list[str] = Field([], max_length=MAX_LIST,
                               description="the draft's authors: their earlier papers become candidates")
    diversity: float = Field(DEFAULT_DIVERSITY, ge=0.0, description="author spread of the list (0: plain ranking)")
    show_retracted: bool = Field(False, description="list retracted papers too (each with its mark); by default "
                                                    "they are left out and their ids given in `left_out`")


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    requests: list[RecommendRequest] = Field(min_length=1, max_length=MAX_BATCH)


class Recommended(BaseModel):
    paper_id: str
    title: str
    authors: list[str]
    year: int | None
    venue: str
    doi: str
    rank: int
    score: float
    components: dict[str, float]
    explanation: str
    retraction: str = Field("", description="the mark of a retracted paper (listed only with `show_retracted`)")


class Asked(BaseModel):
    """The query as the engine read it (for `text` + `cursor`: the passage around the cursor and the draft)."""

    title: str
    abstract: str
    context: str


class RecommendResponse(BaseModel):
    recommendations: list[Recommended]
    route: dict[str, Any] = Field(description="the query's language and the pipeline that answered it")
    query: Asked
    left_out: list[str] = Field(description="ids of retracted papers left out of the list")


class BatchResponse(BaseModel):
    results: list[RecommendResponse]


class Api:
    """The engine behind the routes: one recommender, its reviewer (whose reference index also matches the
    reference lists of /recommend), and the worker threads of each kind of request."""

    def __init__(self, recommender: Recommender, threads: int):
        self.recommender = recommender
        self.reviewer = DocumentReviewer(recommender)
        self.queries = anyio.CapacityLimiter(threads)
        self.reviews = anyio.CapacityLimiter(REVIEW_THREADS)

    async def run(self, limiter: anyio.CapacityLimiter, work: Callable, *args):
        """`work(*args)` in a worker thread; a ValueError (a bad request: the engine's messages are for the user)
        becomes a 400, a retrieval backend that fails a 503."""
        try:
            return await anyio.to_thread.run_sync(partial(work, *args), limiter=limiter)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from exc
        except BackendError as exc:
            raise HTTPException(503, str(exc)) from exc

    def query(self, request: RecommendRequest) -> Query:
        """The engine's Query for a request (ValueError for one that cannot be asked)."""
        exclude = set(request.exclude)
        if request.references.strip():
            exclude |= self.reviewer.references.match(parse_reference_list(request.references))
        if request.text or request.cursor is not None:
            if request.context or request.cursor is None:
                raise ValueError("Give `text` with `cursor` (a document and the offset of the citation), or "
                                 "`context` (a passage with [CIT]), not both.")
            query = citation_query(request.text, request.cursor)
        else:
            query = Query(context=request.context)
        query = dataclasses.replace(query, title=request.title or query.title,
                                    abstract=request.abstract or query.abstract, k=request.k, exclude=exclude,
                                    year_min=request.year_min, year_max=request.year_max,
                                    venues=list(request.venues), authors=list(request.authors),
                                    diversity=request.diversity)
        query.validate()
        return query

    def recommend(self, requests: list[RecommendRequest]) -> list[dict]:
        """The answers to requests, in order (their texts encoded together first); a ValueError names the
        request that cannot be asked."""
        queries = []
        for i, request in enumerate(requests):
            try:
                queries.append(self.query(request))
            except ValueError as exc:
                raise ValueError(f"requests[{i}]: {exc}" if len(requests) > 1 else str(exc)) from exc
        if len(queries) > 1:
            self.recommender.prepare(queries)
        return [answer(query, self.recommender.recommend(query, show_retracted=request.show_retracted))
                for query, request in zip(queries, requests)]

    def paper(self, paper_id: str):
        position = self.recommender.index.position.get(paper_id)
        if position is None:
            raise HTTPException(404, f"No paper with id {paper_id!r} in this index.")
        return self.recommender.retracted.mark(self.recommender.index.papers([position]), [position])[0]

    def review(self, data: bytes, name: str, bib: bytes | None, k: int) -> dict:
        document = read_document(data, name, bib=bib)
        return self.reviewer.review(document, place_k=k).to_dict()


def answer(query: Query, result: RecommendResult) -> dict:
    return {"recommendations": [r.to_dict() for r in result], "route": result.route.to_dict(),
            "query": {"title": query.title, "abstract": query.abstract, "context": query.context},
            "left_out": result.left_out}


def create_app(recommender: Recommender, settings: Settings = Settings()) -> FastAPI:
    """The API over a loaded recommender."""
    api = Api(recommender, settings.threads)
    index = recommender.index
    app = FastAPI(title="Citation recommender", version=index.version.name, redoc_url=None,
                  description="Recommends papers to cite from one index. Send `Authorization: Bearer <token>` when "
                              "the server was started with a token.")

    @app.post("/recommend", response_model=RecommendResponse)
    async def recommend(request: RecommendRequest):
        """Papers to cite for a draft, a passage with [CIT], or a document at a cursor."""
        return (await api.run(api.queries, api.recommend, [request]))[0]

    @app.post("/batch", response_model=BatchResponse)
    async def batch(request: BatchRequest):
        """Several /recommend requests answered together (up to 32)."""
        return {"results": await api.run(api.queries, api.recommend, request.requests)}

    @app.post("/review")
    async def review(document: UploadFile = File(description="PDF, .tex, zipped LaTeX project, .md, .txt or .docx"),
                     references: UploadFile | None = File(None, description="a .bib to use instead of the "
                                                                            "document's own"),
                     k: int = Form(5, ge=1, le=MAX_K, description="suggestions per citation place")) -> dict:
        """A whole draft or submission reviewed: the JSON of `python -m recommender review --json`."""
        bib = await references.read() if references is not None else None
        return await api.run(api.reviews, api.review, await document.read(), document.filename or "", bib, k)

    @app.get("/papers/{paper_id:path}/bibtex", response_class=PlainTextResponse,
             responses={200: {"content": {"application/x-bibtex": {}}}})
    async def bibtex(paper_id: str):
        """A paper's BibTeX entry, keyed and typed (and a retracted one marked) as the app exports it."""
        paper = await api.run(api.queries, api.paper, paper_id)
        return PlainTextResponse(to_bibtex([paper]), media_type="application/x-bibtex; charset=utf-8")

    @app.get("/papers/{paper_id:path}")
    async def paper(paper_id: str) -> dict:
        """A paper's record (ids with "/" may be sent as they are or with %2F); a retracted one carries its mark in
        `retraction`."""
        return (await api.run(api.queries, api.paper, paper_id)).to_dict()

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "papers": len(index), "index_version": index.version.name,
                "reranker": recommender.reranker is not None,
                "passage_reranker": recommender.local_reranker is not None,
                "multilingual": index.multilingual is not None}

    if settings.token:  # /docs asks for it (the Guard checks it)
        schema = app.openapi()
        schema.setdefault("components", {})["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        schema["security"] = [{"bearer": []}]
    add_error_handlers(app)
    app.add_middleware(Guard, token=settings.token,
                       limiter=RateLimiter(settings.rate_limit) if settings.rate_limit > 0 else None,
                       body_limit=lambda path: REVIEW_BODY if path == "/review" else settings.max_body,
                       open_paths=OPEN_PATHS)
    app.add_middleware(CatchAll)
    if settings.cors_origins:  # outermost: preflights are answered before the token is asked for
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"], max_age=600)
    return app


def add_error_handlers(app: FastAPI) -> None:
    """Every error as `{"error": message}`: HTTP errors with their message, a body that does not parse or fit
    the request's schema with what is wrong where (anything else: `CatchAll`)."""

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        return error_response(exc.status_code, str(exc.detail), exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        if request.url.path in JSON_PATHS and "json" not in request.headers.get("content-type", ""):
            return error_response(415, "Send the body as JSON, with the header Content-Type: application/json.")
        problems = exc.errors()
        broken = next((p for p in problems if p["type"] == "json_invalid"), None)
        if broken is not None:
            where = broken["loc"][-1] if len(broken["loc"]) > 1 else "?"
            return error_response(400, f"The body is not valid JSON ({broken.get('ctx', {}).get('error', '')} "
                                       f"at character {where}).")
        return error_response(422, "; ".join(f"{'.'.join(map(str, p['loc'][1:])) or 'body'}: {p['msg']}"
                                             for p in problems))


def serve(index: str, *, host: str = "127.0.0.1", port: int = 8765, settings: Settings = Settings(),
          backend: str | None = None) -> None:
    """Load the index and answer on host:port until interrupted."""
    if not settings.token and host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("serving on %s without a token: anyone who can reach it can use it (set %s)", host, TOKEN_ENV)
    # each engine call on one core (unless OMP_NUM_THREADS says otherwise): requests run side by side, and on a
    # busy machine no call stalls while its encoder's threads wait for one another (measured: bench/api_load.py)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    recommender = Recommender.load(index, backend)
    # the models that load on first use: the language detector, and the multilingual encoder (a non-English query)
    recommender.recommend(Query(title="Warming up the models"))
    if recommender.index.multilingual is not None:
        recommender.recommend(Query(title="Recomendación de citas para artículos científicos"))
    uvicorn.run(create_app(recommender, settings), host=host, port=port, log_level="info")
