"""What the HTTP API checks before it reads a request's body: the client's rate, the bearer token, the body's size.

`Guard` is ASGI middleware; every refusal is a JSON `{"error": ...}` with a 4xx status. The order is the
cheapest first: a client over its rate is refused before its token is compared (guessing tokens is rate
limited too), and a body is refused by its declared length before it is parsed, or while it streams in once it
passes the limit (a chunked upload has no declared length). What is left of a refused body, up to `DRAIN`
bytes, is read and dropped first: a client still sending it then reads the refusal, where closing the
connection on unread data would reset it. A body declared larger is refused before a byte of it is read.
`CatchAll` turns what the routes did not expect into a bare 500.
"""
from __future__ import annotations

import hmac
import logging
import math
import time
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

DRAIN = 4 * 1024 * 1024


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


@dataclass
class Bucket:
    """A token bucket: `tokens` left at `stamp` (monotonic seconds)."""

    tokens: float
    stamp: float


class RateLimiter:
    """`per_minute` requests a minute per client, in bursts of up to `per_minute` (a token bucket per client
    address). Only the event loop calls it: no lock."""

    MAX_CLIENTS = 10_000  # past this many addresses, those with full buckets (idle a minute) are forgotten

    def __init__(self, per_minute: int, clock=time.monotonic):
        self.capacity, self.rate, self.clock = float(per_minute), per_minute / 60.0, clock
        self.buckets: dict[str, Bucket] = {}

    def wait(self, client: str) -> float:
        """0 when the client may go on (its request is counted), else the seconds until it may."""
        now = self.clock()
        bucket = self.buckets.get(client)
        if bucket is None:
            if len(self.buckets) >= self.MAX_CLIENTS:
                self.buckets = {key: b for key, b in self.buckets.items() if self._level(b, now) < self.capacity}
            bucket = self.buckets[client] = Bucket(self.capacity, now)
        bucket.tokens, bucket.stamp = self._level(bucket, now), now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _level(self, bucket: Bucket, now: float) -> float:
        return min(self.capacity, bucket.tokens + (now - bucket.stamp) * self.rate)


class Guard:
    """ASGI middleware in front of the routes. `token`: the bearer token every request outside `open_paths` must
    carry ("" : none needed); `limiter`: a RateLimiter, or None; `body_limit(path)`: the most bytes a request's
    body may have."""

    def __init__(self, app, *, token: str, limiter: RateLimiter | None, body_limit, open_paths: frozenset[str]):
        self.app, self.token, self.limiter = app, token.encode(), limiter
        self.body_limit, self.open_paths = body_limit, open_paths

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            return await self.app(scope, receive, send)
        refusal = self._refusal(scope)
        if refusal is not None:
            return await refusal(scope, receive, send)
        limit = self.body_limit(scope["path"])
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            if int(declared) <= limit + DRAIN:
                await drain(receive)
            return await error_response(413, too_large(limit))(scope, receive, send)
        return await self.app(scope, counted(receive, limit), send)

    def _refusal(self, scope) -> JSONResponse | None:
        if self.limiter is not None:
            wait = self.limiter.wait((scope.get("client") or ("?",))[0])
            if wait:
                return error_response(429, f"Too many requests from this address; try again in {wait:.0f} s.",
                                      {"Retry-After": str(math.ceil(wait))})
        if self.token:
            given = dict(scope["headers"]).get(b"authorization", b"")
            scheme, _, credentials = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(credentials.strip(), self.token):
                return error_response(401, "Missing or wrong bearer token: send 'Authorization: Bearer <token>'.",
                                      {"WWW-Authenticate": "Bearer"})
        return None


class CatchAll:
    """ASGI middleware: an exception from the routes becomes a bare JSON 500 and its traceback goes to the log;
    the connection stays open (uvicorn closes one whose application raised: the client's next request on it
    would fail)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        started = False

        async def send_watched(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_watched)
        except Exception:
            if scope["type"] != "http" or started:
                raise
            logging.getLogger("uvicorn.error").exception("%s %s failed", scope.get("method"), scope.get("path"))
            await error_response(500, "Internal error; the server's log has the details.")(scope, receive, send)


def too_large(limit: int) -> str:
    return f"The request body is over {limit:,} bytes, the most this server reads for this route."


def counted(receive, limit: int):
    """`receive` that refuses the request (413) as soon as its body passes `limit` bytes."""
    seen = 0

    async def receive_counted():
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                if message.get("more_body"):
                    await drain(receive)
                raise HTTPException(413, too_large(limit))
        return message

    return receive_counted


async def drain(receive) -> None:
    """Read and drop the rest of a request's body, up to DRAIN bytes."""
    dropped = 0
    while dropped <= DRAIN:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body"):
            return
        dropped += len(message.get("body", b""))
