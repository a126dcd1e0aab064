"""What a source knows of a work (`Record`) and of a notice on it (`Retraction`): the reference check's records,
shared by every source and by the comparison. `references.check` exports them with the rest of the interface."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Retraction:
    """A notice on a work: its nature ("retraction", "expression of concern", "correction", ...), its date
    (ISO, "" when unknown), the notice's own DOI ("" when unknown) and who said so ("Retraction Watch",
    "OpenAlex", "Crossref", "the corpus")."""

    nature: str
    date: str
    notice_doi: str
    source: str


@dataclass(frozen=True)
class Record:
    """What one source knows of a work. `authors` are names as the source writes them; `doi` and `arxiv` are
    bare lowercase ids ("" when unknown); `source` is the `Source.name` that gave it; `retraction` is set when the
    source knows of a notice on the work."""

    title: str
    authors: tuple[str, ...]
    year: int | None
    venue: str
    doi: str
    arxiv: str
    source: str
    url: str = ""
    retraction: Retraction | None = None
