"""The paper record shared by every part of the engine."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CORE_FIELDS = ("id", "title", "abstract", "authors", "venue", "year", "references")


@dataclass
class Paper:
    """One bibliographic record; fields beyond the core ones live in `extra`."""

    id: str
    title: str = ""
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    venue: str = ""
    year: int | None = None
    references: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """Title and abstract as one passage, the unit that is indexed."""
        return ". ".join(part for part in (self.title.strip(), self.abstract.strip()) if part)

    @property
    def doi(self) -> str:
        return str(self.extra.get("doi") or "")

    def to_dict(self) -> dict[str, Any]:
        record = {name: getattr(self, name) for name in CORE_FIELDS}
        record.update(self.extra)
        return record

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> "Paper":
        """Build a paper from an already validated JSON-like record."""
        extra = {k: v for k, v in record.items() if k not in CORE_FIELDS}
        return cls(
            id=str(record["id"]),
            title=record.get("title") or "",
            abstract=record.get("abstract") or "",
            authors=list(record.get("authors") or []),
            venue=record.get("venue") or "",
            year=record.get("year"),
            references=list(record.get("references") or []),
            extra=extra,
        )
