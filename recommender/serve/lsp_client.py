"""A small synchronous LSP client over a server's stdio (JSON-RPC, lsprotocol types): what the tests and
bench/lsp_latency.py drive the real server with, as an editor would.

    with StdioClient([sys.executable, "-m", "recommender", "lsp", "--index", DIR]) as client:
        client.initialize(root)
        client.open(path, text, "latex")
        items = client.request(types.TEXT_DOCUMENT_COMPLETION, params, types.CompletionList)

Requests the server sends (`workspace/applyEdit`, ...) are answered as a client that accepts them would, and
the edits are kept (`applied_edits`); notifications are kept too (`diagnostics` by document).
"""
from __future__ import annotations

import itertools
import json
import queue
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter

CONVERTER = get_converter()


class ServerError(RuntimeError):
    """The server answered a request with an error, or stopped."""


class StdioClient:
    """One language server process and the conversation with it."""

    def __init__(self, command: list[str], *, cwd: str | Path | None = None, env: dict[str, str] | None = None):
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                        cwd=cwd, env=env)
        self._ids = itertools.count(1)
        self._incoming: queue.Queue[dict | None] = queue.Queue()
        self._answers: dict[int, dict] = {}
        self._lock = threading.Lock()
        self.applied_edits: list[types.WorkspaceEdit] = []
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.notifications: list[dict] = []
        self._versions: dict[str, int] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def __enter__(self) -> "StdioClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ messages

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self._incoming.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            self._incoming.put(json.loads(stream.read(length)))

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        with self._lock:
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()

    def _handle(self, message: dict) -> None:
        """A message from the server: an answer kept, a request answered, a notification kept."""
        if "id" in message and "method" not in message:
            self._answers[message["id"]] = message
            return
        if "id" in message:
            result = None
            if message["method"] == types.WORKSPACE_APPLY_EDIT:
                params = CONVERTER.structure(message["params"], types.ApplyWorkspaceEditParams)
                self.applied_edits.append(params.edit)
                result = {"applied": True}
            self._send({"id": message["id"], "result": result})
            return
        self.notifications.append(message)
        if message["method"] == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            params = CONVERTER.structure(message["params"], types.PublishDiagnosticsParams)
            self.diagnostics[params.uri] = params.diagnostics

    def pump(self, timeout: float) -> bool:
        """Handle the messages that come within `timeout` seconds of each other; False once the server stopped."""
        try:
            message = self._incoming.get(timeout=timeout)
        except queue.Empty:
            return True
        if message is None:
            raise ServerError(f"the server stopped (exit {self.process.poll()}): {self.stderr()[-2000:]}")
        self._handle(message)
        return True

    def request(self, method: str, params: Any, result_type: Any = None, timeout: float = 120.0) -> Any:
        """Send a request and wait for its answer (structured as `result_type` when given)."""
        number = next(self._ids)
        self._send({"id": number, "method": method, "params": CONVERTER.unstructure(params)})
        deadline = time.monotonic() + timeout
        while number not in self._answers:
            if time.monotonic() > deadline:
                raise ServerError(f"no answer to {method} within {timeout} s")
            self.pump(0.05)
        answer = self._answers.pop(number)
        if "error" in answer:
            raise ServerError(f"{method}: {answer['error'].get('message')}")
        result = answer.get("result")
        return CONVERTER.structure(result, result_type) if result_type is not None and result is not None else result

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": CONVERTER.unstructure(params)})

    def wait_for(self, condition, timeout: float = 60.0) -> None:
        """Handle messages until `condition()` holds (ServerError after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise ServerError(f"timed out after {timeout} s waiting for the server")
            self.pump(0.05)

    def stderr(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", errors="replace")

    # ------------------------------------------------------------------ the editor's side

    def initialize(self, root: Path) -> types.InitializeResult:
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True, workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=True, resource_operations=[types.ResourceOperationKind.Create])),
            text_document=types.TextDocumentClientCapabilities(
                completion=types.CompletionClientCapabilities(completion_item=types.ClientCompletionItemOptions(
                    documentation_format=[types.MarkupKind.Markdown])),
                hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities()))
        result = self.request(types.INITIALIZE, types.InitializeParams(
            capabilities=capabilities, process_id=None, root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)]), types.InitializeResult)
        self.notify(types.INITIALIZED, types.InitializedParams())
        return result

    def open(self, path: Path, text: str, language: str) -> str:
        uri = path.as_uri()
        self._versions[uri] = 1
        self.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, language, 1, text)))
        return uri

    def replace(self, uri: str, text: str) -> None:
        """The document's whole text changed (a full-text didChange)."""
        self._versions[uri] += 1
        self.notify(types.TEXT_DOCUMENT_DID_CHANGE, types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(self._versions[uri], uri),
            [types.TextDocumentContentChangeWholeDocument(text)]))

    def completion(self, uri: str, line: int, character: int, timeout: float = 120.0) -> types.CompletionList:
        return self.request(types.TEXT_DOCUMENT_COMPLETION, types.CompletionParams(
            types.TextDocumentIdentifier(uri), types.Position(line, character)), types.CompletionList, timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.request(types.SHUTDOWN, None, timeout=10)
                self.notify(types.EXIT, None)
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (ServerError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._log.close()


def position_of(text: str, offset: int) -> tuple[int, int]:
    """(line, UTF-16 character) of a character offset: an LSP position."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return line, len(text[start:offset].encode("utf-16-le")) // 2
