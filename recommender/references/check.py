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

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from recommender.references.compare import compare, read_reference
from recommender.references.parse import ReferenceItem
from recommender.references.records import Record, Retraction
from recommender.references.venues import Venue, VenueVocabulary, acronyms, venue_words

__all__ = ["VERDICTS", "DEFAULT_BUDGET_S", "Retraction", "Record", "Source", "RetractionIndex", "Check",
           "check_references"]

VERDICTS = ("verified", "details differ", "not found", "retracted", "not checked")


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
    retracted work (its `retraction` set) by DOI, or by exact title (within a year of `year` when given), else
    None."""

    def find(self, doi: str = "", title: str = "", year: int | None = None) -> Record | None: ...


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
FIELD_NAMES = {"title": "title", "first author": "first author", "authors": "author list", "year": "year",
               "venue": "venue", "doi": "DOI", "arxiv": "arXiv id", "version": "version"}


def check_references(items: list[ReferenceItem], sources: list[Source], retractions: RetractionIndex | None = None,
                     budget_s: float = DEFAULT_BUDGET_S) -> list[Check]:
    """One `Check` per item, in order. Sources are asked in the order given (the corpus first), each reference
    until one verifies it (a source without `knows_retractions` does not end the asking: a later one may know of
    a retraction); `retractions` (the local Retraction Watch store) is consulted for every work found and for the
    reference's own DOI and title; the sources that are not `local` stop being asked once `budget_s` seconds
    have gone (their references then say "not checked" unless another source settled them)."""
    deadline = time.monotonic() + budget_s
    vocabulary = next((s.venues for s in sources if isinstance(getattr(s, "venues", None), VenueVocabulary)), None)
    return [_check(item, sources, retractions, vocabulary, deadline) for item in items]


def _check(item: ReferenceItem, sources: list[Source], retractions: RetractionIndex | None, vocabulary,
           deadline: float) -> Check:
    cited = read_reference(item)
    searched: list[str] = []
    silent: list[str] = []
    found = []  # comparisons with every record of every source that answered
    known: list[Venue] = []
    for source in sources:
        if not getattr(source, "local", False) and time.monotonic() > deadline:
            silent.append(f"{source.name}: the time budget for the document was spent")
            continue
        try:
            records = source.lookup(item)
        except Exception as exc:  # noqa: BLE001 - a source that fails is a source that did not answer
            records, problem = None, f"{type(exc).__name__}: {exc}"
        else:
            problem = str(getattr(source, "problem", "") or "")
        if records is None:
            silent.append(problem if problem.startswith(source.name) else f"{source.name}: {problem}" if problem
                          else f"{source.name} did not answer")
            continue
        searched.append(source.name)
        known += [Venue(r.venue, venue_words(r.venue), set(acronyms(r.venue))) for r in records if r.venue]
        found += [compare(cited, record, vocabulary, known) for record in records]
        best = min(found, key=lambda c: c.rank(), default=None)
        if best is not None and best.verified and (best.record.retraction is not None
                                                   or getattr(source, "knows_retractions", True)):
            break
    same = sorted((c for c in found if c.same_work), key=lambda c: c.rank())
    best = same[0] if same else None
    retracted = next((c for c in same if c.record.retraction is not None), None)
    if retractions is not None:
        notice = _stored_notice(retractions, item, best)
        if notice is not None and retracted is None:
            if best is not None:
                retracted = best
                best.record = dataclasses.replace(best.record, retraction=notice.retraction)
            else:
                return Check("retracted", notice, {}, searched + ["Retraction Watch"], _retraction_note(notice))
    if retracted is not None:
        return Check("retracted", retracted.record, dict(retracted.differences), searched,
                     _retraction_note(retracted.record, retracted.differences))
    if best is not None:
        if best.verified:
            return Check("verified", best.record, {}, searched, _verified_note(best))
        return Check("details differ", best.record, _with_id_owners(best, found), searched, _differ_note(best))
    if searched:
        return Check("not found", None, {}, searched, _not_found_note(cited, found, searched, silent))
    return Check("not checked", None, {}, searched, _not_checked_note(silent))


def _stored_notice(retractions: RetractionIndex, item: ReferenceItem, best) -> Record | None:
    """The local store's notice on the work found (by its DOI, else its title and year), else on the reference's
    own DOI or (when no work was found) its title."""
    if best is not None:
        record = best.record
        notice = retractions.find(doi=record.doi, title=record.title, year=record.year)
        if notice is not None or not item.doi or item.doi == record.doi:
            return notice
        return None
    return retractions.find(doi=item.doi, title=item.title, year=item.year)


def _with_id_owners(best, found) -> dict[str, tuple[str, str]]:
    """The differences, plus the reference's DOI or arXiv id when it belongs to another work and the record
    has none of its own (the corpus's records of an ACM collection carry no arXiv ids)."""
    differences = dict(best.differences)
    item = best.record
    for other in found:
        if other is best or other.same_work:
            continue
        if other.arxiv_match and not item.arxiv and "arxiv" not in differences:
            differences["arxiv"] = (other.record.arxiv,
                                    f"none; arXiv:{other.record.arxiv} is “{other.record.title}”")
        if other.doi_match and not item.doi and "doi" not in differences:
            differences["doi"] = (other.record.doi, f"none; {other.record.doi} is “{other.record.title}”")
    return differences


def _source_phrase(record: Record) -> str:
    return f"{record.source}" + (f", {record.url}" if record.url else "")


def _verified_note(best) -> str:
    record = best.record
    extra = "" if best.year is not None else " The reference gives no year (or the record none)."
    return f"Title, first author and year agree with the record in {_source_phrase(record)}.{extra}"


def _differ_note(best) -> str:
    record = best.record
    fields = ", ".join(FIELD_NAMES.get(name, name) for name in best.differences)
    notes = "; ".join(best.notes)
    return (f"The work exists ({_source_phrase(record)}), but the reference gives another {fields} than its "
            f"record" + (f" ({notes})" if notes else "") + ". Worth a look: usually a slip in the reference.")


def _retraction_note(record: Record, differences: dict | None = None) -> str:
    notice = record.retraction
    nature = notice.nature or "retraction"
    what = "was retracted" if nature == "retraction" else f"has a notice of {nature}" if nature != \
        "expression of concern" else "has an expression of concern"
    when = f" on {notice.date}" if notice.date else ""
    doi = f" (notice: https://doi.org/{notice.notice_doi})" if notice.notice_doi else ""
    extra = f" The reference also differs in: {', '.join(FIELD_NAMES.get(n, n) for n in differences)}." \
        if differences else ""
    return (f"The work “{record.title}” {what}{when}{doi}, according to {notice.source}. Check that the citation "
            f"says so, or that citing it is deliberate.{extra}")


def _not_found_note(cited, found, searched: list[str], silent: list[str]) -> str:
    note = f"Could not be found in {_joined(searched)}."
    for other in found:
        record = other.record
        if other.doi_match:
            note += f" Its DOI {record.doi} belongs to another work: “{record.title}” ({record.source})."
        elif other.arxiv_match:
            note += f" Its arXiv id {record.arxiv} belongs to another work: “{record.title}” ({record.source})."
    if silent:
        note += f" Not asked, or no answer: {'; '.join(silent)}."
    return note + (" Not finding a reference is a lead to check (a typo in its title, a work these sources do "
                   "not hold), not proof that it does not exist.")


def _not_checked_note(silent: list[str]) -> str:
    if not silent:
        return "Not checked: no source was asked (give an index, or allow the online sources)."
    return f"Not checked: {'; '.join(silent)}."


def _joined(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
