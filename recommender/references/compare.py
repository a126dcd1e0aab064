"""Compare one reference with a record of the work it may name: title, authors, year, venue, DOI, arXiv id.

Read for a reviewer, so every rule leans towards agreeing: initials against full names, abbreviated venues (ISO 4
abbreviations, acronyms), a dropped subtitle, accents and one-letter transliterations ("Schäfer", "Schaefer")
are never differences, and a venue differs only when the reference names another known venue clearly better
than the record's (`venues.py`).

A plain-text reference is read as its words (folded, with their places in the text): the record's title is looked
for among them (exactly, else within a few character edits; bounded by punctuation, so that a short title never
matches inside a longer one); the words before it are the author list, those after it the venue. A BibTeX entry is
read field by field.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from rapidfuzz.distance import OSA

from recommender.corpus.bibtex import author_names, latex_text, parse_library
from recommender.corpus.export import split_name
from recommender.corpus.identifiers import fold, normalize_arxiv, normalize_doi, normalize_title
from recommender.references.records import Record
from recommender.references.parse import ReferenceItem
from recommender.references.venues import (NAMES_VENUE, PREPRINT_WORDS, SAME_VENUE, VENUE_MARGIN, Venue,
                                           VenueText, VenueVocabulary, closeness, informative, is_preprint_venue,
                                           series_acronyms)

FUZZY_CHARS_PER_EDIT = 25  # one character edit per this many characters of title, plus one (as match.py)
MIN_FUZZY_CHARS = 16
LONG_TITLE_WORDS, LONG_TITLE_CHARS = 5, 30  # a title this long, found exactly, names one work by itself
MIN_TITLE_WORDS = 3  # a reference's title guess this long is a title, whose difference from the record is said
MAX_LEADING_WORDS = 6  # words an author list may hold before the first author's surname (given names, initials)
MAX_LISTED_AUTHORS = 30  # past this many authors a record's list is not checked name by name
LONG_LIST = 15  # a reference that lists this many of the record's authors in order may cut the rest (APA: 20)
SHOWN_CHARS = 160

# an archive name starts after no letter or hyphen and has at most 20 letters, one \s* per gap: tried from every
# word start of "a-a-a-…", or after "arxiv" + spaces, these patterns took quadratic time
_ID_RE = re.compile(r"https?://\S+|\bwww\.\S+|\bdoi\s*:\s*\S+|\b10\.\d{4,9}/\S+"
                    r"|\barxiv\s*(?:[:.]\s*)?(?:abs/)?(?:\d{4}\.\d{4,5}|[a-z-]{1,20}(?:\.[a-z]{2})?/\s?\d{7})(?:v\d+)?"
                    r"|\b\d{4}\.\d{4,5}(?:v\d+)?\b|(?<![a-z-])[a-z-]{1,20}(?:\.[a-z]{2})?/\s?\d{7}(?:v\d+)?\b",
                    re.IGNORECASE)
_LATEX_ACCENT_RE = re.compile(r"\\[`'^\"~=.]\s*\{?([A-Za-z])\}?|\\[uvHckrbd]\{([A-Za-z])\}")
_BROKEN_ARXIV_RE = re.compile(r"\barxiv\s*(?:[:.]\s*)?([a-z-]{1,20}(?:\.[a-z]{2})?/\s?\d{7})", re.IGNORECASE)
# letters without a decomposition that fold would drop ("Mølbæk": "m lb k"), written as transliterations do
_LETTERS = str.maketrans({"æ": "ae", "Æ": "Ae", "ø": "o", "Ø": "O", "ß": "ss", "ł": "l", "Ł": "L", "đ": "d",
                          "Đ": "D", "þ": "th", "Þ": "Th", "œ": "oe", "Œ": "Oe", "ı": "i", "ð": "d"})
_TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_PIECE_RE = re.compile(r"[0-9a-z]+")
_YEAR_RE = re.compile(r"^(1[5-9]\d\d|20\d\d)[a-z]?$")
_BREAK_CHARS = set(".,:;?!\"“”«»()[]{}—–")
_ET_AL_RE = re.compile(r"\bet\s*al\b|\bothers\b|\.\.\.|…", re.IGNORECASE)
_PARTICLES = {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "dos", "das", "la", "le", "ter",
              "ten", "zu", "al", "el", "bin", "ibn", "st", "jr", "sr", "ii", "iii", "iv"}
_VENUE_FIELDS = ("journal", "booktitle", "journaltitle", "howpublished", "school", "institution")


# ----------------------------------------------------------------------------------------------- the reference


@dataclass
class Cited:
    """A reference read for comparison; built once (`read_reference`), compared with many records."""

    item: ReferenceItem
    text: str = ""  # the reference's text with its DOIs, URLs and arXiv ids blanked out (same length)
    words: list[str] = field(default_factory=list)  # folded words of `text`
    spans: list[tuple[int, int]] = field(default_factory=list)  # where each word stands in `text`
    fields: dict[str, str] = field(default_factory=dict)  # a BibTeX entry's fields (lower-case names)
    names: list[str] = field(default_factory=list)  # a BibTeX entry's authors

    @property
    def bibtex(self) -> bool:
        return self.item.kind == "bibtex"

    @cached_property
    def preprint(self) -> bool:
        """Cited as a preprint: an arXiv id, or arXiv, CoRR, "preprint" where the venue stands."""
        if self.arxiv:
            return True
        if self.bibtex:
            venue = " ".join(self.fields.get(name, "") for name in (*_VENUE_FIELDS, "archiveprefix", "eprint"))
            return is_preprint_venue(venue)
        title = set(_words(self.item.title))
        return any(word in PREPRINT_WORDS and word not in title for word in _PIECE_RE.findall(fold(self.item.raw)))

    @cached_property
    def arxiv(self) -> str:
        """The arXiv id the reference gives (also one broken after its slash at a line end: "hep-th/ 9807193")."""
        if self.item.arxiv or self.bibtex:
            return normalize_arxiv(self.item.arxiv) if self.item.arxiv else ""
        match = _BROKEN_ARXIV_RE.search(self.item.raw)
        return normalize_arxiv(match.group(1).replace(" ", "")) if match else ""

    @cached_property
    def parsed_title(self) -> tuple[int, int] | None:
        """Where the parser's title guess stands among the words."""
        words = _words(self.item.title)
        found = _locate(self, words) if words and not self.bibtex else None
        return found[:2] if found else None


@lru_cache(maxsize=4096)
def read_reference(item: ReferenceItem) -> Cited:
    """The reference read once (cached: the corpus's coverage test and every comparison read the same)."""
    cited = Cited(item)
    if item.kind == "bibtex":
        try:
            entries = parse_library(item.raw).entries
        except Exception:  # noqa: BLE001 - a damaged entry is compared by what the parser kept
            entries = []
        if entries:
            cited.fields = {f.key: latex_text(f.value) for f in entries[0].fields}
            try:
                cited.names = author_names(next((str(f.value) for f in entries[0].fields if f.key == "author"), ""))
            except ValueError:
                cited.names = []
        return cited
    text = _LATEX_ACCENT_RE.sub(lambda m: m.group(1) or m.group(2), item.raw)  # Lled\'o: one word, as fold reads it
    text = text.translate(_LETTERS)
    text = _ID_RE.sub(lambda m: " " * len(m.group(0)), text)
    cited.text = text
    for token in _TOKEN_RE.finditer(text):
        folded = fold(token.group(0))
        for piece in _PIECE_RE.finditer(folded):
            cited.words.append(piece.group(0))
            cited.spans.append((token.start(), token.end()))
    return cited


def _words(text: str) -> list[str]:
    """The folded words of a title or a name, as the reference's text is read."""
    return normalize_title((text or "").translate(_LETTERS)).split()


def _gap(cited: Cited, i: int) -> str:
    """The characters before word i (i == len(words): after the last word)."""
    start = cited.spans[i - 1][1] if i > 0 else 0
    end = cited.spans[i][0] if i < len(cited.spans) else len(cited.text)
    return cited.text[start:end] if start <= end else ""


def _bounded(cited: Cited, i: int, j: int) -> bool:
    """Words i..j-1 stand between punctuation (or the ends of the text)."""
    return (i == 0 or any(ch in _BREAK_CHARS for ch in _gap(cited, i))) and \
        (j == len(cited.words) or any(ch in _BREAK_CHARS for ch in _gap(cited, j)))


def _locate(cited: Cited, title: list[str]) -> tuple[int, int, int] | None:
    """(first word, last word + 1, character edits) of a title among the reference's words, else None."""
    words, n = cited.words, len(title)
    if not n or not words:
        return None
    compact = "".join(title)
    for i in range(len(words)):  # the same letters, split alike or not ("Fixture-Net", "FixtureNet")
        if not compact.startswith(words[i]):
            continue
        span = ""
        for j in range(i, len(words)):
            span += words[j]
            if not compact.startswith(span):
                break
            if len(span) == len(compact):
                if _bounded(cited, i, j + 1):
                    return i, j + 1, 0
                break
    if len(compact) < MIN_FUZZY_CHARS:
        return None
    allowed = 1 + len(compact) // FUZZY_CHARS_PER_EDIT
    best = None
    for i in range(len(words)):
        if i and not any(ch in _BREAK_CHARS for ch in _gap(cited, i)):
            continue
        span = ""
        for j in range(i + 1, min(len(words), i + n + 3) + 1):
            span += words[j - 1]
            if len(span) > len(compact) + allowed:
                break
            if len(span) >= len(compact) - allowed and _bounded(cited, i, j):
                edits = OSA.distance(compact, span, score_cutoff=allowed)
                if edits <= allowed and (best is None or edits < best[2]):
                    best = (i, j, edits)
    return best


# ----------------------------------------------------------------------------------------------- the comparison


@dataclass
class Comparison:
    """How a reference agrees with one record."""

    record: Record
    title: str = ""  # "exact", "close" (a few edits, or one of them lacks the other's subtitle) or "" (no)
    title_given: bool = True  # False: the reference gives no title (physics: authors, journal, volume, page)
    first_author: bool | None = None  # None: the record names no authors
    authors_found: int = 0
    year: bool | None = None  # None: the reference or the record gives no year
    doi_match: bool = False
    arxiv_match: bool = False
    differences: dict[str, tuple[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def same_work(self) -> bool:
        """Whether the record is the work the reference names (and so its differences count)."""
        ids = self.doi_match or self.arxiv_match
        if self.title == "exact":
            words = self.record.title.split()
            long_title = len(words) >= LONG_TITLE_WORDS and len(self.record.title) >= LONG_TITLE_CHARS
            return bool(self.authors_found or self.year or long_title or ids)
        if self.title == "close":
            return bool(self.authors_found or self.year or ids)
        return ids and bool(self.first_author or (self.year and self.authors_found))

    @property
    def verified(self) -> bool:
        return self.same_work and (bool(self.title) or not self.title_given) and \
            self.first_author is not False and self.year is not False and not self.differences

    def rank(self) -> tuple:
        """Sort key, best first: the same work, then agreement field by field."""
        return (not self.same_work, not self.title, self.first_author is False, self.year is False,
                self.title != "exact", -self.authors_found, not (self.doi_match or self.arxiv_match),
                len(self.differences))


def compare(cited: Cited, record: Record, vocabulary: VenueVocabulary | None = None,
            known: list[Venue] = ()) -> Comparison:
    """The agreement of a reference with a record, and the fields that differ (with the record's values).
    `vocabulary` (the corpus's venues) and `known` (venues of other records found for the reference) are what
    a wrong venue is recognised by."""
    result = Comparison(record)
    item = cited.item
    record_doi = normalize_doi(record.doi)
    result.doi_match = bool(item.doi and record_doi and item.doi == record_doi) or \
        bool(record.arxiv and item.doi.startswith("10.48550/arxiv.") and item.doi[15:] == record.arxiv)
    result.arxiv_match = bool(cited.arxiv and record.arxiv and cited.arxiv == record.arxiv)
    title_words = _words(record.title)
    result.title_given = bool(item.title) if cited.bibtex else len(_words(item.title)) >= MIN_TITLE_WORDS
    if cited.bibtex:
        result.title = _title_agreement(_words(item.title), title_words)
        title_span = None
    else:
        title_span, result.title = _locate_title(cited, record.title, title_words)
    _compare_authors(cited, record, result, title_span)
    _compare_year(cited, record, result, title_span)
    _compare_ids(cited, record, result)
    if result.title and result.same_work:
        _compare_venue(cited, record, result, title_span, vocabulary, known)
    elif not result.title and result.same_work and result.title_given:
        result.differences["title"] = (item.title, record.title)
    return result


def _title_agreement(cited: list[str], record: list[str]) -> str:
    if not cited or not record:
        return ""
    a, b = "".join(cited), "".join(record)
    if a == b:
        return "exact"
    allowed = 1 + max(len(a), len(b)) // FUZZY_CHARS_PER_EDIT
    if min(len(a), len(b)) >= MIN_FUZZY_CHARS and OSA.distance(a, b, score_cutoff=allowed) <= allowed:
        return "close"
    shorter, longer = (cited, record) if len(cited) < len(record) else (record, cited)
    if len(shorter) >= 3 and longer[:len(shorter)] == shorter:  # one lacks the other's subtitle
        return "close"
    return ""


def _locate_title(cited: Cited, title: str, words: list[str]) -> tuple[tuple[int, int] | None, str]:
    found = _locate(cited, words)
    if found:
        subtitle = ":" in _gap(cited, found[1]) and ":" not in title  # the reference's title goes on
        return found[:2], "exact" if found[2] == 0 and not subtitle else "close"
    main = re.split(r"[:?!]\s|\s[-–—]\s", title, maxsplit=1)[0]  # the title without its subtitle
    main_words = _words(main)
    if len(main_words) >= 3 and len(main_words) < len(words):
        found = _locate(cited, main_words)
        if found:
            return found[:2], "close"
    return None, ""


# --- authors


@dataclass(frozen=True)
class _Name:
    family: tuple[str, ...]
    given: tuple[str, ...]

    @property
    def words(self) -> set[str]:
        return set(self.family) | {w for w in self.given if len(w) > 1}


def _name(text: str) -> _Name:
    given, family = split_name(text)
    family_words = [w for w in _words(family) if w not in _PARTICLES and len(w) > 1] or _words(family)
    return _Name(tuple(family_words), tuple(_words(given)))


def _same_word(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 5 and OSA.distance(a, b, score_cutoff=1) <= 1)


def _position(name: _Name, region: list[str]) -> int | None:
    """Where an author's surname (else a given name of 3 letters or more: names written family first) stands:
    written exactly, else within one letter (a transliteration)."""
    for words in (name.family, [w for w in name.given if len(w) >= 3]):
        for same in (str.__eq__, _same_word):
            places = [i for i, word in enumerate(region) for w in words if same(word, w)]
            if places:
                return min(places)
    return None


def _alike(a: _Name, b: _Name) -> bool:
    """Two authors whose names share a word (or nearly: "Acharya", "Acharyya"): their places are ambiguous."""
    return any(_same_word(x, y) for x in a.words for y in b.words)


def _compare_authors(cited: Cited, record: Record, result: Comparison, title_span: tuple[int, int] | None) -> None:
    names = [_name(a) for a in record.authors if a and a.strip()]
    if not names:
        return
    if cited.bibtex:
        _compare_author_fields(cited, record, names, result)
        return
    end = title_span[0] if title_span else (cited.parsed_title[0] if cited.parsed_title else len(cited.words))
    region = cited.words[:end]
    shown = _shown(cited.text[:cited.spans[end][0]] if end < len(cited.spans) else cited.text)
    places = [_position(name, region) for name in names]
    result.authors_found = sum(p is not None for p in places)
    first = places[0]
    first_ok = first is not None and first <= MAX_LEADING_WORDS and \
        not any(p is not None and p < first and not _alike(names[0], names[j]) for j, p in enumerate(places)) and \
        all(_leading_word(word, names[0]) for word in region[:first])
    result.first_author = first_ok
    if not first_ok:
        result.differences["first author"] = (shown, record.authors[0])
        return
    if len(names) > MAX_LISTED_AUTHORS:
        return
    et_al = bool(_ET_AL_RE.search(cited.text[:cited.spans[end][0]] if end < len(cited.spans) else cited.text))
    missing = [record.authors[j] for j, p in enumerate(places) if p is None]
    if len(missing) < len(names) and len(names) > LONG_LIST and all(p is not None for p in places[:LONG_LIST]):
        missing = []  # a long list cut short
    distinct = [j for j, name in enumerate(names) if not any(_alike(name, other) for k, other in enumerate(names)
                                                              if k != j)]
    order = [places[j] for j in distinct if places[j] is not None]
    if (missing and not et_al) or order != sorted(order):
        result.differences["authors"] = (shown, "; ".join(record.authors))
        result.notes.append(f"the reference lacks {', '.join(missing)}" if missing and not et_al
                            else "the reference lists the authors in another order")


def _leading_word(word: str, name: _Name) -> bool:
    """A word that may stand before the first author's surname: an initial, one of their given names, a number."""
    return len(word) <= 2 or word.isdigit() or word in name.given or word in _PARTICLES or \
        any(len(g) <= 2 and word.startswith(g[0]) for g in name.given) or any(c.isdigit() for c in word)


def _compare_author_fields(cited: Cited, record: Record, names: list[_Name], result: Comparison) -> None:
    listed = [n for n in cited.names if n.strip().lower() not in ("others", "et al.", "et al")]
    et_al = len(listed) < len(cited.names)
    cited_names = [_name(n) for n in listed]
    if not cited_names:
        return

    def same(a: _Name, b: _Name) -> bool:
        return any(_same_word(x, y) for x in a.family for y in b.family) or \
            any(_same_word(x, y) for x in a.family for y in b.given if len(y) >= 3) or \
            any(_same_word(x, y) for x in b.family for y in a.given if len(y) >= 3)

    matched: list[int | None] = []
    for name in names:  # each cited name answers for one record author (two authors may share a surname)
        free = [k for k, c in enumerate(cited_names) if k not in matched and same(name, c)]
        exact = [k for k in free if set(cited_names[k].family) == set(name.family)
                 and (not name.given or not cited_names[k].given or cited_names[k].given[0][:1] == name.given[0][:1])]
        matched.append((exact or free or [None])[0])
    result.authors_found = sum(m is not None for m in matched)
    shown = _shown(" and ".join(listed))
    result.first_author = matched[0] == 0
    if not result.first_author:
        result.differences["first author"] = (listed[0], record.authors[0])
        return
    if len(names) > MAX_LISTED_AUTHORS:
        return
    missing = [record.authors[j] for j, m in enumerate(matched) if m is None]
    extra = [listed[k] for k in range(len(cited_names)) if k not in matched]
    order = [m for m in matched if m is not None]
    if (missing and not et_al) or extra or order != sorted(order):
        result.differences["authors"] = (shown, "; ".join(record.authors))
        if extra:
            result.notes.append(f"the record does not list {', '.join(extra)}")
        elif missing and not et_al:
            result.notes.append(f"the reference lacks {', '.join(missing)}")
        else:
            result.notes.append("the reference lists the authors in another order")


# --- year, identifiers, venue


def cited_years(cited: Cited, title_span: tuple[int, int] | None) -> list[int]:
    """Years the reference gives outside its title: those after punctuation first ("2019.", "(2019)", ", 2019":
    a year inside a venue's name, "Proceedings of the 2019 ACM ..." or "... Technologists 2019", is not the
    reference's year), else any."""
    if cited.bibtex:
        return [cited.item.year] if cited.item.year else []
    span = title_span or cited.parsed_title or (0, 0)
    marked, plain = [], []
    for i, word in enumerate(cited.words):
        match = _YEAR_RE.match(word)
        if not match or span[0] <= i < span[1]:
            continue
        (marked if any(ch in _BREAK_CHARS for ch in _gap(cited, i)) else plain).append(int(match.group(1)))
    return marked or plain


def _compare_year(cited: Cited, record: Record, result: Comparison, title_span: tuple[int, int] | None) -> None:
    years = cited_years(cited, title_span)
    if not years or not record.year:
        return
    result.year = record.year in years
    if not result.year:
        year = cited.item.year if cited.item.year in years else years[0]
        result.differences["year"] = (str(year), str(record.year))


def _compare_ids(cited: Cited, record: Record, result: Comparison) -> None:
    item = cited.item
    arxiv_doi = item.doi.startswith("10.48550/arxiv.")
    if item.doi and record.doi and not result.doi_match and not (arxiv_doi and not record.arxiv):
        result.differences["doi"] = (item.doi, normalize_doi(record.doi))
    if cited.arxiv and record.arxiv and not result.arxiv_match:
        result.differences["arxiv"] = (cited.arxiv, record.arxiv)


def cited_venue(cited: Cited, title_span: tuple[int, int] | None) -> VenueText:
    """The reference's venue as written (for a text reference: what follows its title)."""
    if cited.bibtex:
        text = "; ".join(cited.fields[name] for name in _VENUE_FIELDS if cited.fields.get(name)) or \
            cited.fields.get("publisher", "")  # a book's
        venue = VenueText.of(text)
        series = series_acronyms(cited.fields.get("series", ""))
        return dataclasses.replace(venue, names=venue.names | series) if series else venue
    span = title_span or cited.parsed_title
    if span is None or span[1] >= len(cited.words):
        return VenueText.of("")
    return VenueText.of(venue_shown(cited.text[cited.spans[span[1]][0]:]))


def _compare_venue(cited: Cited, record: Record, result: Comparison, title_span: tuple[int, int] | None,
                   vocabulary: VenueVocabulary | None, known: list[Venue]) -> None:
    venue = cited_venue(cited, title_span)
    record_preprint = is_preprint_venue(record.venue) or (not record.venue and bool(record.arxiv))
    own_known = vocabulary.venue_of(record.venue) if vocabulary is not None and record.venue else None
    own = VenueText.of(record.venue, frozenset(own_known.acronyms) if own_known and own_known.acronyms else None)
    own_score = closeness(venue, own) if own.words or own.names else 0.0
    if cited.preprint and not record_preprint and informative(record.venue):
        if not (result.arxiv_match or result.doi_match and record.arxiv) and own_score < SAME_VENUE:
            result.differences["version"] = ("a preprint", f"published: {record.venue}")
            result.notes.append("cited as a preprint; the record is the published version")
        return
    named = _named(venue, vocabulary, known, own.words)
    if record_preprint and not cited.preprint:
        if named and named[0][1] >= NAMES_VENUE:
            result.differences["version"] = (venue.text or named[0][0].name, "a preprint" + (
                f" (arXiv:{record.arxiv})" if record.arxiv else ""))
            result.notes.append("the record is the preprint; the reference may cite its published version")
        return
    if not informative(record.venue) or own_score >= SAME_VENUE or not named:
        return
    other, score = named[0]
    if score >= NAMES_VENUE and score - own_score >= VENUE_MARGIN:
        result.differences["venue"] = (venue.text or other.name, record.venue)


def _named(venue: VenueText, vocabulary: VenueVocabulary | None, known: list[Venue],
           own_words: frozenset[str]) -> list[tuple[Venue, float]]:
    """Known venues other than the record's that the reference's venue text names, closest first."""
    if not venue.words and not venue.names and not venue.initials:
        return []
    found = vocabulary.named(venue) if vocabulary is not None else []
    found += [(other, closeness(venue, other)) for other in known]
    return sorted(((other, score) for other, score in found if other.words != own_words), key=lambda p: -p[1])


_PAGES_RE = re.compile(r"\b(?:pp?\.?\s*)?\d+\s*[–—-]+\s*\d+\b|\b\d+\s+pages\b", re.IGNORECASE)
_LEADING_IN_RE = re.compile(r"^[\s.,;:]*in:?\s+", re.IGNORECASE)


def venue_shown(text: str) -> str:
    """A reference's venue part as shown: without a leading "In", page ranges, or its year at the end."""
    return _shown(_LEADING_IN_RE.sub("", _PAGES_RE.sub("", text)))


# starts after no punctuation it takes in: from each of ";;;…" it ran to the end (quadratic)
_TRAILING_YEAR_RE = re.compile(r"(?<![\s.,;:(])[\s.,;:(]*\b(1[5-9]\d\d|20\d\d)[a-z]?\)?[\s.,;:]*$")


def _shown(text: str) -> str:
    """Text of a reference as shown beside a record's value: one line, no trailing year or punctuation."""
    text = _TRAILING_YEAR_RE.sub("", " ".join(text.split())).strip(" ,;:.“”\"'‘’(")
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1].rsplit(" ", 1)[0] + "…"
