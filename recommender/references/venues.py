"""Venue names as references write them, and which known venue a reference's venue text names.

A venue is compared by its distinctive words (ordinals, years, numbers and generic words such as "Proceedings",
"International", "ACM", "Journal" left out) and its acronyms (a corpus record's series, "SIGIR '20" -> SIGIR, or
the capitalised tokens of its name). A word of a reference matches a venue word when one is the other's
abbreviation (a prefix: "Inf." for "Information", "Retr." for "Retrieval", "Technol." for "Technology"). The
closeness of a reference's venue text to a venue is the Dice coefficient of the two word sets under that match,
or 1 when they share an acronym.

`VenueVocabulary` holds the venues of a corpus (with the years it holds papers of each): the reference check asks
it which venue a reference names, to tell a wrong venue from an abbreviated one (a difference is claimed only when
the reference names another known venue clearly better than the record's), and whether a reference falls within
what the corpus covers.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable

from recommender.corpus.identifiers import fold

NAMES_VENUE = 0.6  # closeness from which a venue text names a venue
COVERS_VENUE = 1.0  # closeness from which a reference's venue is taken for one the corpus holds (its absence tells)
SAME_VENUE = 0.6  # closeness to the record's venue from which no difference is claimed (Phys. Lett. and
# Phys. Rev. share half their words: 0.5)
VENUE_MARGIN = 0.3  # another venue must be this much closer than the record's before a difference is claimed

GENERIC_WORDS = frozenset("""
a an the of on in and for at to with its by from de la le et al
proceedings proc proceeding conference conf conferences international intl int annual acm ieee usenix siam
journal j jour transactions trans workshop workshops symposium symp joint meeting companion volume vol
no nos number numbers issue pp p pg pages page ed eds editor editors edition part series lecture notes lncs ccis
springer verlag berlin heidelberg cham new york ny usa ca uk ma london amsterdam boston switzerland germany
press publisher publishers publishing elsevier association machinery mit cambridge oxford university
doi https http org com available online accessed retrieved isbn issn article articles paper papers full short
long demo demos poster posters extended abstracts track tracks main special supplement suppl
""".split())
PREPRINT_WORDS = frozenset({"arxiv", "corr", "preprint", "biorxiv", "medrxiv", "chemrxiv", "ssrn", "eprint",
                            "eprints", "abs", "preprints"})
GENERIC_ACRONYMS = frozenset({"ACM", "IEEE", "USA", "NY", "UK", "CA", "MA", "MIT", "LNCS", "CCIS", "ISBN", "ISSN",
                              "DOI", "URL", "PP", "USENIX", "SIAM", "IFIP", "AAAS", "II", "III", "IV", "VI", "VII",
                              "VIII", "IX", "XI", "XII", "PDF", "HTML"})
# venues that say which series or publisher, not which venue (OpenAlex and Crossref give them for proceedings)
UNINFORMATIVE_RE = re.compile(r"^(lecture notes|communications in computer and information science|advances in "
                              r"intelligent systems and computing|springer|arxiv|corr|ssrn|biorxiv|medrxiv|"
                              r"zenodo|research square|preprints|figshare|openreview|hal)\b|ebooks?$|\(cornell",
                              re.IGNORECASE)
_ORDINAL_RE = re.compile(r"^(\d+(st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
                         r"eleventh|twelfth|\w+teenth|\w+tieth|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
                         r"ninety|hundredth)$")
_WORD_RE = re.compile(r"[0-9a-z]+")
_ACRONYM_RE = re.compile(r"(?<![\w-])([A-Z][A-Za-z0-9&]*[A-Z][A-Za-z0-9&]*)(?![\w])")
_CAPITALISED_RE = re.compile(r"(?<![\w-])[A-Z][\w&-]*")
_SERIES_RE = re.compile(r"^\s*([A-Za-z][\w&-]*[A-Za-z])")
_KINDS = (("workshop", re.compile(r"\bworkshops?\b", re.IGNORECASE)),
          ("proceedings", re.compile(r"\b(proceedings|proc|conference|conf|symposium|congress)\b", re.IGNORECASE)),
          ("journal", re.compile(r"\b(journal|j|trans|transactions|letters|lett|magazine|mag|vol|volume)\b"
                                 r"|\d+\s*\(\s*\d+(\s*[-–]\s*\d+)?\s*\)", re.IGNORECASE)))
MIN_ABBREVIATION = 3  # letters of the shorter word when one abbreviates the other (2 against a long word)


def venue_words(text: str) -> frozenset[str]:
    """The distinctive words of a venue text (folded; generic words, preprint words, ordinals and numbers out)."""
    return frozenset(w for w in _WORD_RE.findall(fold(text))
                     if w not in GENERIC_WORDS and w not in PREPRINT_WORDS and not w.isdigit()
                     and not _ORDINAL_RE.match(w) and len(w) > 1)


def acronyms(text: str) -> frozenset[str]:
    """Acronym-like tokens of a venue text ("SIGIR", "CIKM", "JHEP", "IP&M"), generic ones left out; a mixed-case
    one also as its capitals ("NeurIPS": NEURIPS and NIPS)."""
    found = set()
    for token in _ACRONYM_RE.findall(text or ""):
        if sum(ch.isupper() for ch in token) >= 2 and token.upper() not in GENERIC_ACRONYMS and len(token) <= 12 \
                and not token.upper().startswith("ARXIV") and token.upper() != "CORR":
            found.add(token.upper())
            capitals = "".join(ch for ch in token if ch.isupper())
            if len(capitals) >= 3 and capitals not in GENERIC_ACRONYMS:
                found.add(capitals)
    return frozenset(found)


def initials(text: str) -> str:
    """The first letters of a venue name's capitalised words ("Conference on Information and Knowledge
    Management": CIKM), where an acronym of three letters or more may stand."""
    return "".join(word[0] for word in _CAPITALISED_RE.findall(text or ""))


def series_acronyms(series: str) -> frozenset[str]:
    """The acronym of a proceedings series ("SIGIR '20" -> SIGIR, "AKBC-WEKEX '12" -> AKBC-WEKEX, AKBC, WEKEX)."""
    match = _SERIES_RE.match(series or "")
    if not match:
        return frozenset()
    name = match.group(1).upper()
    return frozenset({name, *(part for part in name.split("-") if len(part) >= 2)}) - GENERIC_ACRONYMS


def abbreviates(a: str, b: str) -> bool:
    """Whether one word is the other or an abbreviation of it (a prefix of 3 letters or more; 2 of a long word)."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(short) < 2 or (len(short) < MIN_ABBREVIATION and len(long_) < 5):
        return False
    return long_.startswith(short)


@dataclass(frozen=True)
class VenueText:
    """A venue as a reference or a record writes it, read for comparison."""

    text: str
    words: frozenset[str]
    names: frozenset[str]  # acronyms
    initials: str

    @classmethod
    def of(cls, text: str, names: frozenset[str] | None = None) -> "VenueText":
        return cls(text, venue_words(text), acronyms(text) if names is None else names, initials(text))


def closeness(cited: VenueText, venue: "VenueText | Venue") -> float:
    """How closely a reference's venue text names a venue: 1 when they share an acronym (or one's acronym of
    three letters or more stands in the other's initials), else the Dice coefficient of their distinctive word
    sets (a word matching its abbreviation)."""
    words, names, venue_words_, venue_acronyms = cited.words, cited.names, venue.words, venue.names
    if names & venue_acronyms or any(len(a) >= 3 and a in cited.initials for a in venue_acronyms) or \
            any(len(a) >= 3 and a in venue.initials for a in names):
        return 1.0
    if not words or not venue_words_:
        return 0.0
    cited_matched = sum(1 for w in words if any(abbreviates(w, v) for v in venue_words_))
    venue_matched = sum(1 for v in venue_words_ if any(abbreviates(w, v) for w in words))
    return (cited_matched + venue_matched) / (len(words) + len(venue_words_))


def venue_kind(text: str) -> str:
    """"workshop", "proceedings" or "journal" as a venue text reads (a volume(issue) is a journal's), else ""."""
    for kind, pattern in _KINDS:
        if pattern.search(text or ""):
            return kind
    return ""


def same_kind(a: str, b: str) -> bool:
    """Whether two venue texts may name one venue: their kinds agree, or one cannot be told."""
    kind_a, kind_b = venue_kind(a), venue_kind(b)
    return not (kind_a and kind_b and kind_a != kind_b)


def is_preprint_venue(venue: str) -> bool:
    return bool(venue) and any(w in PREPRINT_WORDS for w in _WORD_RE.findall(fold(venue)))


def informative(venue: str) -> bool:
    """A venue that names a conference or journal (not empty, not a preprint server, not a book series)."""
    return bool(venue_words(venue)) and not UNINFORMATIVE_RE.search(venue.strip())


@dataclass
class Venue:
    """One known venue: a name as a record writes it, its distinctive words and acronyms, the years held."""

    name: str
    words: frozenset[str]
    acronyms: set[str] = field(default_factory=set)
    years: Counter = field(default_factory=Counter)  # year -> papers held
    papers: int = 0  # papers held, with a year or without

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.acronyms)

    @cached_property
    def initials(self) -> str:
        return initials(self.name)


class VenueVocabulary:
    """The venues of a corpus, keyed by their distinctive words (a conference's yearly proceedings are one venue)."""

    def __init__(self, entries: Iterable[tuple[str, str, int | None]] = ()):
        """`entries`: (venue, series, year) of each paper."""
        self.venues: dict[frozenset[str], Venue] = {}
        self._by_word: dict[str, set[frozenset[str]]] = {}
        self._by_prefix: dict[str, set[str]] = {}  # the first 3 letters of a venue word -> the words
        self._by_acronym: dict[str, set[frozenset[str]]] = {}
        held: Counter = Counter((venue or "", series or "", year) for venue, series, year in entries)
        for (venue, series, year), papers in held.items():  # a corpus repeats few triples: each is read once
            self.add(venue, series, year, papers)

    def add(self, venue: str, series: str = "", year: int | None = None, papers: int = 1) -> Venue | None:
        key = venue_words(venue)
        if not key or not informative(venue):
            return None
        known = self.venues.get(key)
        if known is None:
            known = self.venues[key] = Venue(venue, key)
            for word in key:
                self._by_word.setdefault(word, set()).add(key)
                self._by_prefix.setdefault(word[:2], set()).add(word)
        names = series_acronyms(series) if series else acronyms(venue)
        for name in names - known.acronyms:
            known.acronyms.add(name)
            self._by_acronym.setdefault(name, set()).add(key)
        try:  # an int, or a numpy integer from an index's year column
            year = int(year) if year else 0
        except (TypeError, ValueError):
            year = 0
        known.papers += papers
        if year > 0:
            known.years[year] += papers
        return known

    def __len__(self) -> int:
        return len(self.venues)

    def venue_of(self, name: str) -> Venue | None:
        return self.venues.get(venue_words(name))

    def named(self, cited: VenueText) -> list[tuple[Venue, float]]:
        """Known venues that a venue text may name, closest first."""
        keys: set[frozenset[str]] = set()
        for name in cited.names:
            keys |= self._by_acronym.get(name, set())
        for start in range(len(cited.initials) - 2):  # acronyms standing in the text's initials
            for end in range(start + 3, min(len(cited.initials), start + 8) + 1):
                keys |= self._by_acronym.get(cited.initials[start:end], set())
        for word in cited.words:
            for venue_word in self._by_prefix.get(word[:2], ()):
                if abbreviates(word, venue_word):
                    keys |= self._by_word[venue_word]
        scored = [(self.venues[key], closeness(cited, self.venues[key])) for key in keys]
        return sorted(scored, key=lambda pair: -pair[1])
