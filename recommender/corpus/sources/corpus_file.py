"""Write a corpus as JSONL(.gz), the format `python -m recommender index` reads (see `recommender.corpus.loaders`).

One paper per line: id, title, abstract, authors, year, venue, references (ids of papers in the same file)
and optional extras such as doi, arxiv, url, date. The file is written under a temporary name and renamed
when complete, so an interrupted run never leaves a half-written corpus behind.
"""
from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from recommender.corpus.sources.errors import SourceError

SUFFIXES = (".jsonl", ".jsonl.gz")


def check_out_path(out: str | Path) -> Path:
    """The output path, refused early when it could not be read back as a corpus or cannot be written."""
    out = Path(out)
    if not out.name.lower().endswith(SUFFIXES):
        raise SourceError(f"--out {out}: name the corpus file *.jsonl or *.jsonl.gz (the format `index` reads)")
    if out.is_dir():
        raise SourceError(f"--out {out} is a folder: give a file name")
    if not out.parent.is_dir():
        raise SourceError(f"--out {out}: the folder {out.parent} does not exist")
    return out


@dataclass
class ReferenceCount:
    """References kept (pointing at a paper of the corpus) and dropped (pointing outside it)."""

    kept: int = 0
    outside: int = 0


def within_corpus(records: Iterable[dict[str, Any]], ids: set[str], count: ReferenceCount) -> Iterator[dict[str, Any]]:
    """The records with their references restricted to `ids` (each once, in the source's order)."""
    for record in records:
        refs = list(dict.fromkeys(str(r) for r in record.get("references") or []))
        inside = [r for r in refs if r in ids and r != record["id"]]
        count.kept += len(inside)
        count.outside += len(refs) - len(inside)
        yield {**record, "references": inside}


def write_corpus(records: Iterable[dict[str, Any]], out: str | Path) -> int:
    """Write the records to `out` (gzip when it ends in .gz), atomically; returns how many were written."""
    out = Path(out)
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    written = 0
    try:
        with (gzip.open(temporary, "wt", encoding="utf-8", compresslevel=1) if out.name.endswith(".gz")
              else temporary.open("w", encoding="utf-8")) as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                written += 1
        if not written:
            raise SourceError(f"no papers matched: {out} was not written")
        os.replace(temporary, out)
    finally:
        temporary.unlink(missing_ok=True)
    return written


@dataclass
class Summary:
    """What a finished corpus build wrote, for the command line."""

    out: str
    papers: int
    references: ReferenceCount
    parts: dict[str, int] = field(default_factory=dict)  # e.g. {"seeds": 100, "referenced": 40}
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        parts = ", ".join(f"{n} {name}" for name, n in self.parts.items() if n)
        lines = [f"wrote {self.papers} paper{'' if self.papers == 1 else 's'} to {self.out}"
                 + (f" ({parts})" if parts else "")]
        if self.references.outside:
            lines.append(f"references: {self.references.kept} point at papers of the corpus and are kept, "
                         f"{self.references.outside} point outside it and were dropped")
        elif self.references.kept:
            lines.append(f"references: {self.references.kept} between papers of the corpus")
        return lines + self.notes
