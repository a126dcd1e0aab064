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
from typing import Callable, Iterable

from rapidfuzz.distance import OSA

from recommender.corpus.export import split_name
from recommender.corpus.identifiers import normalize_arxiv, normalize_doi, normalize_title
from recommender.corpus.publication_kind import arxiv_id
from recommender.paper import Paper
from recommender.references.records import Record, Retraction
from recommender.references.compare import cited_venue, cited_years, venue_shown, compare, read_reference
from recommender.references.match import FUZZY_CHARS_PER_EDIT, MIN_FUZZY_CHARS, ReferenceIndex
from recommender.references.parse import ReferenceItem
from recommender.references.venues import COVERS_VENUE, VenueText, VenueVocabulary, same_kind

MAX_RECORDS = 20  # records returned for one reference (a title shared by many papers)
YEAR_SLACK = 1  # a venue's papers count for a reference of their year, and of one year on each side
MIN_HELD = 5  # papers of a venue held within a year of the reference's, for its absence to tell
MIN_MONTHLY = 20  # papers of an arXiv category held per month of its range, for an id's absence to tell
_OLD_ARXIV_RE = re.compile(r"^([a-z-]+(?:\.[a-z]{2})?)/(\d{4})\d{3}$")
_NEW_ARXIV_RE = re.compile(r"^(\d{4})\.\d{4,5}$")
_KEY_CHARS = 8
_VENUE_CUE_RE = re.compile(r"(?:^|[.,”\"]\s+)[Ii]n:?\s+(.+)$")  # "... In Proceedings of X", "... in: X"
_PROCEEDINGS_RE = re.compile(r"\b((?:Proceedings|Proc\.)\s.+)$")
_PIECE_END_RE = re.compile(r"[.,;:”\"]\s+(?=[A-Z])")  # where a piece of a reference may end
_ABBREVIATED_RE = re.compile(r"(?:.*\.)?[A-Z][a-z]{0,5}\.")  # "Theor.", "Phys.Rev.": no end of a piece


class CorpusSource:
    """A corpus (an index, or a list of papers) as a `Source`. Local: never held to the online time budget."""

    local = True
    problem = ""  # why the last look-up went unanswered (read by check_references)

    def __init__(self, references: ReferenceIndex, fetch: Callable[[list[str]], list[Paper]], size: int,
                 venues: VenueVocabulary, *, knows_retractions: bool = False,
                 corpus_ids: Callable[[str], bool] = lambda pid: False, ids: Iterable[str] = (),
                 authors: Iterable[Iterable[str]] = ()):
        """`ids`: the corpus's paper ids (those that are arXiv ids widen the arXiv ranges it covers); `authors`: each
        paper's author names."""
        self.references, self.fetch, self.size, self.venues = references, fetch, size, venues
        self.knows_retractions = knows_retractions
        self.name = f"the corpus ({size:,} papers)"
        self._is_id = corpus_ids
        self._arxiv = _arxiv_ranges([*references.by_arxiv, *filter(None, map(_id_arxiv, ids))])
        self._surnames = _surnames(authors)

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
                   corpus_ids=by_id.__contains__, ids=[p.id for p in papers], authors=[p.authors for p in papers])

    @classmethod
    def from_index(cls, index, references: ReferenceIndex | None = None) -> "CorpusSource":
        """Over an open `store.index.Index`; `references`: its look-up tables when already built (the review's)."""
        rows = index.record_fields("series", "is_retracted")
        series = [str(value or "") for value, _ in rows]
        carried = any(flag is not None for _, flag in rows)  # no record carries the flag: retractions unknown
        flagged = {pos for pos, (_, flag) in enumerate(rows) if flag} if carried else None
        venues = VenueVocabulary(zip(index.venues, series, index.years))
        position = index.position

        def fetch(ids: list[str]) -> list[Paper]:
            return index.papers([position[i] for i in ids if i in position])

        references = references or ReferenceIndex(index.all_papers())
        return cls(references, fetch, len(index), venues, knows_retractions=flagged is not None,
                   corpus_ids=position.__contains__, ids=index.ids, authors=index.authors)

    def lookup(self, item: ReferenceItem) -> list[Record] | None:
        refs = self.references
        ids: set[str] = set()
        if item.doi:
            ids |= refs.by_doi.get(item.doi, set())
        if item.arxiv:
            ids |= refs.by_arxiv.get(item.arxiv, set()) | ({item.arxiv} if self._is_id(item.arxiv) else set())
        confirmed = refs.match_item(dataclasses.replace(item, doi="", arxiv=""))
        ids |= confirmed
        loose = sorted(self._loose_titles(item, spans=not confirmed) - ids)  # last: "Editorial" names many papers
        self.problem = ""
        records = [self.record(paper) for paper in self.fetch(self._likeliest(item, sorted(ids) + loose))]
        if records:  # papers of the same title may be other works: they answer for an uncovered reference only
            cited = read_reference(item)  # when one is the work, or holds the reference's DOI or arXiv id
            comparisons = [compare(cited, record, self.venues) for record in records]
            if any(c.same_work or c.doi_match or c.arxiv_match for c in comparisons) or self.covers(item):
                return records
        elif self.covers(item):
            return []
        self.problem = ("it holds few or no papers of the venue and year the reference names, or none of its "
                        "authors, so the reference's absence says nothing (the online sources can check it, when "
                        "allowed)")
        return None

    def _likeliest(self, item: ReferenceItem, ids: list[str]) -> list[str]:
        """At most MAX_RECORDS of the ids, those sharing an author's name and the year with the reference first
        (a title such as "In this issue" or "Editorial" is shared by hundreds of papers), else in the order given."""
        if len(ids) <= MAX_RECORDS:
            return ids
        words = set(normalize_title(item.raw).split())
        years = {int(w) for w in words if len(w) == 4 and w.isdigit()}

        def agreement(pid: str) -> int:
            facts = self.references.facts.get(pid)
            if facts is None:
                return 0
            near = facts.year is not None and any(abs(facts.year - year) <= 1 for year in years)
            return 2 * bool(facts.names & words) + near

        order = {pid: i for i, pid in enumerate(ids)}
        return sorted(ids, key=lambda pid: (-agreement(pid), order[pid]))[:MAX_RECORDS]

    def _loose_titles(self, item: ReferenceItem, spans: bool = False) -> set[str]:
        """Papers whose title is the parser's title (or its part before a colon), exactly or within a few edits;
        with `spans`, also any title the matcher finds in the reference's text, unconfirmed by authors or year
        (the parser may read a title too long: "About this issue.... In Proceedings of ...")."""
        found: set[str] = set()
        refs = self.references
        if spans:
            found |= refs.titled_in(item)
        title = item.title or ""
        for text in {title, re.split(r"[:?!]\s", title, maxsplit=1)[0]}:
            words = normalize_title(text).split()
            if not words:  # a one-word title too ("LETSmath"): the verdict asks for an author besides
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
        """Whether the reference's absence from the corpus tells: the corpus holds the venue and year it names (or
        its arXiv id's range) and an author it names. A venue is named fully (every distinctive word, or its
        acronym) and by its kind ("Machine Learning, 81(2)" is a journal, not ICML's proceedings). A field's corpus
        holds few of a journal's papers from other fields: the author is what tells a work it should hold."""
        title_words = set(normalize_title(item.title or "").split())
        if not any(word in self._surnames for word in normalize_title(item.raw).split() if word not in title_words):
            return False
        if item.arxiv and _in_ranges(item.arxiv, self._arxiv):
            return True
        cited = read_reference(item)
        venues = [cited_venue(cited, None)]
        for cue in (_VENUE_CUE_RE, _PROCEEDINGS_RE) if not cited.bibtex else ():
            found = cue.findall(cited.text)  # "In X", "Proceedings of X" after a title read too long or too short
            if found:
                venues.append(VenueText.of(venue_shown(found[-1])))
        if not cited.bibtex:  # a venue after a title the parser read too long ("... vacua. Phys.Rev. 51(5), ..."),
            for piece in _pieces(cited.text)[1:]:  # named by two words or more alone (initials are too loose)
                words = VenueText.of(venue_shown(piece))
                if len(words.words) >= 2:
                    venues.append(dataclasses.replace(words, names=frozenset(), initials=""))
        named = [(known, score) for venue in venues for known, score in self.venues.named(venue)
                 if score >= COVERS_VENUE and same_kind(venue.text, known.name)]
        if not named:
            return False
        year = cited_years(cited, None)[:1]

        def held(venue) -> int:  # its papers within a year of the reference's; all of them when a year is missing
            if year and venue.years:
                return sum(venue.years[y] for y in range(year[0] - YEAR_SLACK, year[0] + YEAR_SLACK + 1))
            return venue.papers

        return any(held(venue) >= MIN_HELD for venue, _ in named)

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


def _surnames(authors: Iterable[Iterable[str]]) -> frozenset[str]:
    """The folded surname words (3 letters or more) of a corpus's authors."""
    names = {str(name) for names in authors for name in names}
    return frozenset(word for name in names for word in normalize_title(split_name(name)[1]).split() if len(word) > 2)


def _pieces(text: str) -> list[str]:
    """A reference's text cut after punctuation before a capital, but not after an abbreviation ("Theor. Comput.
    Sci., 366(1-2)" stays one piece)."""
    pieces, start = [], 0
    for match in _PIECE_END_RE.finditer(text):
        before = text[start:match.start() + 1].split()
        if before and not _ABBREVIATED_RE.fullmatch(before[-1]):
            pieces.append(text[start:match.end()])
            start = match.end()
    return pieces + [text[start:]]


def _id_arxiv(pid: str) -> str:
    value = normalize_arxiv(pid) if _OLD_ARXIV_RE.match(pid) or _NEW_ARXIV_RE.match(pid) else ""
    return value if value == pid else ""


def _arxiv_ranges(ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    """{category: (first YYYYMM, last YYYYMM)} of the old-style arXiv ids (hep-th/9901001) of the categories the
    corpus holds densely (MIN_MONTHLY papers a month). New-style ids (1901.00001) name no category: no field's
    corpus holds all of arXiv, so their absence never tells."""
    months: dict[str, list[str]] = {}
    for value in ids:
        old = _OLD_ARXIV_RE.match(value)
        if old:
            months.setdefault(old.group(1), []).append(_sortable(old.group(2)))
    ranges = {}
    for category, held in months.items():
        low, high = min(held), max(held)
        span = 12 * (int(high[:4]) - int(low[:4])) + int(high[4:]) - int(low[4:]) + 1
        if len(held) >= MIN_MONTHLY * span:
            ranges[category] = (low, high)
    return ranges


def _in_ranges(arxiv: str, ranges: dict[str, tuple[str, str]]) -> bool:
    old = _OLD_ARXIV_RE.match(arxiv)
    if not old or old.group(1) not in ranges:
        return False
    low, high = ranges[old.group(1)]
    return low <= _sortable(old.group(2)) <= high


def _sortable(yymm: str) -> str:
    """'9901' -> '199901', '0304' -> '200304' (old-style ids count years from 1991)."""
    return ("19" if int(yymm[:2]) >= 91 else "20") + yymm
