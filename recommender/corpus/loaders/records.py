"""What loading a corpus gives: papers, problems, counts; and the raw record and error of one entry."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recommender.paper import Paper

MAX_SHOWN = 60  # characters of a bad value quoted in a message


class CorpusError(ValueError):
    """A corpus file that cannot be used (or, in strict mode, holds a bad record)."""


@dataclass(frozen=True)
class Problem:
    """Something wrong with one place of a corpus file."""

    file: str
    location: str  # e.g. "line 12", "entry smith2020 (line 3)", "item 4 (line 20)"
    message: str
    severity: str = "error"  # "error": the record was skipped; "warning": it was kept

    def __str__(self) -> str:
        return f"{self.file}: {self.location}: {self.severity}: {self.message}"


@dataclass
class LoadResult:
    """The papers that passed validation, what was wrong with the others, and counts."""

    path: str
    format: str
    papers: list[Paper] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    read: int = 0  # records seen, good or bad

    @property
    def kept(self) -> int:
        return len(self.papers)

    @property
    def skipped(self) -> int:
        return self.read - self.kept

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def summary(self) -> str:
        return (f"{self.path} ({self.format}): read {self.read}, kept {self.kept}, skipped {self.skipped}, "
                f"{len(self.errors)} errors, {len(self.warnings)} warnings")


class RecordError(Exception):
    """A bad record; the message says what is wrong with it."""


@dataclass
class RawRecord:
    """One record as read from the file, before validation."""

    location: str
    first_line: int
    last_line: int
    data: Any = None
    error: str = ""  # set when the record could not even be read


def shown(value: Any) -> str:
    """A value quoted for a message: printable characters only, cut to a readable length."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(value))
    return f"“{text[:MAX_SHOWN]}{'…' if len(text) > MAX_SHOWN else ''}”"


def type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__)
