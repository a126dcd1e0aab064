"""The reference check's online sources: OpenAlex and Crossref, asked politely, cached on disk, within a time budget.

`online_sources()` gives both for one document. Each looks a reference up by its DOI (and OpenAlex by its arXiv id,
through arXiv's DataCite DOI 10.48550/arXiv.ID), then by its title when no record found so far has the same title:
OpenAlex with `filter=title.search:` (the `select=`ed fields only), Crossref with `query.bibliographic=` (the whole
reference text, 5 rows). Retractions: OpenAlex's `is_retracted` flag; Crossref's `updated-by` notices of type
retraction, withdrawal, removal or expression_of_concern (with the notice's date and DOI). A Crossref record that
is itself such a notice (its `update-to` names the work it updates) is not the cited work: the work it names is
fetched instead, carrying the notice.

Politeness: requests to one API are spaced (OpenAlex 10 a second, Crossref 5); the e-mail joins OpenAlex's polite
pool (`mailto=`, with `api_key=` when given) and Crossref's (in the User-Agent, as Crossref asks). Rate-limit
answers (429) and server errors (5xx) are retried after the server's Retry-After or a doubling wait while the
document's time budget lasts; a wait longer than the budget left pauses that API for the rest of the document.
Answers (found or not: a 404 is cached as "none") are kept in an SQLite file under the cache folder for
`cache_days`. A lookup that could not be answered in full (a timeout, a rate limit, a refusal, a body that is
not JSON or not in the API's shape, the budget spent) returns None ("not checked") and leaves the reason in the
source's `problem`; it is never cached.
"""
from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import quote, urlencode

import requests
from rapidfuzz import fuzz

from recommender.corpus.identifiers import find_arxiv, normalize_doi, normalize_title
from recommender.corpus.sources.web import RETRY_STATUS, detail, retry_after
from recommender.references.check import DEFAULT_BUDGET_S, Record, Retraction, Source
from recommender.references.parse import ReferenceItem

API_URLS = {"openalex": "https://api.openalex.org", "crossref": "https://api.crossref.org"}
CACHE_DAYS = 30.0
ROWS = 5  # candidates asked for by a title search
ARXIV_DOI_PREFIX = "10.48550/arxiv."
REQUEST_TIMEOUT_S = 10.0
RETRIES = 3  # of one request, at most (a doubling wait: 1, 2, 4 s), within the budget
SAME_TITLE_RATIO = 90  # rapidfuzz ratio of two normalised titles from which they are taken as the same
MAX_NOTICE_FOLLOWS = 2  # works fetched for the notices (retraction, correction, ...) one answer holds
# Crossref update types that make the updated work suspect, as the reference check's natures
NATURES = {"retraction": "retraction", "withdrawal": "withdrawal", "removal": "removal",
           "expression_of_concern": "expression of concern"}
_NOT_NOTICES = {"new_version", "new_edition"}  # update types whose updating record is a work of its own
_QUERY_CHARS = 400
_TITLE_WORDS = 30
_TAG_RE = re.compile(r"<[^>]+>")
_CACHE_VERSION = 1  # part of every cache key: bump when the kept fields change


class Unanswered(Exception):
    """A request that got no usable answer; the message says why, for the user."""


def default_cache_dir() -> Path:
    """$CITREC_ONLINE_CACHE, else $XDG_CACHE_HOME/citrec/references, else ~/.cache/citrec/references."""
    explicit = os.environ.get("CITREC_ONLINE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "citrec" / "references"


def online_sources(mailto: str | None = None, cache_dir: Path | None = None, budget_s: float = DEFAULT_BUDGET_S,
                   api_urls: Mapping[str, str] = API_URLS, *, api_key: str | None = None,
                   cache_days: float = CACHE_DAYS) -> list[Source]:
    """OpenAlex and Crossref for one document's check, sharing one time budget (`budget_s` seconds from the first
    request) and one disk cache. `mailto` defaults to $OPENALEX_MAILTO, OpenAlex's `api_key` to $OPENALEX_API_KEY;
    `api_urls` ({"openalex": ..., "crossref": ...}) point them elsewhere (a test server)."""
    mailto = mailto if mailto is not None else os.environ.get("OPENALEX_MAILTO", "")
    api_key = api_key if api_key is not None else os.environ.get("OPENALEX_API_KEY", "")
    cache = ResponseCache(Path(cache_dir or default_cache_dir()) / "online.sqlite3", cache_days * 86400.0)
    budget = Budget(budget_s)
    return [OpenAlexSource(api_urls["openalex"], cache, budget, mailto=mailto, api_key=api_key),
            CrossrefSource(api_urls["crossref"], cache, budget, mailto=mailto)]


class Budget:
    """The time one document's online lookups may take, counted from its first request; shared by its sources."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._started: float | None = None

    def left(self) -> float:
        if self._started is None:
            self._started = time.monotonic()
        return self.seconds - (time.monotonic() - self._started)


class ResponseCache:
    """API answers (the works they hold, trimmed to the fields read) by request, in SQLite, for `max_age_s`."""

    def __init__(self, path: Path, max_age_s: float, clock: Callable[[], float] = time.time):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.max_age_s = max_age_s
        self.clock = clock
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=10.0, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, saved REAL NOT NULL, "
                             "works TEXT NOT NULL)")
            self._db.execute("DELETE FROM answers WHERE saved < ?", (self.clock() - max_age_s,))

    def get(self, key: str) -> list[dict] | None:
        with self._lock:
            row = self._db.execute("SELECT saved, works FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None or row[0] < self.clock() - self.max_age_s:
            return None
        return json.loads(row[1])

    def put(self, key: str, works: list[dict]) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?)",
                             (key, self.clock(), json.dumps(works, ensure_ascii=False)))


class PoliteClient:
    """GET requests for JSON, spaced to `per_second`, retried `RETRIES` times on 429/5xx and timeouts (after
    Retry-After, else a doubling wait from `backoff` seconds) while the budget lasts. `get` returns the JSON, None
    for a 404, or raises Unanswered."""

    def __init__(self, service: str, budget: Budget, *, per_second: float, backoff: float = 1.0,
                 headers: Mapping[str, str] | None = None):
        self.service = service
        self.budget = budget
        self.interval = 1.0 / per_second
        self.backoff = backoff
        self.session = requests.Session()
        self.session.headers.update({"Accept": "application/json", **(headers or {})})
        self._lock = threading.Lock()
        self._next_turn = 0.0
        self._paused_until = 0.0
        self._down = ""  # why the service cannot be reached, once two tries in a row could not connect

    def get(self, url: str, params: Mapping[str, Any]) -> Any:
        attempt = 0
        while True:
            self._check_open()
            self._take_turn()
            left = self.budget.left()
            asked_wait = None
            try:
                response = self.session.get(url, params=params, timeout=min(REQUEST_TIMEOUT_S, max(left, 0.1)))
            except requests.Timeout:
                problem = f"{self.service} did not answer within {min(REQUEST_TIMEOUT_S, left):.0f} s"
            except requests.ConnectionError:
                problem = f"{self.service} cannot be reached (no network?)"
                if attempt:
                    self._down = problem
                    raise Unanswered(problem) from None
            else:
                if response.status_code == 200:
                    return _json_body(response, self.service)
                if response.status_code == 404:
                    return None
                if response.status_code not in RETRY_STATUS:
                    raise Unanswered(f"{self.service} refused the request (HTTP {response.status_code}): "
                                     f"{detail(response)}")
                what = "too many requests" if response.status_code == 429 else "a server error"
                problem = f"{self.service} answered HTTP {response.status_code} ({what})"
                asked_wait = retry_after(response)
            if attempt == RETRIES:
                raise Unanswered(f"{problem}, {RETRIES + 1} tries")
            wait = asked_wait if asked_wait is not None else self.backoff * 2 ** attempt
            if wait >= self.budget.left():
                if asked_wait is not None:
                    self._paused_until = time.monotonic() + asked_wait
                raise Unanswered(f"{problem}; waiting {wait:.1f} s more would overrun the time for online lookups")
            time.sleep(wait)
            attempt += 1

    def _check_open(self) -> None:
        if self._down:
            raise Unanswered(self._down)
        if time.monotonic() < self._paused_until:
            raise Unanswered(f"{self.service} asked to wait {self._paused_until - time.monotonic():.0f} s more")
        if self.budget.left() <= 0:
            raise Unanswered(f"the time for online lookups ({self.budget.seconds:.0f} s) is spent")

    def _take_turn(self) -> None:
        with self._lock:
            now = time.monotonic()
            turn = max(now, self._next_turn)
            self._next_turn = turn + self.interval
        if turn > now:
            time.sleep(turn - now)


class _OnlineSource(ABC):
    """A source answering from an API: identifier lookups, then a title search unless one found the title."""

    name = ""
    fields: tuple[str, ...] = ()  # the fields of a work kept in the cache and read

    def __init__(self, api_url: str, cache: ResponseCache, budget: Budget, *, per_second: float, backoff: float,
                 headers: Mapping[str, str], identity: Mapping[str, str]):
        self.api_url = api_url.rstrip("/")
        self.cache = cache
        self.client = PoliteClient(self.name, budget, per_second=per_second, backoff=backoff, headers=headers)
        self.identity = {k: v for k, v in identity.items() if v}
        self.problem = ""  # why the last lookup that returned None did

    def lookup(self, item: ReferenceItem) -> list[Record] | None:
        """The records that may be the reference's work; None when a request needed got no answer."""
        records: list[Record] = []
        problems: list[str] = []
        asked = False
        for path, params, extract in self._id_requests(item):
            asked = True
            self._ask(path, params, extract, records, problems)
        if not _settled(records, item):
            for path, params, extract in self._title_requests(item):
                asked = True
                self._ask(path, params, extract, records, problems)
        if not asked:
            self.problem = f"{self.name} is asked by DOI, arXiv id or title; this reference gives none"
            return None
        if problems and not _settled(records, item):
            self.problem = problems[0]
            return None
        unique: dict[tuple[str, str], Record] = {}
        for record in records:
            unique.setdefault((record.doi, normalize_title(record.title) if not record.doi else ""), record)
        return list(unique.values())

    def _ask(self, path: str, params: dict[str, Any], extract: Callable[[Any], list], records: list[Record],
             problems: list[str]) -> None:
        try:
            records.extend(self._records(self._works(path, params, extract)))
        except Unanswered as exc:
            problems.append(str(exc))

    def _works(self, path: str, params: dict[str, Any], extract: Callable[[Any], list]) -> list[dict]:
        """The works one request answers (from the cache when it holds the answer); [] for a 404."""
        url = f"{self.api_url}{path}"
        key = f"v{_CACHE_VERSION} {url}?{urlencode(sorted(params.items()))}"
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        payload = self.client.get(url, {**params, **self.identity})
        works = [] if payload is None else extract(payload)
        if not all(isinstance(work, dict) for work in works):
            raise Unanswered(f"{self.name} answered with works that are not objects")
        works = [{k: work[k] for k in self.fields if k in work} for work in works]
        self.cache.put(key, works)
        return works

    @abstractmethod
    def _id_requests(self, item: ReferenceItem) -> list[tuple[str, dict, Callable[[Any], list]]]:
        """(path, params, how to read the works from the answer) of the lookups by identifier."""

    @abstractmethod
    def _title_requests(self, item: ReferenceItem) -> list[tuple[str, dict, Callable[[Any], list]]]:
        """The same for the search by title (or by the reference's text)."""

    @abstractmethod
    def _records(self, works: list[dict]) -> list[Record]:
        """The records of an answer's works."""


class OpenAlexSource(_OnlineSource):
    """OpenAlex: `/works/doi:...` (singleton lookups, free), `/works?filter=title.search:...` (a search, counted
    against the daily allowance, which a free API key raises)."""

    name = "OpenAlex"
    fields = ("id", "doi", "display_name", "publication_year", "authorships", "primary_location", "locations",
              "is_retracted")

    def __init__(self, api_url: str, cache: ResponseCache, budget: Budget, *, mailto: str = "", api_key: str = "",
                 per_second: float = 10.0, backoff: float = 1.0):
        agent = f"citation-recommender/1 (mailto:{mailto})" if mailto else "citation-recommender/1"
        super().__init__(api_url, cache, budget, per_second=per_second, backoff=backoff,
                         headers={"User-Agent": agent}, identity={"mailto": mailto, "api_key": api_key})

    def _id_requests(self, item):
        dois = [item.doi] if item.doi else []
        if item.arxiv and f"{ARXIV_DOI_PREFIX}{item.arxiv}" not in dois:
            dois.append(f"{ARXIV_DOI_PREFIX}{item.arxiv}")
        return [(f"/works/doi:{quote(doi, safe='/')}", {"select": ",".join(self.fields)}, _openalex_work)
                for doi in dois]

    def _title_requests(self, item):
        words = normalize_title(item.title).split()[:_TITLE_WORDS]
        if not words:
            return []
        return [("/works", {"filter": f"title.search:{' '.join(words)}", "per-page": ROWS,
                            "select": ",".join(self.fields)}, _openalex_list)]

    def _records(self, works):
        return [record for record in map(self._record, works) if record is not None]

    def _record(self, work: dict) -> Record | None:
        title = _clean(work.get("display_name"))
        if not title:
            return None
        doi = _doi(work.get("doi"))
        locations = [work.get("primary_location"), *_list(work.get("locations"))]
        urls = [str(place.get(k) or "") for place in locations if isinstance(place, dict)
                for k in ("landing_page_url", "pdf_url")]
        venue = ""
        primary = work.get("primary_location")
        if isinstance(primary, dict) and isinstance(primary.get("source"), dict):
            venue = _clean(primary["source"].get("display_name"))
        authors = tuple(_clean(a["author"].get("display_name")) for a in _list(work.get("authorships"))
                        if isinstance(a, dict) and isinstance(a.get("author"), dict)
                        and _clean(a["author"].get("display_name")))
        year = work.get("publication_year")
        return Record(title=title, authors=authors, year=year if isinstance(year, int) else None, venue=venue,
                      doi=doi, arxiv=find_arxiv(" ".join([f"doi:{doi}", *urls])), source=self.name,
                      url=str(work.get("id") or ""),
                      retraction=Retraction("retraction", "", "", self.name) if work.get("is_retracted") is True
                      else None)


class CrossrefSource(_OnlineSource):
    """Crossref: `/works/{doi}` and `/works?query.bibliographic=...&rows=5`; notices from `updated-by`."""

    name = "Crossref"
    fields = ("DOI", "title", "subtitle", "author", "issued", "container-title", "updated-by", "update-to")

    def __init__(self, api_url: str, cache: ResponseCache, budget: Budget, *, mailto: str = "",
                 per_second: float = 5.0, backoff: float = 1.0):
        agent = f"citation-recommender/1 (mailto:{mailto})" if mailto else "citation-recommender/1"
        super().__init__(api_url, cache, budget, per_second=per_second, backoff=backoff,
                         headers={"User-Agent": agent}, identity={})

    def _id_requests(self, item):
        if not item.doi or item.doi.startswith(ARXIV_DOI_PREFIX):  # arXiv's DOIs are DataCite's, not Crossref's
            return []
        return [self._by_doi(item.doi)]

    def _by_doi(self, doi: str) -> tuple[str, dict, Callable[[Any], list]]:
        return f"/works/{quote(doi, safe='/')}", {}, _crossref_work

    def _title_requests(self, item):
        text = item.raw if item.kind == "text" else " ".join(filter(None, [item.title, str(item.year or "")]))
        text = " ".join(text.split())
        if len(text) > _QUERY_CHARS:
            text = text[:_QUERY_CHARS].rsplit(" ", 1)[0]
        if not text:
            return []
        return [("/works", {"query.bibliographic": text, "rows": ROWS, "select": ",".join(self.fields)},
                 _crossref_list)]

    def _records(self, works):
        """Records of the works; a notice is replaced by the works it updates (fetched when the answer lacks
        them), which then carry it."""
        originals, notices = [], {}
        for work in works:
            targets = _notice_targets(work)
            if not targets:
                originals.append(work)
            for doi, update in targets.items():
                notices.setdefault(doi, []).append(update)
        present = {_crossref_doi(work) for work in originals}
        for doi in [doi for doi in notices if doi not in present][:MAX_NOTICE_FOLLOWS]:
            originals += self._works(*self._by_doi(doi))
        records = [self._record(work, notices.get(_crossref_doi(work), [])) for work in originals]
        return [record for record in records if record.title]

    def _record(self, work: dict, notices: list[dict]) -> Record:
        title = _clean(_first(work.get("title")))
        subtitle = _clean(_first(work.get("subtitle")))
        if subtitle and normalize_title(subtitle) not in normalize_title(title):
            title = f"{title}: {subtitle}"
        authors = []
        for author in _list(work.get("author")):
            if isinstance(author, dict):
                name = _clean(author.get("name")) or _clean(f"{author.get('given') or ''} {author.get('family') or ''}")
                if name:
                    authors.append(name)
        doi = _crossref_doi(work)
        updates = [u for u in _list(work.get("updated-by")) if isinstance(u, dict)] + notices
        return Record(title=title, authors=tuple(authors), year=_issued_year(work.get("issued")),
                      venue=_clean(_first(work.get("container-title"))), doi=doi, arxiv="", source=self.name,
                      url=f"https://doi.org/{doi}" if doi else "", retraction=_crossref_notice(updates))


# ---------------------------------------------------------------------- the APIs' shapes


def _openalex_work(payload: Any) -> list:
    if not isinstance(payload, dict) or not isinstance(payload.get("id"), str):
        raise Unanswered("OpenAlex answered with something that is not a work (no `id`)")
    return [payload]


def _openalex_list(payload: Any) -> list:
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise Unanswered("OpenAlex answered with a list without `results`")
    return payload["results"]


def _crossref_work(payload: Any) -> list:
    message = payload.get("message") if isinstance(payload, dict) else None
    if not isinstance(message, dict):
        raise Unanswered("Crossref answered with something that is not a work (no `message`)")
    return [message]


def _crossref_list(payload: Any) -> list:
    message = payload.get("message") if isinstance(payload, dict) else None
    if not isinstance(message, dict) or not isinstance(message.get("items"), list):
        raise Unanswered("Crossref answered with a list without `message.items`")
    return message["items"]


def _notice_targets(work: dict) -> dict[str, dict]:
    """{DOI of an updated work: the update as `updated-by` would write it} when the work is an update notice."""
    targets = {}
    own = _crossref_doi(work)
    for update in _list(work.get("update-to")):
        if not isinstance(update, dict) or _update_type(update) in _NOT_NOTICES:
            continue
        doi = _doi(update.get("DOI"))
        if doi and doi != own:
            targets[doi] = {**update, "DOI": own}
    return targets


def _crossref_notice(updates: list[dict]) -> Retraction | None:
    """The gravest notice among Crossref updates (a retraction before an expression of concern), its earliest."""
    notices = [u for u in updates if _update_type(u) in NATURES]
    if not notices:
        return None
    best = min(notices, key=lambda u: (_update_type(u) == "expression_of_concern",
                                       _partial_date(u.get("updated")) or "9999", u.get("source") != "publisher"))
    return Retraction(nature=NATURES[_update_type(best)], date=_partial_date(best.get("updated")),
                      notice_doi=_doi(best.get("DOI")),
                      source="Retraction Watch" if best.get("source") == "retraction-watch" else "Crossref")


def _crossref_doi(work: dict) -> str:
    return _doi(work.get("DOI"))


def _update_type(update: dict) -> str:
    return str(update.get("type") or "").strip().lower().replace(" ", "_").replace("-", "_")


def _partial_date(value: Any) -> str:
    """"2010-02-02" (or "2010-02", "2010") from Crossref's {"date-parts": [[2010, 2, 2]]}; "" when absent."""
    parts = value.get("date-parts") if isinstance(value, dict) else None
    first = parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], list) else []
    numbers = [p for p in first[:3] if isinstance(p, int)]
    if not numbers:
        return ""
    return "-".join([f"{numbers[0]:04d}", *(f"{n:02d}" for n in numbers[1:])])


def _issued_year(value: Any) -> int | None:
    date = _partial_date(value)
    return int(date[:4]) if date else None


def _doi(value: Any) -> str:
    return normalize_doi(value) if isinstance(value, str) else ""


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _first(value: Any) -> str:
    if isinstance(value, list):
        return next((str(v) for v in value if isinstance(v, str) and v.strip()), "")
    return value if isinstance(value, str) else ""


def _clean(text: Any) -> str:
    """One line of plain text: no markup (Crossref titles carry JATS tags), entities decoded."""
    return " ".join(html.unescape(_TAG_RE.sub("", text)).split()) if isinstance(text, str) else ""


def _settled(records: list[Record], item: ReferenceItem) -> bool:
    """Whether the records found so far answer for the reference: one has its title, or it gives none to compare."""
    if not normalize_title(item.title):
        return bool(records)
    return any(_same_title(record.title, item.title) for record in records)


def _same_title(a: str, b: str) -> bool:
    a, b = normalize_title(a), normalize_title(b)
    return bool(a and b) and fuzz.ratio(a, b) >= SAME_TITLE_RATIO


# ---------------------------------------------------------------------- HTTP details


def _json_body(response: requests.Response, service: str) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        raise Unanswered(f"{service} answered with something that is not JSON "
                         f"({len(response.content)} bytes, {response.headers.get('Content-Type', 'no type')})"
                         ) from None
