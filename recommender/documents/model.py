"""What a whole draft or submission is made of, once read: title, abstract, passages, markers, references."""
from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Callable

from recommender.query import CITATION_MARK
from recommender.references.parse import ReferenceItem

_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?)])")


@dataclass
class Marker:
    """One citation place in a passage: an existing citation, or a placeholder the author left to fill."""

    text: str  # as written: "\\cite{a,b}", "[3, 5–7]", "(Smith, 2020)", "[CIT]", "\\cite{?}"
    start: int  # character offsets of `text` in the passage's text
    end: int
    placeholder: bool  # True for [CIT], \cite{?}, \cite{}, \cite{TODO}, [?] ...
    references: list[int] = field(default_factory=list)  # positions in Document.references it resolves to


@dataclass
class Passage:
    """A body paragraph (whitespace normalised, markers kept in the text) and where it starts."""

    text: str
    markers: list[Marker] = field(default_factory=list)
    line: int | None = None  # 1-based source line (text formats)
    page: int | None = None  # 1-based page (PDF)
    section: str = ""

    def render(self, start: int = 0, end: int | None = None,
               marked: Callable[[Marker], bool] = lambda marker: False, ordered: list[Marker] | None = None) -> str:
        """text[start:end] with each marker inside it written [CIT] where `marked(marker)`, else removed; spaces
        tidied. `ordered`: the markers sorted by start (`ordered_markers`), from a caller that renders a passage
        once per marker or sentence (thousands of markers would otherwise be sorted thousands of times)."""
        end = len(self.text) if end is None else end
        ordered = self.ordered_markers() if ordered is None else ordered
        pieces, cursor = [], start
        for marker in ordered[bisect_left(ordered, start, key=_start):]:
            if marker.start > end:
                break
            if marker.end > end:
                continue
            pieces.append(self.text[cursor:marker.start])
            pieces.append(f" {CITATION_MARK} " if marked(marker) else " ")
            cursor = marker.end
        pieces.append(self.text[cursor:end])
        return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join("".join(pieces).split()))

    def ordered_markers(self) -> list[Marker]:
        """The markers in order of their start."""
        return sorted(self.markers, key=_start)

    @property
    def where(self) -> dict[str, int]:
        """{"line": n} or {"page": n}: the location key used in reports."""
        if self.page is not None:
            return {"page": self.page}
        return {"line": self.line or 0}


def _start(marker: Marker) -> int:
    return marker.start


@dataclass
class Document:
    """A draft or submission read from PDF, LaTeX, Markdown, plain text or DOCX."""

    title: str
    abstract: str
    passages: list[Passage]  # the body: no title, abstract or reference list
    references: list[ReferenceItem]  # the reference list (the .bib for LaTeX), in document order
    kind: str  # "pdf", "latex", "markdown", "text" or "docx"
    source_text: str = ""  # the LaTeX source when kind == "latex" (to fill placeholders), else ""
    notices: list[str] = field(default_factory=list)  # what the reader could not do, for the user
