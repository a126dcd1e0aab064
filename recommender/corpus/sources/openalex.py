"""OpenAlex works as a corpus: a filtered seed set, optionally one hop along references and citations.

The query (search terms; concept, topic, source, author and institution ids; years) is composed with `pyalex`;
the requests are ours (`web.JsonClient`): pyalex 0.21 always addresses https://api.openalex.org and does
not expose its cursor, while this download must page by cursor, resume after an interruption
(`partial.PartialDownload`), stay under 10 requests a second and retry rate-limit and server errors.

Stages, each resumable: `seed` pages through the filtered works by cursor; `refs` fetches the works the seeds
reference (100 ids a request); `cites` pages through the works citing the seeds (50 seeds a request). Ids are
OpenAlex's short work ids ("W2741809807"); each paper's references are OpenAlex's `referenced_works`, kept
when they point at a paper of the finished corpus.
"""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pyalex import Works

from recommender.corpus.loaders.openalex import OPENALEX_PREFIX, from_openalex
from recommender.corpus.loaders.records import RecordError
from recommender.corpus.sources.corpus_file import ReferenceCount, Summary, within_corpus, write_corpus
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.partial import PartialDownload, run_stages
from recommender.corpus.sources.web import JsonClient

API_URL = "https://api.openalex.org"
PAGE_SIZE = 200  # the most OpenAlex returns per page
ID_BATCH = 100  # the most values OpenAlex accepts OR-ed in one filter
CITES_BATCH = 50
EXPANSIONS = ("none", "refs", "cites", "both")
SELECT = ("id", "doi", "display_name", "publication_year", "publication_date", "authorships", "primary_location",
          "referenced_works", "abstract_inverted_index", "type", "cited_by_count", "language", "is_retracted")
_ID_LETTERS = {"concepts": "C", "topics": "T", "venues": "S", "authors": "A", "institutions": "I"}
_ENTITY_NAMES = {"concepts": "concept", "topics": "topic", "venues": "source (venue)", "authors": "author",
                 "institutions": "institution"}
_ENDPOINTS = {"concepts": "concepts", "topics": "topics", "venues": "sources", "authors": "authors",
              "institutions": "institutions"}


@dataclass(frozen=True)
class OpenAlexQuery:
    """What the seed set is: every given filter must hold; several ids of one kind are alternatives."""

    search: str = ""
    concepts: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    venues: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    institutions: tuple[str, ...] = ()
    year_min: int | None = None
    year_max: int | None = None

    def __post_init__(self):
        for kind in _ID_LETTERS:
            object.__setattr__(self, kind, tuple(short_id(v, kind) for v in getattr(self, kind)))
        if not (self.search.strip() or any(getattr(self, kind) for kind in _ID_LETTERS)):
            raise SourceError("give at least one of --search, --concept, --topic, --venue, --author, --institution "
                              "(years alone would select millions of works)")
        if self.year_min is not None and self.year_max is not None and self.year_min > self.year_max:
            raise SourceError(f"years {self.year_min}-{self.year_max}: the first year is after the last")

    def works(self) -> Works:
        """The pyalex query of the seed set."""
        works = Works()
        if self.search.strip():
            works = works.search(self.search.strip())
        for kind, path in (("concepts", {"concepts": "id"}), ("topics", {"topics": "id"}),
                           ("venues", {"primary_location": {"source": "id"}}),
                           ("authors", {"authorships": {"author": "id"}}),
                           ("institutions", {"authorships": {"institutions": "id"}})):
            if getattr(self, kind):
                works = works.filter_or(**_nest(path, list(getattr(self, kind))))
        if self.year_min is not None:
            works = works.filter(from_publication_date=f"{self.year_min:04d}-01-01")
        if self.year_max is not None:
            works = works.filter(to_publication_date=f"{self.year_max:04d}-12-31")
        return works


def short_id(value: str, kind: str) -> str:
    """An OpenAlex id as its short form ("S4306420609"), from that form or the https://openalex.org/ URL."""
    text = str(value).strip()
    text = text[len(OPENALEX_PREFIX):] if text.lower().startswith(OPENALEX_PREFIX) else text
    letter = _ID_LETTERS[kind]
    if not re.fullmatch(rf"{letter}\d+", text, re.IGNORECASE):
        raise SourceError(f"{value!r} is not an OpenAlex {_ENTITY_NAMES[kind]} id ({letter} and digits, e.g. "
                          f"{letter}12345678); find it with {API_URL}/{_ENDPOINTS[kind]}?search=...")
    return text.upper()


def _nest(path: dict | str, ids: list[str]) -> dict:
    """{"a": {"b": "id"}} and ids -> {"a": {"b": {"id": ids}}} (pyalex's nested filter form)."""
    if isinstance(path, str):
        return {path: ids}
    (key, rest), = path.items()
    return {key: _nest(rest, ids)}


def _query_string(works: Works) -> str:
    return urlsplit(works.url).query


def work_record(work: Any) -> dict[str, Any] | None:
    """An OpenAlex work as a corpus record; None when it is malformed or has neither title nor abstract."""
    if not isinstance(work, dict) or not isinstance(work.get("id"), str):
        return None
    try:
        record = from_openalex(work)
    except RecordError:
        return None
    record["title"] = " ".join(str(record["title"] or "").split())
    record["venue"] = record["venue"] or ""
    return record if record["title"] or record["abstract"] else None


class OpenAlexDownload:
    """One corpus download; `run()` starts it or continues an interrupted one from its `.partial` file."""

    def __init__(self, query: OpenAlexQuery, out: str | Path, *, expand: str = "none", limit: int | None = None,
                 expand_limit: int | None = None, mailto: str | None = None, api_key: str | None = None,
                 api_url: str = API_URL, client: JsonClient | None = None, progress: bool = True):
        if expand not in EXPANSIONS:
            raise SourceError(f"--expand {expand!r}: choose one of {', '.join(EXPANSIONS)}")
        for name, value in (("--limit", limit), ("--expand-limit", expand_limit)):
            if value is not None and value < 1:
                raise SourceError(f"{name} must be at least 1")
        self.query, self.out, self.expand = query, Path(out), expand
        self.limit, self.expand_limit = limit, expand_limit
        self.api_url = api_url.rstrip("/")
        self.client = client or JsonClient("OpenAlex")
        self.progress = progress
        mailto = mailto if mailto is not None else os.environ.get("OPENALEX_MAILTO", "")
        api_key = api_key if api_key is not None else os.environ.get("OPENALEX_API_KEY", "")
        self.identity = {k: v for k, v in (("mailto", mailto), ("api_key", api_key)) if v}
        self.notes: list[str] = []
        self._wanted_refs: list[str] | None = None
        self._seeds: list[str] | None = None

    def settings(self) -> dict[str, Any]:
        return {"source": "openalex", **asdict(self.query), "expand": self.expand, "limit": self.limit,
                "expand_limit": self.expand_limit}

    def run(self) -> Summary:
        partial = PartialDownload(self.out, self.settings())
        state = partial.open() or {"stage": "seed", "cursor": "*"}
        stages = {"seed": self._seed_page, "refs": self._refs_batch, "cites": self._cites_page}
        return run_stages(partial, state, stages,
                          "OpenAlex works", self.progress, self._finish)

    # ------------------------------------------------------------------ stages

    def _seed_page(self, partial: PartialDownload, state: dict) -> dict:
        have = partial.hops["seed"]
        size = PAGE_SIZE if self.limit is None else max(1, min(PAGE_SIZE, self.limit - have))
        page = self._list(self.query.works(), cursor=state["cursor"], per_page=size)
        records = [r for r in map(work_record, page["results"]) if r is not None]
        if self.limit is not None:
            records = [r for r in records if r["id"] not in partial.seen][: self.limit - have]
        cursor = page["meta"].get("next_cursor")
        done = not page["results"] or not cursor or (self.limit is not None and have + len(records) >= self.limit)
        following = self._after_seeds() if done else {"stage": "seed", "cursor": cursor}
        partial.save(records, "seed", following)
        return following

    def _after_seeds(self) -> dict:
        if self.expand in ("refs", "both"):
            return {"stage": "refs", "batch": 0}
        return self._after_refs()

    def _after_refs(self) -> dict:
        return {"stage": "cites", "batch": 0, "cursor": "*"} if self.expand in ("cites", "both") else {"stage": "done"}

    def _refs_batch(self, partial: PartialDownload, state: dict) -> dict:
        if self._wanted_refs is None:  # the same list on every run: the seeds' references outside the seed set
            seeds = list(partial.records("seed"))
            seed_ids = {r["id"] for r in seeds}
            self._wanted_refs = sorted({ref for r in seeds for ref in r["references"]} - seed_ids)
        start = state["batch"] * ID_BATCH
        batch = self._wanted_refs[start:start + ID_BATCH]
        if not batch or partial.expansion_full(self.expand_limit, self.notes):
            partial.save([], "ref", self._after_refs())
            return self._after_refs()
        page = self._list(Works().filter_or(openalex=batch), per_page=len(batch))
        works = [r for r in map(work_record, page["results"]) if r is not None]
        records = partial.expansion_room(works, self.expand_limit)
        following = {"stage": "refs", "batch": state["batch"] + 1}
        partial.save(records, "ref", following)
        return following

    def _cites_page(self, partial: PartialDownload, state: dict) -> dict:
        if self._seeds is None:
            self._seeds = sorted(r["id"] for r in partial.records("seed"))
        start = state["batch"] * CITES_BATCH
        batch = self._seeds[start:start + CITES_BATCH]
        if not batch or partial.expansion_full(self.expand_limit, self.notes):
            partial.save([], "cite", {"stage": "done"})
            return {"stage": "done"}
        page = self._list(Works().filter_or(cites=batch), cursor=state["cursor"], per_page=PAGE_SIZE)
        works = [r for r in map(work_record, page["results"]) if r is not None]
        records = partial.expansion_room(works, self.expand_limit)
        cursor = page["meta"].get("next_cursor")
        following = ({"stage": "cites", "batch": state["batch"], "cursor": cursor} if page["results"] and cursor
                     else {"stage": "cites", "batch": state["batch"] + 1, "cursor": "*"})
        partial.save(records, "cite", following)
        return following

    # ------------------------------------------------------------------ requests and the result

    def _list(self, works: Works, *, per_page: int, cursor: str | None = None) -> dict:
        params: dict[str, Any] = {"select": ",".join(SELECT), "per-page": per_page, **self.identity}
        if cursor is not None:
            params["cursor"] = cursor
        page = self.client.get(f"{self.api_url}/works?{_query_string(works)}", params=params)
        if not (isinstance(page, dict) and isinstance(page.get("results"), list)
                and isinstance(page.get("meta"), dict)):
            raise SourceError("OpenAlex answered with a page without `results` and `meta`: "
                              "is --api-url an OpenAlex API?")
        return page

    def _finish(self, partial: PartialDownload) -> Summary:
        count = ReferenceCount()
        written = write_corpus(within_corpus(partial.records(), partial.seen, count), self.out)
        summary = Summary(str(self.out), written, count, partial.parts(), self.notes)
        partial.remove()
        return summary
