"""The arXiv metadata snapshot (Kaggle's `arxiv-metadata-oai-snapshot.json`, one JSON object per line) as a corpus.

Streamed line by line (the file is several GB), gzipped or not. A line's categories are read with a regular
expression first, so only the lines of the wanted categories are parsed. Kept: papers with a category equal
to or under one of the given prefixes ("cs" keeps cs.CL and cs.IR; "hep-th" keeps hep-th), in the years
(the year of the first version, else the one the id encodes). Ids are arXiv ids ("2104.08663",
"hep-th/9901001"); the snapshot has no reference lists, so papers have none.
"""
from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Iterator

from tqdm import tqdm

from recommender.corpus.bibtex import latex_text
from recommender.corpus.identifiers import normalize_doi
from recommender.corpus.loaders.files import open_binary
from recommender.corpus.sources.corpus_file import ReferenceCount, Summary, write_corpus
from recommender.corpus.sources.errors import SourceError

_CATEGORIES_RE = re.compile(rb'"categories"\s*:\s*"([^"]*)"')
_NEW_ID_RE = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}$")
_OLD_ID_RE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?/(\d{2})(\d{2})\d{3}$")
_YEAR_RE = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_READ_ERRORS = (OSError, EOFError, zlib.error)


@dataclass(frozen=True)
class ArxivFilter:
    """Papers kept: a category under one of `categories` (all when empty), within the years."""

    categories: tuple[str, ...] = ()
    year_min: int | None = None
    year_max: int | None = None
    primary_only: bool = False  # only the first (primary) category counts, not cross-lists

    def keeps_categories(self, categories: list[str]) -> bool:
        if not self.categories:
            return True
        considered = categories[:1] if self.primary_only else categories
        return any(c == p or c.startswith(p if p.endswith(".") else p + ".")
                   for c in considered for p in self.categories)

    def keeps_year(self, year: int | None) -> bool:
        if year is None:
            return self.year_min is None and self.year_max is None
        return (self.year_min is None or year >= self.year_min) and (self.year_max is None or year <= self.year_max)


def snapshot_record(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A snapshot entry as a corpus record; None without an id or without title and abstract."""
    arxiv = str(entry.get("id") or "").strip()
    title = " ".join(str(entry.get("title") or "").split())
    abstract = " ".join(str(entry.get("abstract") or "").split())
    if not arxiv or not (title or abstract):
        return None
    record: dict[str, Any] = {
        "id": arxiv,
        "title": title,
        "abstract": abstract,
        "authors": _authors(entry),
        "year": entry_year(entry),
        "venue": "",
        "references": [],
        "arxiv": arxiv,
        "categories": str(entry.get("categories") or "").split(),
    }
    date = _first_version_date(entry)
    if date:
        record["date"] = date
    if entry.get("doi"):
        record["doi"] = normalize_doi(str(entry["doi"]).split()[0])
    if entry.get("journal-ref"):
        record["journal_ref"] = " ".join(str(entry["journal-ref"]).split())
    return record


def entry_year(entry: dict[str, Any]) -> int | None:
    """The year of the first version, else the year the arXiv id encodes (YYMM.NNNNN, archive/YYMMNNN)."""
    versions = entry.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        match = _YEAR_RE.search(str(versions[0].get("created") or ""))
        if match:
            return int(match.group(1))
    arxiv = str(entry.get("id") or "").strip()
    match = _NEW_ID_RE.match(arxiv) or _OLD_ID_RE.match(arxiv)
    if not match:
        return None
    two = int(match.group(1))
    return 1900 + two if two >= 91 else 2000 + two  # arXiv began in August 1991


def _first_version_date(entry: dict[str, Any]) -> str:
    versions = entry.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        try:
            return parsedate_to_datetime(str(versions[0].get("created"))).date().isoformat()
        except (TypeError, ValueError):
            return ""
    return ""


def _authors(entry: dict[str, Any]) -> list[str]:
    """Names as "First Last", from `authors_parsed` ([last, first, suffix]) or else the `authors` string."""
    parsed = entry.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        names = []
        for parts in parsed:
            if isinstance(parts, list) and parts:
                last, first, suffix = (list(map(str, parts)) + ["", ""])[:3]
                names.append(" ".join(p.strip() for p in (first, last, suffix) if p.strip()))
        return [latex_text(n) for n in names if n]
    text = str(entry.get("authors") or "")
    return [latex_text(n.strip()) for n in re.split(r",|\band\b", text) if n.strip()]


def read_snapshot(path: str | Path, keep: ArxivFilter, *, limit: int | None = None,
                  progress: bool = True) -> Iterator[dict[str, Any]]:
    """The kept records of the snapshot, streamed; lines that are not JSON objects are skipped."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"{path}: snapshot file not found (arxiv-metadata-oai-snapshot.json, from Kaggle)")
    kept, number = 0, 0
    try:
        bar = tqdm(desc="arXiv snapshot", unit="B", unit_scale=True, total=path.stat().st_size,
                   disable=not progress or None, dynamic_ncols=True)
        with open_binary(path) as handle, bar:
            for number, line in enumerate(handle, start=1):
                bar.update(len(line))
                found = _CATEGORIES_RE.search(line)
                if found and not keep.keeps_categories(found.group(1).decode("utf-8", "replace").split()):
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(entry, dict) or not keep.keeps_categories(str(entry.get("categories") or "").split()):
                    continue
                record = snapshot_record(entry)
                if record is None or not keep.keeps_year(record["year"]):
                    continue
                yield record
                kept += 1
                if limit is not None and kept >= limit:
                    return
    except _READ_ERRORS as exc:
        raise SourceError(f"{path}: cannot read past line {number} ({type(exc).__name__}: the file is damaged or "
                          "cut short); nothing was written") from None


def build_from_snapshot(path: str | Path, out: str | Path, keep: ArxivFilter, *, limit: int | None = None,
                        progress: bool = True) -> Summary:
    if limit is not None and limit < 1:
        raise SourceError("--limit must be at least 1")
    written = write_corpus(read_snapshot(path, keep, limit=limit, progress=progress), out)
    return Summary(str(out), written, ReferenceCount(),
                   notes=["the arXiv snapshot has no reference lists: the corpus has no citation graph"])
