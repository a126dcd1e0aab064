"""BibTeX corpus files: entries in file order, syntax errors and duplicate keys as unreadable records."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from recommender.corpus.bibtex import author_names, latex_text, parse_library, strip_braces
from recommender.corpus.identifiers import normalize_doi
from recommender.corpus.loaders.files import read_text, with_bad_bytes
from recommender.corpus.loaders.records import RawRecord, RecordError, shown

RAW_FIELDS = {"doi", "url", "eprint", "file", "isbn", "issn", "pages", "volume", "number", "month"}


def read_bibtex(path: Path) -> Iterator[RawRecord]:
    """BibTeX entries, in file order, with syntax errors and duplicate keys as unreadable records."""
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock

    text, bad_lines = read_text(path)
    library = parse_library(text)
    blocks = sorted(library.blocks, key=lambda b: b.start_line)
    first_line_of: dict[str, int] = {}
    for index, block in enumerate(blocks):
        first = block.start_line + 1
        last = blocks[index + 1].start_line if index + 1 < len(blocks) else text.count("\n") + 1
        if isinstance(block, DuplicateBlockKeyBlock):
            seen = first_line_of.get(block.key, "?")
            yield RawRecord(f"entry {block.key} (line {first})", first, last,
                            error=f"duplicate id {shown(block.key)} (first seen at line {seen})")
        elif isinstance(block, ParsingFailedBlock):
            yield RawRecord(f"line {first}", first, last, error=f"BibTeX syntax error: {_bib_error(block)}")
        elif isinstance(block, Entry):
            first_line_of.setdefault(block.key, first)
            yield with_bad_bytes(RawRecord(f"entry {block.key} (line {first})", first, last, data=block), bad_lines)


def _bib_error(block) -> str:
    error = block.error
    message = str(getattr(error, "abort_reason", "") or error or "").strip()
    return message.splitlines()[0] if message else "the entry could not be parsed"


def from_bibtex(entry) -> dict[str, Any]:
    """A parsed entry as a corpus record: LaTeX decoded, identifiers kept as written."""
    fields = {f.key: f.value for f in entry.fields}
    try:
        authors = author_names(fields.pop("author", ""))
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    record: dict[str, Any] = {
        "id": entry.key,
        "title": latex_text(fields.pop("title", "")),
        "abstract": latex_text(fields.pop("abstract", "")),
        "authors": authors,
        "venue": latex_text(fields.pop("journal", "") or fields.pop("booktitle", "")),
        "year": strip_braces(str(fields.pop("year", ""))),
        "entry_type": entry.entry_type.lower(),
    }
    fields.pop("booktitle", None)
    if "doi" in fields:
        record["doi"] = normalize_doi(strip_braces(str(fields.pop("doi"))))
    if "keywords" in fields:
        record["keywords"] = [k.strip() for k in re.split(r"[,;]", latex_text(fields.pop("keywords"))) if k.strip()]
    for name, value in fields.items():
        if isinstance(value, str) and name != "editor":
            record[name] = strip_braces(value) if name in RAW_FIELDS else latex_text(value)
    return record


