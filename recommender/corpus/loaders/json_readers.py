"""JSON corpus files: JSONL streamed line by line, or one document (an array, an API page, one object)."""
from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path
from typing import Any, Iterator

from recommender.corpus.loaders.files import READ_ERRORS, open_binary, read_failure, read_text, with_bad_bytes
from recommender.corpus.loaders.records import CorpusError, RawRecord


def read_jsonl(path: Path) -> Iterator[RawRecord]:
    """One JSON object per line, streamed; a damaged file (e.g. a truncated gzip) is refused as a whole."""
    number = 0
    try:
        handle = open_binary(path)
    except READ_ERRORS as exc:
        raise read_failure(path, exc) from exc
    with handle:
        lines = iter(handle)
        while True:
            try:
                line = next(lines)
            except StopIteration:
                return
            except READ_ERRORS as exc:
                raise read_failure(path, exc, after_line=number) from exc
            number += 1
            if line.strip():
                yield _jsonl_record(line, number)


def _jsonl_record(line: bytes, number: int) -> RawRecord:
    location = f"line {number}"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return RawRecord(location, number, number, error=f"non-UTF-8 bytes (column {exc.start + 1})")
    try:
        return RawRecord(location, number, number, data=json.loads(text.lstrip("\ufeff") if number == 1 else text))
    except json.JSONDecodeError as exc:
        return RawRecord(location, number, number, error=f"not valid JSON: {exc.msg} (column {exc.colno})")


def read_json_any(path: Path) -> Iterator[RawRecord]:
    """JSON records as an array, an API page with a `results` array, a single object, or JSONL."""
    first_line = _first_line(path)
    try:
        first = json.loads(first_line) if first_line.strip() else None
    except ValueError:
        first = None
    stripped = first_line.strip()
    if stripped.startswith("[") or stripped == "{" or (isinstance(first, dict) and "results" in first):
        yield from _read_json_document(path)
    else:
        yield from read_jsonl(path)


def _first_line(path: Path, limit: int = 1 << 24) -> str:
    try:
        with open_binary(path) as handle:
            return handle.readline(limit).decode("utf-8", errors="replace").lstrip("\ufeff")
    except READ_ERRORS as exc:
        raise read_failure(path, exc) from exc


def _read_json_document(path: Path) -> Iterator[RawRecord]:
    """The items of one JSON document, each located by its first line.

    A syntax error ends the reading: the rest cannot be resynchronised, so the file is refused as a whole
    rather than indexed in part.
    """
    text, bad_lines = read_text(path)
    starts = _line_starts(text)
    decoder = json.JSONDecoder()

    def raw_at(pos: int, end: int, label: str, data: Any) -> RawRecord:
        first, last = bisect_right(starts, pos), bisect_right(starts, max(end - 1, pos))
        return with_bad_bytes(RawRecord(f"{label} (line {first})", first, last, data=data), bad_lines)

    pos = _skip_ws(text, 0)
    if pos >= len(text):
        return
    top_is_object = text[pos] == "{"
    try:
        if top_is_object:
            whole, end = decoder.raw_decode(text, pos)
            if not isinstance(whole.get("results"), list):
                yield raw_at(pos, end, "item 1", whole)
                _expect_end(text, end)
                return
            pos = _results_array_start(text, pos)
        if text[pos] != "[":
            raise json.JSONDecodeError("expected a JSON array of records", text, pos)
        pos = _skip_ws(text, pos + 1)
        number = 0
        while text[pos] != "]":
            number += 1
            item, end = decoder.raw_decode(text, pos)
            yield raw_at(pos, end, f"item {number}", item)
            pos = _skip_ws(text, end)
            if text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
            elif text[pos] != "]":
                raise json.JSONDecodeError("expected ',' or ']' after an item", text, pos)
        if not top_is_object:
            _expect_end(text, pos + 1)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno}); the rest "
                          f"of the file cannot be read, so nothing from it was used") from None
    except IndexError:
        raise CorpusError(f"{path}: line {len(starts)}: not valid JSON: the file ends too early (cut short?); "
                          f"nothing from it was used") from None


def _expect_end(text: str, pos: int) -> None:
    if _skip_ws(text, pos) < len(text):
        raise json.JSONDecodeError("extra data after the JSON document", text, _skip_ws(text, pos))


def _results_array_start(text: str, pos: int) -> int:
    """Position of the `results` array in the top-level object that starts at `pos`."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, pos + 1)
    while text[pos] == '"':
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past the colon
        if key == "results":
            return pos
        pos = _skip_ws(text, decoder.raw_decode(text, pos)[1])
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    raise json.JSONDecodeError("no results array", text, pos)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos

