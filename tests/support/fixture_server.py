"""A real local HTTP server for the corpus-source tests: a route function answers each request from fixtures.

`FixtureServer(route)` serves on 127.0.0.1 at a free port in a thread. `route(request)` returns
(status, body, headers) where body is a JSON-able value; `failures` lets a test make chosen requests fail
(e.g. a 500 on the third page, or one 429) before they succeed. Every request is logged in `requests`.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Failure:
    """Answer requests matching `when` with `status` (and `headers`), `times` times (forever when None)."""

    when: Callable[[Request], bool]
    status: int
    times: int | None = 1
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


def fixture(*parts: str) -> Any:
    return json.loads(FIXTURES.joinpath(*parts).read_text(encoding="utf-8"))


class FixtureServer:
    def __init__(self, route: Callable[[Request], tuple[int, Any, dict]]):
        self.route = route
        self.requests: list[Request] = []
        self.failures: list[Failure] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self._answer(None)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                self._answer(json.loads(self.rfile.read(length)) if length else None)

            def _answer(self, body):
                parts = urlsplit(self.path)
                request = Request(self.command, parts.path,
                                  {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}, body,
                                  dict(self.headers.items()))
                server.requests.append(request)
                status, payload, headers = server.answer(request)
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def answer(self, request: Request) -> tuple[int, Any, dict]:
        for failure in self.failures:
            if (failure.times is None or failure.times > 0) and failure.when(request):
                if failure.times is not None:
                    failure.times -= 1
                return failure.status, failure.body or {"error": f"HTTP {failure.status}"}, failure.headers
        return self.route(request)

    def __enter__(self) -> "FixtureServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
