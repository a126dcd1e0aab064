"""Per-paper columns of an index version (ids, titles, authors, venues, DOIs, years, dates, retraction flags), read
without parsing.

An index keeps each text column as one UTF-8 byte array plus the offset where each paper's text starts
(`.npy` files in the version's `columns/` folder). Opening an index maps them and decodes nothing: a paper's
title is decoded when asked for, a whole column only when a caller walks through it. Authors are a flat column
of names with each paper's first name; venues repeat, so they are stored once each with a code per paper.
"""
from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FOLDER = "columns"
CHUNK = 65536  # entries decoded at a time when a column is walked through


def _position(item, length: int) -> int:
    """A row number of a column of `length` rows, counted from the end when negative; IndexError outside it."""
    i = int(item)
    if i < 0:
        i += length
    if not 0 <= i < length:
        raise IndexError(f"position {item} is outside a column of {length}")
    return i


class TextColumn(Sequence):
    """Strings stored as one UTF-8 array (`blob`) and `offsets` (one more than there are strings)."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray):
        self.blob, self.offsets = blob, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, item):
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(len(self)))]
        i = _position(item, len(self))
        start, end = self.offsets[i:i + 2]
        return self.blob[start:end].tobytes().decode("utf-8")

    def __iter__(self):
        for first in range(0, len(self), CHUNK):
            bounds = self.offsets[first:first + CHUNK + 1].tolist()
            data = self.blob[bounds[0]:bounds[-1]].tobytes()
            base = bounds[0]
            yield from (data[a - base:b - base].decode("utf-8") for a, b in zip(bounds, bounds[1:]))


class ListColumn(Sequence):
    """A list of strings per paper: a flat `TextColumn` of all items and each paper's first item (`starts`)."""

    def __init__(self, items: TextColumn, starts: np.ndarray):
        self.items, self.starts = items, starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, item):
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(len(self)))]
        i = _position(item, len(self))
        start, end = self.starts[i:i + 2]
        return [self.items[j] for j in range(start, end)]

    def __iter__(self):
        items = iter(self.items)
        for count in np.diff(self.starts).tolist():
            yield [next(items) for _ in range(count)]


class CodedColumn(Sequence):
    """Strings that repeat (venues): each distinct one stored once (`values`) and a code per paper."""

    def __init__(self, values: TextColumn, codes: np.ndarray):
        self.values, self.codes = values, codes

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, item):
        if isinstance(item, slice):
            values = list(self.values)
            return [values[c] for c in self.codes[item].tolist()]
        return self.values[int(self.codes[item])]

    def __iter__(self):
        values = list(self.values)
        for first in range(0, len(self), CHUNK):
            yield from (values[c] for c in self.codes[first:first + CHUNK].tolist())


@dataclass
class Columns:
    """What the engine reads of every paper without opening its record."""

    ids: Sequence[str]
    titles: Sequence[str]
    authors: Sequence[list[str]]
    venues: Sequence[str]
    dois: Sequence[str]
    years: np.ndarray  # int32, 0 when unknown
    dates: np.ndarray  # int64 YYYYMMDD, 0 when unknown
    retracted: np.ndarray | None = None  # positions whose record says `is_retracted`; None: not stored (older)


class _TextWriter:
    """A text column gathered as UTF-8 bytes and end offsets (compact: no Python string is kept)."""

    def __init__(self):
        self.blob, self.ends = bytearray(), array("q")

    def add(self, text) -> None:
        self.blob += ("" if text is None else str(text)).encode("utf-8")
        self.ends.append(len(self.blob))

    def save(self, folder: Path, name: str) -> None:
        offsets = np.zeros(len(self.ends) + 1, dtype=np.int64)
        offsets[1:] = np.frombuffer(self.ends, dtype=np.int64)
        np.save(folder / f"{name}.utf8.npy", np.frombuffer(self.blob, dtype=np.uint8))  # no copy
        np.save(folder / f"{name}.offsets.npy", offsets)


class ColumnsWriter:
    """The columns of an index version gathered paper after paper, then written into its `columns/` folder."""

    def __init__(self):
        self.texts = {name: _TextWriter() for name in ("ids", "titles", "dois", "authors")}
        self.author_starts = array("q", [0])
        self.venue_codes, self.venues = array("i"), {}
        self.years, self.dates, self.retracted = array("i"), array("q"), array("q")

    def add(self, id: str, title: str, authors: list[str], venue: str, doi: str, year: int, date: int,
            retracted: bool = False) -> None:
        for name, text in (("ids", id), ("titles", title), ("dois", doi)):
            self.texts[name].add(text)
        for name in authors:
            self.texts["authors"].add(name)
        self.author_starts.append(self.author_starts[-1] + len(authors))
        self.venue_codes.append(self.venues.setdefault(venue or "", len(self.venues)))
        if retracted:
            self.retracted.append(len(self.years))
        self.years.append(year)
        self.dates.append(date)

    def add_columns(self, columns: Columns) -> None:
        """Add every paper of whole columns (a version's, before the papers added to it)."""
        retracted = set(columns.retracted.tolist()) if columns.retracted is not None else set()
        for pos, row in enumerate(zip(columns.ids, columns.titles, columns.authors, columns.venues, columns.dois,
                                      np.asarray(columns.years).tolist(), np.asarray(columns.dates).tolist())):
            self.add(*row, retracted=pos in retracted)

    def write(self, version: Path) -> None:
        """Write the columns into `version`/columns (format 3); the caller's publish fsyncs and checksums them."""
        folder = version / FOLDER
        folder.mkdir()
        for name, writer in self.texts.items():
            writer.save(folder, name)
        np.save(folder / "authors.starts.npy", np.frombuffer(self.author_starts, dtype=np.int64))
        distinct = sorted(self.venues)  # stored in sorted order, each code renumbered to its venue's rank
        rank = np.empty(len(distinct), dtype=np.int32)
        rank[[self.venues[venue] for venue in distinct]] = np.arange(len(distinct), dtype=np.int32)
        venues = _TextWriter()
        for venue in distinct:
            venues.add(venue)
        venues.save(folder, "venues")
        np.save(folder / "venues.codes.npy", rank[np.frombuffer(self.venue_codes, dtype=np.int32)])
        np.save(folder / "years.npy", np.frombuffer(self.years, dtype=np.int32))
        np.save(folder / "dates.npy", np.frombuffer(self.dates, dtype=np.int64))
        np.save(folder / "retracted.npy", np.frombuffer(self.retracted, dtype=np.int64))


def _load_text(folder: Path, name: str) -> TextColumn:
    blob = np.load(folder / f"{name}.utf8.npy", mmap_mode="r")
    offsets = np.load(folder / f"{name}.offsets.npy", mmap_mode="r")
    if blob.dtype != np.uint8 or offsets.ndim != 1 or len(offsets) == 0 or int(offsets[-1]) != len(blob):
        raise ValueError(f"column {name} is inconsistent (offsets do not match its text)")
    return TextColumn(blob, offsets)


def write_columns(version: Path, columns: Columns) -> None:
    """Write whole columns into `version`/columns (format 3), as `ColumnsWriter` does paper after paper."""
    writer = ColumnsWriter()
    writer.add_columns(columns)
    writer.write(version)


def read_columns(version: Path) -> Columns:
    """Map the columns of a format-3 version (nothing is decoded until asked for)."""
    folder = version / FOLDER
    columns = Columns(ids=_load_text(folder, "ids"), titles=_load_text(folder, "titles"),
                      authors=ListColumn(_load_text(folder, "authors"),
                                         np.load(folder / "authors.starts.npy", mmap_mode="r")),
                      venues=CodedColumn(_load_text(folder, "venues"),
                                         np.load(folder / "venues.codes.npy", mmap_mode="r")),
                      dois=_load_text(folder, "dois"),
                      years=np.load(folder / "years.npy"), dates=np.load(folder / "dates.npy"),
                      retracted=np.load(folder / "retracted.npy") if (folder / "retracted.npy").is_file() else None)
    n = len(columns.ids)
    if {len(columns.titles), len(columns.authors), len(columns.venues), len(columns.dois), len(columns.years),
            len(columns.dates)} != {n}:
        raise ValueError("the columns hold different numbers of papers")
    return columns

