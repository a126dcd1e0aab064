"""The reference check as the command line and the app run it: a file's references, the sources to ask, and the
verdicts as text or JSON.

    items = read_reference_file(Path("paper.pdf"))           # a .bib, a reference list, or any document
    checks = check_references(items, sources(index=index, online=True), RetractionStore.open())
    print(format_checks(items, checks))
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from recommender.references.check import DEFAULT_BUDGET_S, VERDICTS, Check, Source
from recommender.references.match import ReferenceIndex
from recommender.references.parse import ReferenceItem, parse_reference_list
from recommender.terminal import NAME_CHARS, TEXT_CHARS, terminal_safe as safe

LIST_SUFFIXES = {".bib", ".bibtex", ".bbl"}
DOCUMENT_SUFFIXES = {".pdf", ".tex", ".zip", ".gz", ".tgz", ".tar", ".docx", ".md", ".markdown"}
MARKS = {"verified": "✓", "details differ": "≠", "not found": "?", "retracted": "✗", "not checked": "·"}
ONLINE_ENV = "CITREC_REFERENCE_CHECK_ONLINE"  # "1": the app's online setting is offered on a lab server too


def read_reference_file(path: str | os.PathLike, includes_outside: bool = False) -> list[ReferenceItem]:
    """The references of a file: a .bib (or .bbl) list, a document `review` reads (its reference list), or a
    plain-text reference list (a .txt that reads as a document with references gives those)."""
    path = Path(path)
    suffix = path.suffix.casefold()
    if suffix in LIST_SUFFIXES:
        return parse_reference_list(path)
    from recommender.documents.read import read_document

    if suffix in DOCUMENT_SUFFIXES:
        document = read_document(path, path.name, includes_outside=includes_outside)
        if not document.references:
            raise ValueError(f"no reference list was found in {path.name}")
        return list(document.references)
    try:
        document = read_document(path, path.name, includes_outside=includes_outside)
    except ValueError:
        document = None
    if document is not None and len(document.references) >= 2:
        return list(document.references)
    return parse_reference_list(path)


def sources(index=None, references: ReferenceIndex | None = None, online: bool = False, mailto: str | None = None,
            cache_dir: Path | None = None, budget_s: float = DEFAULT_BUDGET_S) -> list[Source]:
    """The sources to ask, in order: the corpus of an open `Index` (its look-up tables `references` when built
    already), then, when `online`, OpenAlex and Crossref (`references.online`)."""
    found: list[Source] = []
    if index is not None:
        from recommender.references.corpus_source import CorpusSource
        found.append(CorpusSource.from_index(index, references))
    if online:
        from recommender.references.online import online_sources
        found += online_sources(mailto=mailto, cache_dir=cache_dir, budget_s=budget_s)
    return found


def summary(checks: list[Check]) -> dict[str, int]:
    counts = Counter(check.verdict for check in checks)
    return {verdict: counts.get(verdict, 0) for verdict in VERDICTS}


def to_json(items: list[ReferenceItem], checks: list[Check], searched: list[str]) -> dict:
    return {
        "sources": searched,
        "summary": summary(checks),
        "references": [{"text": item.raw, "number": item.number, "key": item.key or None, "line": item.line,
                        "title": item.title, "check": check.to_dict()} for item, check in zip(items, checks)],
    }


def label(item: ReferenceItem, position: int) -> str:
    return f"[{item.key}]" if item.key else f"[{item.number or position}]"


def format_checks(items: list[ReferenceItem], checks: list[Check], searched: list[str]) -> str:
    """The verdicts for the terminal: a summary line, then each reference with its verdict and evidence."""
    counts = summary(checks)
    lines = [f"{len(items)} references checked against {', '.join(searched) or 'no source'}: "
             + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v]),
             "Flags are leads to check, not verdicts: a reference that differs or was not found is often a slip "
             "or a work these sources do not hold."]
    for position, (item, check) in enumerate(zip(items, checks), start=1):
        text = item.title or item.raw
        lines.append(f"\n{MARKS[check.verdict]} {label(item, position)} {check.verdict.upper()}: "
                     f"{safe(text, TEXT_CHARS)}")
        for name, (cited, found) in check.differences.items():
            lines.append(f"    {name}: the reference says {safe(cited, TEXT_CHARS)!r}; "
                         f"the record: {safe(found, TEXT_CHARS)!r}")
        if check.verdict != "verified":
            lines.append(f"    {safe(check.note, TEXT_CHARS)}")
        elif check.record is not None:
            lines.append(f"    {safe(check.record.source, NAME_CHARS)}"
                         + (f": {safe(check.record.url, NAME_CHARS)}" if check.record.url else ""))
    return "\n".join(lines)
