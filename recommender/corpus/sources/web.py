"""A polite JSON client for the corpus sources: a cap on requests per second, retries with backoff, one-line errors.

Rate-limit answers (429) and server errors (5xx) are retried after the server's `Retry-After` or, without one,
after a doubling wait; so are dropped connections and timeouts. Any other refusal (a bad filter: 400, a wrong
key: 401/403, an unknown id: 404) stops at once with the server's own explanation.
"""
from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import requests

from recommender.corpus.sources.errors import SourceError

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_WAIT = 120.0  # seconds: the longest pause honoured between two tries
_DETAIL_CHARS = 200


class JsonClient:
    """GET/POST requests that return parsed JSON, spaced to at most `per_second` and retried `retries` times."""

    def __init__(self, service: str, *, per_second: float = 10.0, retries: int = 5, backoff: float = 1.0,
                 timeout: float = 60.0, headers: dict[str, str] | None = None):
        if retries < 0:
            raise SourceError("--retries must be 0 or more")
        self.service = service
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.retries = retries
        self.backoff = backoff
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update({"User-Agent": "citation-recommender-corpus/1", **(headers or {})})
        self.requests_sent = 0
        self._next_allowed = 0.0

    def get(self, url: str, params: dict[str, Any] | str | None = None) -> Any:
        return self.request("GET", url, params=params)

    def post(self, url: str, payload: Any, params: dict[str, Any] | str | None = None) -> Any:
        return self.request("POST", url, params=params, json=payload)

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        host = urlsplit(url).netloc
        problem, wait = "", 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(wait, MAX_WAIT))
            self._take_turn()
            try:
                response = self.session.request(method, url, timeout=self.timeout, **kwargs)
            except requests.Timeout:
                problem = f"{self.service} ({host}) did not answer within {self.timeout:.0f} s"
                wait = self._doubling(attempt)
                continue
            except requests.ConnectionError as exc:
                problem = f"cannot reach {self.service} ({host}): {_connection_reason(exc)}"
                wait = self._doubling(attempt)
                continue
            if response.status_code == 200:
                try:
                    return response.json()
                except ValueError:
                    raise SourceError(f"{self.service} ({host}) answered with something that is not JSON") from None
            if response.status_code not in RETRY_STATUS:
                raise SourceError(f"{self.service} refused the request (HTTP {response.status_code}): "
                                  f"{detail(response)}")
            what = "too many requests" if response.status_code == 429 else "server error"
            problem = f"{self.service} ({host}) answered HTTP {response.status_code} ({what})"
            wait = retry_after(response)
            if wait is None:
                wait = self._doubling(attempt)
        tries = self.retries + 1
        raise SourceError(f"{problem}, {tries} {'try' if tries == 1 else 'tries'}")

    def _doubling(self, attempt: int) -> float:
        return self.backoff * 2 ** attempt

    def _take_turn(self) -> None:
        """Wait until the next request is allowed under the rate cap."""
        now = time.monotonic()
        if now < self._next_allowed:
            time.sleep(self._next_allowed - now)
            now = self._next_allowed
        self._next_allowed = now + self.interval
        self.requests_sent += 1


def retry_after(response: requests.Response) -> float | None:
    """Retry-After in seconds, given as seconds or as an HTTP date; None without one."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def detail(response: requests.Response) -> str:
    """The server's explanation of a refusal, on one line."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        parts = [str(body[k]) for k in ("error", "message") if isinstance(body.get(k), (str, int))]
        text = ": ".join(dict.fromkeys(parts))
    else:
        text = response.text if response.text and "<" not in response.text[:1] else response.reason or ""
    text = " ".join(text.split())
    return (text[:_DETAIL_CHARS] + "…" if len(text) > _DETAIL_CHARS else text) or "no explanation given"


def _connection_reason(exc: requests.ConnectionError) -> str:
    text = str(exc)
    if "NameResolution" in text or "Name or service not known" in text or "getaddrinfo" in text:
        return "the name does not resolve (no network?)"
    if "refused" in text.lower():
        return "connection refused"
    if "reset" in text.lower() or "aborted" in text.lower() or "RemoteDisconnected" in text:
        return "the connection was dropped"
    return "no connection (network down?)"
