"""The corpus as a source of the reference check: its records found by a reference's DOI, arXiv id or title.

The look-up tables are `match.ReferenceIndex`'s (shared with the review when it has them). A reference's title is
looked for as the matcher does (among the reference's spans, checked against an author or the year), and then,
so that a real paper cited with a wrong year and wrong authors is still found, as the parser read it (exactly or
within a few edits, unchecked: the verdict weighs the authors and the year).

When nothing is found, the corpus answers "none" only for a reference it covers: one that names a venue the
corpus holds papers of, in a year it holds papers of that venue (within one), or an arXiv id within the ranges of
its arXiv papers. Any other reference it leaves unanswered (None): that a topical corpus lacks a paper says
nothing of whether the paper exists.
"""
from __future__ import annotations

import dataclasses
import re
import sqlite3
from pathlib import Path
from typing import Callable, Iterable

from rapidfuzz.distance import OSA

from recommender.corpus.identifiers import normalize_arxiv, normalize_doi, normalize_title
from recommender.corpus.publication_kind import arxiv_id
from recommender.paper import Paper
from recommender.references.records import Record, Retraction
from recommender.references.compare import _cited_venue, _cited_years, read_reference
from recommender.references.match import FUZZY_CHARS_PER_EDIT, MIN_FUZZY_CHARS, ReferenceIndex
from recommender.references.parse import ReferenceItem
from recommender.references.venues import NAMES_VENUE, VenueVocabulary

MAX_RECORDS = 20  # records returned for one reference (a title shared by many papers)
YEAR_SLACK = 1  # a venue covers the years it holds papers of, and one on each side
_OLD_ARXIV_RE = re.compile(r"^([a-z-]+(?:\.[a-z]{2})?)/(\d{4})\d{3}$")
_NEW_ARXIV_RE = re.compile(r"^(\d{4})\.\d{4,5}$")
_KEY_CHARS = 8


class CorpusSource:
    """A corpus (an index, or a list of papers) as a `Source`. Local: never held to the online time budget."""

    local = True
    problem = ""  # why the last look-up went unanswered (read by check_references)

    def __init__(self, references: ReferenceIndex, fetch: Callable[[list[str]], list[Paper]], size: int,
                 venues: VenueVocabulary, *, knows_retractions: bool = False,
                 corpus_ids: Callable[[str], bool] = lambda pid: False, ids: Iterable[str] = ()):
        """`ids`: the corpus's paper ids (those that are arXiv ids widen the arXiv ranges it covers)."""
        self.references, self.fetch, self.size, self.venues = references, fetch, size, venues
        self.knows_retractions = knows_retractions
        self.name = f"the corpus ({size:,} papers)"
        self._is_id = corpus_ids
        self._arxiv = _arxiv_ranges([*references.by_arxiv, *filter(None, map(_id_arxiv, ids))])

    @classmethod
    def from_papers(cls, papers: Iterable[Paper], references: ReferenceIndex | None = None) -> "CorpusSource":
        papers = list(papers)
        by_id = {p.id: p for p in papers}
        for paper in papers:  # ids that are arXiv ids (hep-th/9901001) are looked up as such
            arxiv = arxiv_id(paper) or _id_arxiv(paper.id)
            if arxiv:
                by_id.setdefault(arxiv, paper)
        venues = VenueVocabulary((p.venue, str(p.extra.get("series") or ""), p.year) for p in papers)
        return cls(references or ReferenceIndex(papers), lambda ids: [by_id[i] for i in ids if i in by_id],
                   len(papers), venues, knows_retractions=any("is_retracted" in p.extra for p in papers),
                   corpus_ids=by_id.__contains__, ids=[p.id for p in papers])

    @classmethod
    def from_index(cls, index, references: ReferenceIndex | None = None) -> "CorpusSource":
        """Over an open `store.index.Index`; `references`: its look-up tables when already built (the review's)."""
        series, flagged = corpus_flags(index.version)
        venues = VenueVocabulary(zip(index.venues, series, index.years))
        position = index.position

        def fetch(ids: list[str]) -> list[Paper]:
            return index.papers([position[i] for i in ids if i in position])

        references = references or ReferenceIndex(index.all_papers())
        return cls(references, fetch, len(index), venues, knows_retractions=flagged is not None,
                   corpus_ids=position.__contains__, ids=index.ids)

    def lookup(self, item: ReferenceItem) -> list[Record] | None:
        refs = self.references
        ids: set[str] = set()
        if item.doi:
            ids |= refs.by_doi.get(item.doi, set())
        if item.arxiv:
            ids |= refs.by_arxiv.get(item.arxiv, set()) | ({item.arxiv} if self._is_id(item.arxiv) else set())
        ids |= refs.match_item(dataclasses.replace(item, doi="", arxiv=""))
        ids |= self._loose_titles(item)
        self.problem = ""
        if ids:
            return [self.record(paper) for paper in self.fetch(sorted(ids)[:MAX_RECORDS])]
        if self.covers(item):
            return []
        self.problem = ("no papers of the venue and year the reference names are held there, so the reference's "
                        "absence says nothing (the online sources can check it, when allowed)")
        return None

    def _loose_titles(self, item: ReferenceItem) -> set[str]:
        """Papers whose title is the parser's title (or its part before a colon), exactly or within a few edits."""
        found: set[str] = set()
        refs = self.references
        title = item.title or ""
        for text in {title, re.split(r"[:?!]\s", title, maxsplit=1)[0]}:
            words = normalize_title(text).split()
            if len(words) < 2:
                continue
            compact = "".join(words)
            found |= refs.by_title.get(compact, set())
            if len(compact) < MIN_FUZZY_CHARS:
                continue
            allowed = 1 + len(compact) // FUZZY_CHARS_PER_EDIT
            for other in refs.by_start.get(compact[:_KEY_CHARS], set()) | refs.by_end.get(compact[-_KEY_CHARS:],
                                                                                          set()):
                if other != compact and abs(len(other) - len(compact)) <= allowed and \
                        OSA.distance(compact, other, score_cutoff=allowed) <= allowed:
                    found |= refs.by_title[other]
        return found

    def covers(self, item: ReferenceItem) -> bool:
        """Whether the corpus holds the venue and year the reference names (or its arXiv id's range)."""
        if item.arxiv and _in_ranges(item.arxiv, self._arxiv):
            return True
        cited = read_reference(item)
        named = [(venue, score) for venue, score in self.venues.named(_cited_venue(cited, None))
                 if score >= NAMES_VENUE]
        if not named:
            return False
        years = _cited_years(cited, None)
        if not years:
            return True
        return any(any(abs(year - held) <= YEAR_SLACK for held in venue.years) or not venue.years
                   for venue, _ in named for year in years[:1])

    def record(self, paper: Paper) -> Record:
        arxiv = arxiv_id(paper) or _id_arxiv(paper.id)
        doi = normalize_doi(paper.doi)
        url = str(paper.extra.get("url") or "") or (f"https://doi.org/{doi}" if doi else "") or \
            (f"https://arxiv.org/abs/{arxiv}" if arxiv else "")
        retraction = None
        if paper.extra.get("is_retracted") is True:
            retraction = Retraction("retraction", "", "", f"{self.name}: the work is flagged as retracted")
        return Record(title=paper.title, authors=tuple(str(a) for a in paper.authors), year=paper.year
                      if isinstance(paper.year, int) else None, venue=paper.venue or "", doi=doi, arxiv=arxiv,
                      source=self.name, url=url, retraction=retraction)


def corpus_flags(version: Path) -> tuple[list[str], set[int] | None]:
    """(the series of each paper, in corpus order; the positions of papers flagged `is_retracted`, or None when
    no record carries the flag) of an index version, read from its records in one pass."""
    db = sqlite3.connect(f"file:{Path(version) / 'papers.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT pos, json_extract(record, '$.series'), json_extract(record, '$.is_retracted') "
                          "FROM papers ORDER BY pos").fetchall()
    finally:
        db.close()
    series = [str(s or "") for _, s, _ in rows]
    carried = any(flag is not None for _, _, flag in rows)
    return series, ({pos for pos, _, flag in rows if flag} if carried else None)


def _id_arxiv(pid: str) -> str:
    value = normalize_arxiv(pid) if _OLD_ARXIV_RE.match(pid) or _NEW_ARXIV_RE.match(pid) else ""
    return value if value == pid else ""


def _arxiv_ranges(ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """{category ("" for new-style ids): (first YYMM, last YYMM)} of the corpus's arXiv ids."""
    ranges: dict[str, list[str]] = {}
    for value in ids:
        old, new = _OLD_ARXIV_RE.match(value), _NEW_ARXIV_RE.match(value)
        category, month = (old.group(1), old.group(2)) if old else ("", new.group(1)) if new else (None, None)
        if category is None:
            continue
        key = _sortable(month)
        low, high = ranges.setdefault(category, [key, key])
        ranges[category] = [min(low, key), max(high, key)]
    return {category: (low, high) for category, (low, high) in ranges.items()}


def _in_ranges(arxiv: str, ranges: dict[str, tuple[str, str]]) -> bool:
    old, new = _OLD_ARXIV_RE.match(arxiv), _NEW_ARXIV_RE.match(arxiv)
    category, month = (old.group(1), old.group(2)) if old else ("", new.group(1)) if new else (None, None)
    if category is None or category not in ranges:
        return False
    low, high = ranges[category]
    return low <= _sortable(month) <= high


def _sortable(yymm: str) -> str:
    """'9901' -> '199901', '0304' -> '200304' (old-style and new-style ids count years from 1991 to 2090)."""
    return ("19" if int(yymm[:2]) >= 91 else "20") + yymm
