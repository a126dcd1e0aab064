"""What a caller asks for and what the engine answers."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

CITATION_MARK = "[CIT]"
_MARK_RE = re.compile(r"\[CIT\]", re.IGNORECASE)


@dataclass
class Query:
    """A recommendation request.

    Global mode: `title`/`abstract` of a draft. Local mode: `context` holds a
    passage with a `[CIT]` placeholder; `title`/`abstract` then act as the
    citing draft's global context.
    """

    title: str = ""
    abstract: str = ""
    context: str = ""
    k: int = 10
    year_min: int | None = None
    year_max: int | None = None
    venues: list[str] = field(default_factory=list)
    exclude: set[str] = field(default_factory=set)
    diversity: float = 0.0
    max_date: str | None = None  # evaluation protocol: only papers dated no later than this
    authors: list[str] = field(default_factory=list)  # the draft's own authors: their earlier work is a candidate

    @property
    def is_local(self) -> bool:
        return bool(self.context.strip())

    @property
    def context_text(self) -> str:
        """The passage without its citation placeholders."""
        return " ".join(_MARK_RE.sub(" ", self.context).split())

    @property
    def global_text(self) -> str:
        return ". ".join(p for p in (self.title.strip(), self.abstract.strip()) if p)

    @property
    def main_text(self) -> str:
        """The text retrieval is driven by: the passage in local mode, else the draft."""
        return self.context_text if self.is_local else self.global_text

    def validate(self) -> None:
        """Raise ValueError with a readable message for an unusable request."""
        if not self.main_text:
            raise ValueError("Give a title or abstract (global mode) or a passage with [CIT] (local mode).")
        if self.k < 1:
            raise ValueError("k must be at least 1.")
        if not 0.0 <= self.diversity:
            raise ValueError("diversity must be zero or positive.")
        if self.year_min is not None and self.year_max is not None and self.year_min > self.year_max:
            raise ValueError("year_min is later than year_max.")


@dataclass
class Recommendation:
    """One recommended paper with the evidence behind its rank."""

    paper_id: str
    title: str
    authors: list[str]
    year: int | None
    venue: str
    score: float
    components: dict[str, float]
    explanation: str
    doi: str = ""
    rank: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)
