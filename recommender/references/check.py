"""Check every reference of a list: does the work exist, do its details agree, has it been retracted?

The shared interface of the reference check: what a source knows of a work (`Record`, with its `Retraction`
notice when there is one), what a source is (`Source`: the corpus, OpenAlex, Crossref, ...), and the verdict per
reference (`Check`), given by `check_references`.

Verdicts (`VERDICTS`), in a reviewer's words; every one is a lead to check, never a finding:

- "verified": a record agrees with the reference on the title, the first author and the year;
- "details differ": the work exists, but the reference gives another year, venue, DOI, arXiv id or author list;
  the fields are named with the record's values. A preprint cited by its published version, or the reverse, is
  at most this. Initials for full names and abbreviated venues are no difference;
- "not found": no record of any source asked matches the title; said as "could not be found in ..." with what
  was searched;
- "retracted": the work was retracted (or has an expression of concern): the notice's nature, date and DOI;
- "not checked": no source could answer (offline and outside what the corpus covers, a timeout, a rate limit).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from recommender.references.parse import ReferenceItem

VERDICTS = ("verified", "details differ", "not found", "retracted", "not checked")


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


@runtime_checkable
class Source(Protocol):
    """Where records come from. `name` is said to the user ("the corpus (108,857 papers)", "OpenAlex",
    "Crossref"). `lookup` returns the records that may be the reference's work (by its DOI, arXiv id or title;
    [] when the source answered and holds none of them), or None when it did not answer (offline, a timeout, a
    rate limit, or a reference outside what the source covers).

    Optional attributes read by `check_references`: `local` (True: no network, never held to the time budget;
    default False) and `knows_retractions` (False: its records never carry a `retraction` even when the work
    was retracted, so later sources are still asked about a reference it verifies; default True)."""

    name: str

    def lookup(self, item: ReferenceItem) -> list[Record] | None: ...


class RetractionIndex(Protocol):
    """A local store of notices (`recommender.references.retractions.RetractionStore`): the record of a
    retracted work (its `retraction` set) by DOI or by exact title, else None."""

    def find(self, doi: str = "", title: str = "") -> Record | None: ...


@dataclass
class Check:
    """The verdict on one reference and its evidence: the `record` it rests on (None for "not found" and
    "not checked"), the fields that differ as {field: (what the reference says, what the record says)}, the
    names of the sources searched, and a sentence for the reviewer (`note`)."""

    verdict: str
    record: Record | None = None
    differences: dict[str, tuple[str, str]] = field(default_factory=dict)
    searched: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def retraction(self) -> Retraction | None:
        return self.record.retraction if self.record is not None else None

    def to_dict(self) -> dict:
        record = self.record
        return {
            "verdict": self.verdict,
            "note": self.note,
            "differences": {name: {"cited": cited, "record": found}
                            for name, (cited, found) in self.differences.items()},
            "searched": list(self.searched),
            "record": None if record is None else {
                "title": record.title, "authors": list(record.authors), "year": record.year, "venue": record.venue,
                "doi": record.doi, "arxiv": record.arxiv, "source": record.source, "url": record.url},
            "retraction": None if self.retraction is None else {
                "nature": self.retraction.nature, "date": self.retraction.date,
                "notice_doi": self.retraction.notice_doi, "source": self.retraction.source},
        }


DEFAULT_BUDGET_S = 60.0  # time the online sources may take for one document (the local ones are never cut)


def check_references(items: list[ReferenceItem], sources: list[Source], retractions: RetractionIndex | None = None,
                     budget_s: float = DEFAULT_BUDGET_S) -> list[Check]:
    """One `Check` per item, in order. Sources are asked in the order given (the corpus first), each reference
    until one verifies it; `retractions` (the local Retraction Watch store) is consulted for every work found
    and for the reference's own DOI and title; the sources that are not `local` stop being asked once
    `budget_s` seconds have gone (their references then say "not checked" unless a local source settled them)."""
    raise NotImplementedError("the verdicts land in the next commit; the types above are the interface")
