"""The papers' full records in an index version's SQLite store (`papers.sqlite`), keyed by position."""
from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from contextlib import nullcontext
from pathlib import Path
from typing import Iterator

from recommender.paper import Paper

FILE = "papers.sqlite"
CHUNK = 10_000  # records written or read at a time


class Writer:
    """Writes the records of a new version, `CHUNK` at a time, in the order they are added; with `base` (a
    version), after a copy of that version's records."""

    def __init__(self, version: Path, base: Path | None = None):
        if base is not None:
            shutil.copyfile(base / FILE, version / FILE)
        self.db = sqlite3.connect(version / FILE)
        if base is None:
            self.db.execute("CREATE TABLE papers (pos INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, "
                            "record TEXT NOT NULL)")
        self.rows: list[tuple[int, str, str]] = []
        self.count = self.db.execute("SELECT COUNT(*) FROM papers").fetchone()[0]

    def add(self, paper: Paper) -> None:
        self.rows.append((self.count, paper.id, json.dumps(paper.to_dict(), ensure_ascii=False)))
        self.count += 1
        if len(self.rows) >= CHUNK:
            self._flush()

    def _flush(self) -> None:
        with self.db:
            self.db.executemany("INSERT INTO papers VALUES (?, ?, ?)", self.rows)
        self.rows = []

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, kind, error, trace) -> None:
        try:
            if kind is None:
                self._flush()
        finally:
            self.db.close()


def connect(version: Path) -> sqlite3.Connection:
    """A read-only connection to a version's store, usable from any thread (guard it with a lock)."""
    return sqlite3.connect(f"file:{version / FILE}?mode=ro", uri=True, check_same_thread=False)


def chunks(db: sqlite3.Connection, lock: threading.Lock | None = None, start: int = 0) -> Iterator[list[Paper]]:
    """Every paper from position `start` on, in order, `CHUNK` at a time (`lock` held while each chunk is read)."""
    guard = lock or nullcontext()
    first = start
    while True:
        with guard:
            rows = db.execute("SELECT record FROM papers WHERE pos >= ? AND pos < ? ORDER BY pos",
                              (first, first + CHUNK)).fetchall()
        if not rows:
            return
        yield [Paper.from_dict(json.loads(record)) for (record,) in rows]
        first += CHUNK


def staged_chunks(version: Path, start: int = 0) -> Iterator[list[Paper]]:
    """`chunks` of a version being built."""
    db = connect(version)
    try:
        yield from chunks(db, start=start)
    finally:
        db.close()


def field_values(version: Path, name: str) -> Iterator[str | None]:
    """One top-level field of every record, in position order, as SQLite gives it (JSON text for a list)."""
    if not name.isidentifier():
        raise ValueError(f"a record field must be a plain name: {name!r}")
    db = connect(version)
    try:
        yield from (value for (value,) in db.execute(f"SELECT json_extract(record, '$.{name}') FROM papers ORDER BY pos"))
    finally:
        db.close()


def count(version: Path) -> int:
    db = connect(version)
    try:
        return db.execute("SELECT COUNT(*) FROM papers").fetchone()[0]
    finally:
        db.close()
