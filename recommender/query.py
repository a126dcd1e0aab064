"""What a caller asks for and what the engine answers."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from recommender.config import DEFAULT_DIVERSITY
from recommender.paper import Paper
from recommender.pipeline.language import LanguageInfo

CITATION_MARK = "[CIT]"
MARK_RE = re.compile(r"\[CIT\]", re.IGNORECASE)  # a placeholder, in any case


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
    diversity: float = DEFAULT_DIVERSITY  # author spread of the list (`select.py`); 0: the plain ranking
    max_date: str | None = None  # evaluation protocol: only papers dated no later than this
    authors: list[str] = field(default_factory=list)  # the draft's own authors: their earlier work is a candidate

    @property
    def is_local(self) -> bool:
        return bool(self.context.strip())

    @property
    def context_text(self) -> str:
        """The passage without its citation placeholders."""
        return " ".join(MARK_RE.sub(" ", self.context).split())

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


@dataclass(frozen=True)
class Route:
    """How a query is answered: its detected language and the dense field that serves it.

    field: "dense" (English encoder, the English pipeline), "tuned" (the same encoder with the index's
    citation-tuned head, `learned.py`) or "multilingual" (multilingual encoder and index; lexical matching then
    sees the query's English gloss, or without a glossary its Latin-script terms and numbers).
    warning: "" or a short reason why a non-English query gets the English pipeline
    (`reader.NO_MULTILINGUAL_FIELD` when the index was built without `multilingual=True`).
    gloss: on the multilingual field, the English words the query's text was read as (`gloss.py`; "" when the
    index has no glossary): BM25 and the English encoder see these.
    """

    language: LanguageInfo
    field: str = "dense"
    warning: str = ""
    gloss: str = ""

    @property
    def multilingual(self) -> bool:
        return self.field == "multilingual"

    def to_dict(self) -> dict:
        return {"language": self.language.to_dict(), "field": self.field, "multilingual": self.multilingual,
                "warning": self.warning, "gloss": self.gloss}


@dataclass
class Ranking:
    """Corpus positions in final order with their score components (no explanations: cheap)."""

    positions: list[int]
    scores: np.ndarray
    components: dict[str, np.ndarray]
    via: dict[int, int]  # position -> the top neighbour citing it
    route: Route
    features: np.ndarray | None = None  # learned rerank: the model's feature rows, in final order
    fits: dict[int, str] = field(default_factory=dict)  # position -> the citing sentence of a paragraph it fits best
    left_out: list[int] = field(default_factory=list)  # retracted papers passed over that would have been listed


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
    retraction: str = ""  # the mark of a retracted paper (shown only on request; `pipeline.retracted`)

    @classmethod
    def of(cls, paper: Paper, rank: int, score: float, components: dict[str, float],
           explanation: str) -> "Recommendation":
        return cls(paper_id=paper.id, title=paper.title, authors=paper.authors, year=paper.year, venue=paper.venue,
                   score=score, components=components, explanation=explanation, doi=paper.doi, rank=rank)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RecommendResult:
    """The answer to a request: the recommendations in rank order, how the query was routed, and the full
    records of the recommended papers (parallel to `recommendations`). Iterating it yields the recommendations."""

    recommendations: list[Recommendation]
    route: Route
    papers: list[Paper]
    left_out: list[str] = field(default_factory=list)  # ids of retracted papers left out of the list

    def __iter__(self):
        return iter(self.recommendations)

    def __len__(self) -> int:
        return len(self.recommendations)

    def __getitem__(self, i: int) -> Recommendation:
        return self.recommendations[i]
