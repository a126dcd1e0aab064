"""A whole field from the Semantic Scholar Datasets files (papers, abstracts, citations) the user downloaded.

The folder holds JSONL shards, gzipped or not, in any layout: each file's kind is told from its first
record (`citingcorpusid` → citations, `abstract` without `title` → abstracts, `title` → papers). Three
streamed passes: the papers kept by the filters (fields of study, years, venues) go to a temporary SQLite
file next to the output, then their abstracts, then the citations between two kept papers. Memory holds
only the set of kept corpus ids. Ids are "CorpusId:N", as in `semantic_scholar`.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import sqlite3
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tqdm import tqdm

from recommender.corpus.sources.corpus_file import ReferenceCount, Summary, write_corpus
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.semantic_scholar import corpus_record

KINDS = ("papers", "abstracts", "citations")
_CITING_RE = re.compile(rb'"citingcorpusid"\s*:\s*(\d+)')
_CITED_RE = re.compile(rb'"citedcorpusid"\s*:\s*(\d+)')
_READ_ERRORS = (OSError, EOFError, zlib.error)


@dataclass(frozen=True)
class DatasetFilter:
    """Papers kept: any of the fields of study, within the years, any of the venues (case and spaces ignored)."""

    fields_of_study: tuple[str, ...] = ()
    year_min: int | None = None
    year_max: int | None = None
    venues: tuple[str, ...] = ()
    _fields: frozenset = field(init=False, repr=False, compare=False)
    _venues: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_fields", frozenset(_folded(f) for f in self.fields_of_study))
        object.__setattr__(self, "_venues", frozenset(_folded(v) for v in self.venues))

    def keeps(self, paper: dict[str, Any]) -> bool:
        year = paper.get("year")
        if self.year_min is not None and not (isinstance(year, int) and year >= self.year_min):
            return False
        if self.year_max is not None and not (isinstance(year, int) and year <= self.year_max):
            return False
        if self._fields and not self._fields & _fields_of_study(paper):
            return False
        if self._venues:
            journal = paper.get("journal") if isinstance(paper.get("journal"), dict) else {}
            names = {_folded(paper.get("venue") or ""), _folded(journal.get("name") or "")}
            if not self._venues & names:
                return False
        return True


def _folded(text: Any) -> str:
    return " ".join(str(text).casefold().split())


def _fields_of_study(paper: dict[str, Any]) -> set[str]:
    found = {_folded(f["category"]) for f in paper.get("s2fieldsofstudy") or []
             if isinstance(f, dict) and f.get("category")}
    found |= {_folded(f) for f in paper.get("fieldsofstudy") or [] if isinstance(f, str)}
    return found


def paper_record(paper: dict[str, Any]) -> dict[str, Any] | None:
    """A Datasets `papers` row as a corpus record (abstract and references filled in later)."""
    if not isinstance(paper.get("corpusid"), int):
        return None
    journal = paper.get("journal") if isinstance(paper.get("journal"), dict) else {}
    return corpus_record(paper, paper["corpusid"], title=" ".join(str(paper.get("title") or "").split()),
                         abstract="", venue=str(paper.get("venue") or journal.get("name") or ""), references=[],
                         external_ids=paper.get("externalids"), date_field="publicationdate")


def dataset_files(folder: str | Path) -> dict[str, list[Path]]:
    """The folder's data files by kind (each kind in name order)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SourceError(f"{folder}: not a folder (give the folder the Datasets shards were downloaded to)")
    found: dict[str, list[Path]] = {kind: [] for kind in KINDS}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
        kind = _kind_of(path)
        if kind:
            found[kind].append(path)
    if not found["papers"]:
        raise SourceError(f"{folder}: no `papers` shards found (JSONL files whose records have corpusid and title)")
    return found


def _kind_of(path: Path) -> str | None:
    try:
        with _open(path) as handle:
            line = handle.readline(1 << 20)
    except _READ_ERRORS:
        return None
    try:
        first = json.loads(line)
    except ValueError:
        return None
    if not isinstance(first, dict):
        return None
    if "citingcorpusid" in first:
        return "citations"
    if "title" in first and "corpusid" in first:
        return "papers"
    if "abstract" in first and "corpusid" in first:
        return "abstracts"
    return None


def _open(path: Path):
    with path.open("rb") as handle:
        magic = handle.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else path.open("rb")


def _lines(path: Path, bar: tqdm) -> Iterator[bytes]:
    """The file's lines, with a clear error when it is damaged (a cut-short download)."""
    number = 0
    try:
        with _open(path) as handle:
            for number, line in enumerate(handle, start=1):
                bar.update(1)
                yield line
    except _READ_ERRORS as exc:
        raise SourceError(f"{path}: cannot read past line {number} ({type(exc).__name__}: the file is damaged or "
                          "cut short); download that shard again") from None


def _json_rows(path: Path, bar: tqdm) -> Iterator[dict[str, Any]]:
    """The file's lines that are JSON objects; other lines (not JSON, or not an object) are passed over."""
    for line in _lines(path, bar):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            yield row


def build_from_datasets(folder: str | Path, out: str | Path, keep: DatasetFilter, *, limit: int | None = None,
                        progress: bool = True) -> Summary:
    """Filter the Datasets shards in `folder` into the corpus file `out`."""
    if limit is not None and limit < 1:
        raise SourceError("--limit must be at least 1")
    files = dataset_files(folder)
    out = Path(out)
    spool = out.with_name(f".{out.name}.{os.getpid()}.sqlite")
    db = sqlite3.connect(spool)
    try:
        db.execute("CREATE TABLE paper (id INTEGER PRIMARY KEY, record TEXT NOT NULL, abstract TEXT)")
        db.execute("CREATE TABLE cites (citing INTEGER NOT NULL, cited INTEGER NOT NULL)")
        with tqdm(desc="Datasets lines", unit=" lines", disable=not progress or None, dynamic_ncols=True) as bar:
            kept = _read_papers(files["papers"], keep, limit, db, bar)
            _read_abstracts(files["abstracts"], kept, db, bar)
            _read_citations(files["citations"], kept, db, bar)
        db.execute("CREATE INDEX cites_by_citing ON cites (citing)")
        count = ReferenceCount()
        written = write_corpus(_records(db, count), out)
    finally:
        db.close()
        spool.unlink(missing_ok=True)
    notes = [] if files["citations"] else ["no citations shards in the folder: the papers have no references"]
    if not files["abstracts"]:
        notes.append("no abstracts shards in the folder: papers are indexed by their titles only")
    return Summary(str(out), written, count, notes=notes)


def _read_papers(paths: list[Path], keep: DatasetFilter, limit: int | None, db: sqlite3.Connection,
                 bar: tqdm) -> set[int]:
    kept: set[int] = set()
    for path in paths:
        rows = []
        for paper in _json_rows(path, bar):
            if not keep.keeps(paper):
                continue
            record = paper_record(paper)
            if record is None or not record["title"] or paper["corpusid"] in kept:
                continue
            kept.add(paper["corpusid"])
            rows.append((paper["corpusid"], json.dumps(record, ensure_ascii=False)))
            if limit is not None and len(kept) >= limit:
                break
        db.executemany("INSERT INTO paper (id, record) VALUES (?, ?)", rows)
        if limit is not None and len(kept) >= limit:
            break
    return kept


def _read_abstracts(paths: list[Path], kept: set[int], db: sqlite3.Connection, bar: tqdm) -> None:
    for path in paths:
        rows = []
        for row in _json_rows(path, bar):
            if row.get("corpusid") in kept and isinstance(row.get("abstract"), str):
                rows.append((" ".join(row["abstract"].split()), row["corpusid"]))
        db.executemany("UPDATE paper SET abstract = ? WHERE id = ?", rows)


def _read_citations(paths: list[Path], kept: set[int], db: sqlite3.Connection, bar: tqdm) -> None:
    """Citation edges between kept papers; ids are read without parsing the whole line (billions of lines)."""
    for path in paths:
        rows = []
        for line in _lines(path, bar):
            citing, cited = _CITING_RE.search(line), _CITED_RE.search(line)
            if citing and cited:
                a, b = int(citing.group(1)), int(cited.group(1))
                if a in kept and b in kept and a != b:
                    rows.append((a, b))
            if len(rows) >= 100_000:
                db.executemany("INSERT INTO cites VALUES (?, ?)", rows)
                rows = []
        db.executemany("INSERT INTO cites VALUES (?, ?)", rows)


def _records(db: sqlite3.Connection, count: ReferenceCount) -> Iterator[dict[str, Any]]:
    """The kept papers (all with a title) with their abstracts and references."""
    reader = db.cursor()
    for paper_id, text, abstract in reader.execute("SELECT id, record, abstract FROM paper ORDER BY id"):
        record = json.loads(text)
        record["abstract"] = abstract or ""
        refs = [f"CorpusId:{cited}" for (cited,) in
                db.execute("SELECT DISTINCT cited FROM cites WHERE citing = ? ORDER BY cited", (paper_id,))]
        count.kept += len(refs)
        record["references"] = refs
        yield record
