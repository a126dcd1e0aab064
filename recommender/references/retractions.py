"""Retraction notices kept locally: the Retraction Watch data file imported once, then looked up offline.

    python -m recommender retractions import retraction_watch.csv   # the CSV Crossref publishes openly
    python -m recommender retractions info

The CSV (https://gitlab.com/crossref/retraction-watch-data) has one row per notice: `Record ID`, `Title`,
`Journal`, `Author` (names separated by ";"), `RetractionDate`, `RetractionDOI`, `OriginalPaperDate`,
`OriginalPaperDOI`, `RetractionNature` ("Retraction", "Expression of concern", "Correction", "Reinstatement"),
`Reason`, ... Dates are written "M/D/YYYY H:MM" (ISO dates are read too); an unknown DOI is "unavailable".

The store is one SQLite file: `--store FILE`, else $CITREC_RETRACTIONS, else $XDG_DATA_HOME/citrec/retractions.sqlite
(~/.local/share/citrec/retractions.sqlite). An import replaces what the store held (the CSV is a full snapshot),
written to a temporary file first, so a reader never sees half an import.

A work counts as retracted (or under an expression of concern) when its latest notice of those kinds is not
followed by a reinstatement; corrections are kept but flag nothing. Works are found by DOI, or by their exact title
(normalised; titles of four words or more, within a year of the work's year when both are known).
"""
from __future__ import annotations

import csv
import io
import os
import re
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from recommender.corpus.identifiers import normalize_doi, normalize_title
from recommender.references.records import Record, Retraction
from recommender.references.text import decode_text

SOURCE = "Retraction Watch"
REQUIRED_COLUMNS = ("OriginalPaperDOI", "Title", "RetractionDOI", "RetractionDate", "RetractionNature")
FLAGGING = ("retraction", "expression of concern")  # natures that make a work suspect, most serious first
MIN_TITLE_WORDS = 4  # shorter titles are not looked up by title alone ("Editorial", "Introduction")
_UNKNOWN = {"", "unavailable", "unknown", "n/a", "na", "none", "0"}
_US_DATE_RE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})")
_ISO_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_SCHEMA = """
CREATE TABLE notices (record_id TEXT, doi TEXT, title_key TEXT, title TEXT, authors TEXT, journal TEXT,
                      year INTEGER, nature TEXT, date TEXT, notice_doi TEXT, reason TEXT);
CREATE INDEX notices_doi ON notices (doi);
CREATE INDEX notices_title ON notices (title_key);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
"""


def default_store_path() -> Path:
    """$CITREC_RETRACTIONS, else $XDG_DATA_HOME/citrec/retractions.sqlite, else ~/.local/share/citrec/..."""
    explicit = os.environ.get("CITREC_RETRACTIONS")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "citrec" / "retractions.sqlite"


@dataclass
class ImportSummary:
    path: Path
    rows: int  # notices read
    stored: int  # notices kept (a DOI or a title to find their work by)
    flagging: int  # of them retractions and expressions of concern
    skipped: int  # rows with neither an original DOI nor a title

    def describe(self) -> str:
        skipped = f"; {self.skipped:,} rows without an original DOI or title skipped" if self.skipped else ""
        return (f"imported {self.stored:,} notices ({self.flagging:,} retractions and expressions of concern) "
                f"from {self.rows:,} rows into {self.path}{skipped}")


def import_csv(source: str | os.PathLike, store: str | os.PathLike | None = None) -> ImportSummary:
    """Read a Retraction Watch CSV into the store (replacing what it held). ValueError when the file is not one."""
    path = Path(store) if store else default_store_path()
    text = decode_text(Path(source).read_bytes())
    reader = csv.DictReader(io.StringIO(text, newline=""))
    columns = {(name or "").strip().casefold(): name for name in reader.fieldnames or []}
    missing = [name for name in REQUIRED_COLUMNS if name.casefold() not in columns]
    if missing:
        raise ValueError(f"{source} is not a Retraction Watch CSV: it lacks the column"
                         f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}")

    def get(row: dict, name: str) -> str:
        key = columns.get(name.casefold())
        return str(row.get(key) or "").strip() if key else ""

    rows, kept, flagging, skipped = 0, [], 0, 0
    for row in reader:
        rows += 1
        doi = _doi(get(row, "OriginalPaperDOI"))
        title = " ".join(get(row, "Title").split())
        if not doi and not title:
            skipped += 1
            continue
        nature = " ".join(get(row, "RetractionNature").split()).casefold()
        flagging += nature in FLAGGING
        original = _date(get(row, "OriginalPaperDate"))
        kept.append((get(row, "Record ID"), doi, "".join(normalize_title(title).split()), title,
                     get(row, "Author"), get(row, "Journal"), int(original[:4]) if original[:4].isdigit() else None,
                     nature, _date(get(row, "RetractionDate")), _doi(get(row, "RetractionDOI")), get(row, "Reason")))
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=".retractions-", suffix=".sqlite", dir=path.parent)
    os.close(handle)
    try:
        db = sqlite3.connect(staging)
        with db:
            db.executescript(_SCHEMA)
            db.executemany("INSERT INTO notices VALUES (?,?,?,?,?,?,?,?,?,?,?)", kept)
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("file", str(Path(source).resolve())), ("imported", time.strftime("%Y-%m-%d %H:%M:%S")),
                ("rows", str(rows))])
        db.close()
        os.replace(staging, path)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)
    return ImportSummary(path, rows, len(kept), flagging, skipped)


class RetractionStore:
    """The imported notices, read-only (a `check.RetractionIndex`)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no retraction store at {self.path}: import the Retraction Watch CSV first "
                                    "(python -m recommender retractions import FILE)")
        self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: str | os.PathLike | None = None) -> "RetractionStore | None":
        """The store at `path` (default: `default_store_path()`), or None when nothing was imported there."""
        path = Path(path) if path else default_store_path()
        return cls(path) if path.is_file() else None

    def _rows(self, sql: str, args: tuple) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def __len__(self) -> int:
        return self._rows("SELECT COUNT(*) FROM notices", ())[0][0]

    def info(self) -> dict[str, str]:
        meta = dict(self._rows("SELECT key, value FROM meta", ()))
        flagged = self._rows(f"SELECT COUNT(*) FROM notices WHERE nature IN ({','.join('?' * len(FLAGGING))})",
                             FLAGGING)[0][0]
        return {"store": str(self.path), "notices": f"{len(self):,}", "retractions and concerns": f"{flagged:,}",
                **meta}

    def dois(self) -> set[str]:
        """The DOIs of every work the store flags (for marking a corpus's papers in bulk)."""
        rows = self._rows("SELECT doi, nature, date FROM notices WHERE doi != ''", ())
        works: dict[str, list[tuple]] = {}
        for doi, nature, date in rows:
            works.setdefault(doi, []).append((None, doi, "", "", "", "", None, nature, date, "", ""))
        return {doi for doi, notices in works.items() if _current(notices) is not None}

    def find(self, doi: str = "", title: str = "", year: int | None = None) -> Record | None:
        """The record of a flagged work, by DOI, else by exact normalised title (and year within one)."""
        doi = normalize_doi(doi)
        if doi:
            notice = _current(self._rows("SELECT * FROM notices WHERE doi = ?", (doi,)))
            if notice is not None:
                return notice
        words = normalize_title(title).split()
        if len(words) < MIN_TITLE_WORDS:
            return None
        rows = self._rows("SELECT * FROM notices WHERE title_key = ?", ("".join(words),))
        if year:
            rows = [row for row in rows if row[6] is None or abs(row[6] - year) <= 1]
        by_work: dict[str, list[tuple]] = {}
        for row in rows:
            by_work.setdefault(row[1] or row[0], []).append(row)
        found = [notice for notices in by_work.values() if (notice := _current(notices)) is not None]
        return found[0] if found else None

    def close(self) -> None:
        self._db.close()


def _current(rows: list[tuple]) -> Record | None:
    """The notice that flags a work now: the latest retraction (else expression of concern), unless a
    reinstatement came after it."""
    flagging = [row for row in rows if row[7] in FLAGGING]
    if not flagging:
        return None
    latest = max(row[8] or "" for row in flagging)
    if any(row[7] == "reinstatement" and (row[8] or "") >= latest for row in rows):
        return None
    row = sorted(flagging, key=lambda r: (FLAGGING.index(r[7]), _negated(r[8] or "")))[0]
    record_id, doi, _, title, authors, journal, year, nature, date, notice_doi, _ = row
    return Record(title=title, authors=tuple(a.strip() for a in (authors or "").split(";") if a.strip()), year=year,
                  venue=journal or "", doi=doi or "", arxiv="", source=SOURCE,
                  url=f"https://doi.org/{doi}" if doi else "",
                  retraction=Retraction(nature, date or "", notice_doi or "", SOURCE))


def _negated(date: str) -> tuple:
    """A sort key putting later dates first."""
    return tuple(-ord(ch) for ch in date)


def _doi(text: str) -> str:
    return "" if text.strip().casefold() in _UNKNOWN else normalize_doi(text)


def _date(text: str) -> str:
    """An ISO date ("2021-01-20") from "1/20/2021 0:00" or "2021-01-20..."; other text as it is; "" for none."""
    text = text.strip()
    us, iso = _US_DATE_RE.match(text), _ISO_DATE_RE.match(text)
    try:
        if us:
            return datetime(int(us.group(3)), int(us.group(1)), int(us.group(2))).date().isoformat()
        if iso:
            return datetime(int(iso.group(1)), int(iso.group(2)), int(iso.group(3))).date().isoformat()
    except ValueError:
        return text
    return "" if text.casefold() in _UNKNOWN else text
