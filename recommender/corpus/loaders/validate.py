"""Checking raw records and turning them into papers, in file order, with duplicate ids and dangling references."""
from __future__ import annotations

import re
from typing import Any, Callable

from recommender.corpus.loaders.records import CorpusError, LoadResult, Problem, RawRecord, RecordError, shown, type_name
from recommender.paper import CORE_FIELDS, Paper

WHOLE_NUMBER_RE = re.compile(r"^\s*[+-]?\d+\s*$")
MAX_LISTED_REFS = 5


class Validator:
    """Turns raw records into papers in file order, tracking ids and problems."""

    def __init__(self, result: LoadResult, strict: bool):
        self.result = result
        self.strict = strict
        self.first_seen: dict[str, str] = {}
        self.locations: list[str] = []

    def report(self, location: str, message: str, severity: str = "error") -> None:
        problem = Problem(self.result.path, location, message, severity)
        if self.strict and severity == "error":
            raise CorpusError(f"{problem.file}: {problem.location}: {problem.message}")
        self.result.problems.append(problem)

    def add(self, raw: RawRecord, convert: Callable[[Any], dict[str, Any]]) -> None:
        self.result.read += 1
        try:
            if raw.error:
                raise RecordError(raw.error)
            paper = to_paper(convert(raw.data))
            if paper.id in self.first_seen:
                raise RecordError(f"duplicate id {shown(paper.id)} (first seen at {self.first_seen[paper.id]})")
        except RecordError as exc:
            self.report(raw.location, str(exc))
            return
        self.first_seen[paper.id] = raw.location
        self.result.papers.append(paper)
        self.locations.append(raw.location)

    def finish(self) -> None:
        """Drop references to ids that are not in the corpus, with a warning per paper."""
        known = set(self.first_seen)
        for paper, location in zip(self.result.papers, self.locations):
            dangling = [ref for ref in paper.references if ref not in known]
            if not dangling:
                continue
            paper.references = [ref for ref in paper.references if ref in known]
            shown = ", ".join(dangling[:MAX_LISTED_REFS]) + (", ..." if len(dangling) > MAX_LISTED_REFS else "")
            self.report(location, f"dropped {len(dangling)} reference(s) to ids not in the corpus: {shown}",
                        severity="warning")
        if self.result.read == 0:
            self.report("file", "no records found", severity="warning")


def to_paper(record: Any) -> Paper:
    """Check the types of a normalized record and build the paper."""
    if not isinstance(record, dict):
        raise RecordError(f"expected a JSON object, got {type_name(record)}")
    paper_id = record.get("id")
    if paper_id is None or (isinstance(paper_id, str) and not paper_id.strip()):
        raise RecordError("missing id")
    if isinstance(paper_id, bool) or not isinstance(paper_id, (str, int)):
        raise RecordError(f"id must be a string, got {type_name(paper_id)}")
    title, abstract = _text_field(record, "title"), _text_field(record, "abstract")
    if not title.strip() and not abstract.strip():
        raise RecordError("has neither title nor abstract")
    if not isinstance(record.get("keywords"), str):  # indexed with title and abstract: text or a list of texts
        _string_list(record.get("keywords"), "keywords")
    return Paper(
        id=str(paper_id).strip(),
        title=title,
        abstract=abstract,
        authors=_string_list(record.get("authors"), "authors"),
        venue=_text_field(record, "venue"),
        year=parse_year(record.get("year")),
        references=_string_list(record.get("references"), "references", allow_int=True),
        extra={k: v for k, v in record.items() if k not in CORE_FIELDS},
    )


def _text_field(record: dict, name: str) -> str:
    value = record.get(name)
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise RecordError(f"{name} must be a string, got {type_name(value)}")


def _string_list(value: Any, name: str, allow_int: bool = False) -> list[str]:
    if type(value) is list and all(type(item) is str for item in value):
        return value
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(f"{name} must be a list of strings, got {type_name(value)}")
    allowed = (str, int) if allow_int else (str,)
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, allowed):
            raise RecordError(f"{name}[{i}] must be a string, got {type_name(item)}")
    return [str(item) for item in value]


def parse_year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and WHOLE_NUMBER_RE.match(value):
        return int(value)
    raise RecordError(f"year must be a whole number, got {shown(value)}")

