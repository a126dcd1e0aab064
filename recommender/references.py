"""Reviewer reference lists: parse them (BibTeX, LaTeX `\\bibitem`, text copied from a PDF) and match them to a corpus.

Matching order for one reference: DOI, then arXiv id, then title. A title is looked for among the
reference's "spans" (runs of words that start after punctuation and end at a sentence end, so a corpus
title never matches inside a longer title), first exactly (ignoring case, accents, spaces and hyphens),
then within a few character edits (rapidfuzz's optimal string alignment distance). A short title or an approximate one must also agree with
the reference on an author name or the year (within one), so that the matching stays precise.
"""
from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from rapidfuzz.distance import OSA

from .bibtex import latex_text, parse_library
from .paper import Paper
from .reference_text import check_is_text, decode_reference_bytes, entry_number, split_entries, strip_marker

SHORT_TITLE_WORDS = 3  # titles of at most this many words need an author and year check even when exact
MIN_FUZZY_CHARS = 16  # shorter titles only match exactly
FUZZY_CHARS_PER_EDIT = 25  # one character edit allowed per this many characters of title, plus one
_KEY_CHARS = 8  # fuzzy candidates share their first or last characters with the span

_NON_ALNUM_RE = re.compile(r"[^0-9a-z]+")
_DROPPED_RE = re.compile(r"[{}'\u2019]")  # BibTeX case braces and apostrophes join their words
_LATEX_ACCENT_RE = re.compile(r"\\[`'^\"~=.]\s*\{?([A-Za-z])\}?|\\[uvHckrbd]\{([A-Za-z])\}")
_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi\s*:\s*|doi\s+)", re.IGNORECASE)
_DOI_IN_TEXT_RE = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>“”]+", re.IGNORECASE)
_ARXIV_RE = re.compile(r"(?:arxiv\s*[:.]?\s*|arxiv\.org/(?:abs|pdf)/|\babs/)"
                       r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?", re.IGNORECASE)
_BIB_ENTRY_RE = re.compile(r"^\s*@[A-Za-z]+\s*[{(]", re.MULTILINE)
_QUOTED_RE = re.compile(r"[\"\u201c\u201d\u00ab\u00bb]([^\"\u201c\u201d\u00ab\u00bb]+)[\"\u201c\u201d\u00ab\u00bb]")
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20\d\d)[a-z]?\b")
_YEAR_IN_PARENS_RE = re.compile(r"\((1[5-9]\d\d|20\d\d)[a-z]?\)")
# "... 2019. Title." (ACM, Chicago) or "... (2019). Title." (APA)
_AFTER_YEAR_RE = re.compile(r"(?:\((?:1[5-9]\d\d|20\d\d)[a-z]?\)|\b(?:1[5-9]\d\d|20\d\d)[a-z]?)[.,:]\s+(.+)")
# "Smith, J., Jones, K.: Title." (Springer)
_AFTER_COLON_AUTHORS_RE = re.compile(r"^.{0,600}?(?:\b[A-Z]\.|et al\.):\s+(.+)")
# "Smith, J. A., Jones, K. & Lee, M. Title." (Nature, Vancouver)
_SURNAME_INITIALS_RE = re.compile(r"^(?:[^\W\d_][\w'’-]*(?: [^\W\d_][\w'’-]*)?,? (?:[A-Z]\.[ -]?)+(?:,|&|and|\s)*)+"
                                  r"(?:et al\.\s*)?")
# A sentence end: a period after a word of two or more letters or digits, not after an initial.
_SENTENCE_END_RE = re.compile(r"(?<=[a-z0-9?!)\]]{2})[.?!](?=\s|$)|(?<=[?!])(?=\s)", re.IGNORECASE)
_WORD_SPLIT_RE = re.compile(r"([0-9a-z]+)")
_STRONG_BREAK = set(".?!\"“”«»")
_WEAK_BREAK = set(":;,()[]{}/–—")
_NOT_NAMES = {"al", "et", "de", "da", "di", "du", "la", "le", "van", "von", "der", "den", "del", "jr", "sr", "ii",
              "iii", "and"}


def fold(text: str) -> str:
    """Lowercase text without accents, LaTeX accent commands, case braces or apostrophes; punctuation kept."""
    text = _LATEX_ACCENT_RE.sub(lambda m: m.group(1) or m.group(2), text or "")
    decomposed = unicodedata.normalize("NFKD", _DROPPED_RE.sub("", text))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def normalize_title(text: str) -> str:
    """Lowercase, strip accents, and collapse every run of non-alphanumerics to one space."""
    return _NON_ALNUM_RE.sub(" ", fold(text)).strip()


def normalize_doi(text: str) -> str:
    """Bare lowercase DOI: no `https://doi.org/` or `doi:` prefix, no trailing punctuation."""
    doi = _DOI_PREFIX_RE.sub("", (text or "").strip()).strip().rstrip(".,;").lower()
    while doi.endswith(")") and doi.count(")") > doi.count("("):
        doi = doi[:-1].rstrip(".,;")
    return doi


def normalize_arxiv(text: str) -> str:
    """Bare lowercase arXiv id without version ("1810.04805", "hep-th/9901001") found in text, else ""."""
    text = (text or "").strip()
    match = _ARXIV_RE.search(text) or _ARXIV_RE.search(f"arXiv:{text}")
    return match.group(1).lower() if match else ""


@dataclass(frozen=True)
class ReferenceItem:
    """One entry of a reference list, with what could be guessed from it."""

    raw: str
    title: str = ""
    doi: str = ""
    year: int | None = None
    key: str = ""  # BibTeX citation key, when the list was BibTeX
    line: int | None = None  # the line where the entry starts
    kind: str = "text"  # "text" (an entry of a plain or LaTeX list) or "bibtex"
    arxiv: str = ""
    number: int | None = None  # the number the list printed before it ("[12]", "12."), if any


def parse_reference_list(source: str | os.PathLike) -> list[ReferenceItem]:
    """Parse a reference list given as text (`str`) or as a `Path` (plain, `.bib`, optionally gzipped).

    Raises ValueError with a message for the user when the input is not a text reference list.
    """
    text = _read_source(source)
    if _BIB_ENTRY_RE.search(text):
        return _parse_bibtex(text)
    return [parse_reference_line(entry, line_number=number) for number, entry in split_entries(text)]


def parse_reference_line(line: str, line_number: int | None = None) -> ReferenceItem:
    """Guess the DOI, arXiv id, year and title of one free-form reference (its lines already joined)."""
    line = " ".join(line.split())
    body = strip_marker(line)
    doi_match = _DOI_IN_TEXT_RE.search(body)
    return ReferenceItem(
        raw=body,
        title=_guess_title(body),
        doi=normalize_doi(doi_match.group(0)) if doi_match else "",
        year=_guess_year(body),
        line=line_number,
        arxiv=_found_arxiv(body),
        number=entry_number(line),
    )


@dataclass(frozen=True)
class _Facts:
    """What the title check compares: an author's name words and the year of one corpus paper."""

    names: frozenset[str]
    year: int | None
    words: int  # words in the title


class ReferenceIndex:
    """Look-up tables of a corpus by DOI, arXiv id and title, built once, matched many times."""

    def __init__(self, papers: Iterable[Paper]):
        self.by_doi: dict[str, set[str]] = {}
        self.by_arxiv: dict[str, set[str]] = {}
        self.by_title: dict[str, set[str]] = {}  # compact title (no spaces) -> ids
        self.by_start: dict[str, set[str]] = {}  # first characters of a compact title -> compact titles
        self.by_end: dict[str, set[str]] = {}
        self.facts: dict[str, _Facts] = {}
        self.longest_title = 0
        for paper in papers:
            self._add(paper)

    def _add(self, paper: Paper) -> None:
        for doi in {normalize_doi(paper.doi), normalize_doi(paper.id)}:
            if doi.startswith("10."):
                self.by_doi.setdefault(doi, set()).add(paper.id)
        for value in (paper.extra.get("arxiv"), paper.extra.get("eprint"), paper.extra.get("url"), paper.id):
            arxiv = normalize_arxiv(str(value)) if value and (value != paper.id or "." in value) else ""
            if arxiv:
                self.by_arxiv.setdefault(arxiv, set()).add(paper.id)
        words = normalize_title(paper.title).split()
        if not words:
            return
        compact = "".join(words)
        self.by_title.setdefault(compact, set()).add(paper.id)
        self.by_start.setdefault(compact[:_KEY_CHARS], set()).add(compact)
        self.by_end.setdefault(compact[-_KEY_CHARS:], set()).add(compact)
        names = {w for author in paper.authors for w in normalize_title(str(author)).split()
                 if len(w) > 1 and w not in _NOT_NAMES}
        year = paper.year if isinstance(paper.year, int) and paper.year > 0 else None
        self.facts[paper.id] = _Facts(frozenset(names), year, len(words))
        self.longest_title = max(self.longest_title, len(words))

    def match_item(self, item: ReferenceItem) -> set[str]:
        """Corpus ids for one reference: by DOI, else arXiv id, else title (checked against authors and year).

        An entry that holds two references (a list split in the wrong place) can match one paper per
        reference: after the best title, other titles elsewhere in the entry count when an author agrees.
        """
        if item.doi and item.doi in self.by_doi:
            return set(self.by_doi[item.doi])
        if item.arxiv and item.arxiv in self.by_arxiv:
            return set(self.by_arxiv[item.arxiv])
        words, spans = self._spans(item)
        counts = Counter(words)
        years = [w for w in counts if len(w) == 4 and w.isdigit() and 1500 <= int(w) <= 2099]
        found = []  # (edits, -title length, span start, span end, title, an author agrees)
        for start, end, compact in spans:
            for title, edits in self._titles_near(compact):
                outside = _Outside(counts, Counter(words[start:end]), years)
                confirmed, author_ok = self._confirmed(title, edits, outside, item.kind == "bibtex")
                if confirmed:
                    found.append((edits, -len(title), start, end, title, author_ok))
        matched: set[str] = set()
        titles: set[str] = set()
        taken: list[tuple[int, int]] = []
        for edits, _, start, end, title, author_ok in sorted(found):
            if title not in titles and (not taken or (author_ok and all(end <= a or start >= b for a, b in taken))):
                matched |= self.by_title[title]
                titles.add(title)
                taken.append((start, end))
        return matched

    def match(self, items: Iterable[ReferenceItem]) -> set[str]:
        matched: set[str] = set()
        for item in items:
            matched |= self.match_item(item)
        return matched

    def _spans(self, item: ReferenceItem) -> tuple[list[str], list[tuple[int, int, str]]]:
        """The reference's words, and (first word, last word + 1, compact text) of each place where a corpus
        title could stand: after punctuation, up to a sentence end, sharing its first or last characters."""
        if item.kind == "bibtex":
            title_words = normalize_title(item.title).split()
            others = [w for w in normalize_title(item.raw).split() if w not in set(title_words)]
            return title_words + others, [(0, len(title_words), "".join(title_words))]
        folded = fold(item.raw)
        pieces = _WORD_SPLIT_RE.split(folded)
        words, gaps = pieces[1::2], pieces[0::2]
        in_quotes = _quoted_words(folded, pieces)
        ends = {j for j in range(1, len(words) + 1) if j == len(words) or (
            (_break(gaps[j]) == "strong" or "," in gaps[j])  # not inside a quoted title: that ends at its quote
            and not (in_quotes[j - 1] and in_quotes[j]))}
        spans = []
        for i in range(len(words)):
            if i and _break(gaps[i]) is None:
                continue
            known_start = "".join(words[i:i + _KEY_CHARS])[:_KEY_CHARS] in self.by_start
            compact = ""
            for j in range(i + 1, min(i + self.longest_title + 1, len(words)) + 1):
                compact += words[j - 1]
                if j in ends and (known_start or len(compact) < _KEY_CHARS or compact[-_KEY_CHARS:] in self.by_end):
                    spans.append((i, j, compact))
        return words, spans

    def _titles_near(self, compact: str) -> Iterable[tuple[str, int]]:
        """(corpus compact title, edit distance) for titles equal to the span or a few edits away."""
        if compact in self.by_title:
            yield compact, 0
        if len(compact) < MIN_FUZZY_CHARS:
            return
        for title in self.by_start.get(compact[:_KEY_CHARS], set()) | self.by_end.get(compact[-_KEY_CHARS:], set()):
            allowed = 1 + len(title) // FUZZY_CHARS_PER_EDIT
            if title != compact and len(title) >= MIN_FUZZY_CHARS and abs(len(title) - len(compact)) <= allowed:
                edits = OSA.distance(compact, title, score_cutoff=allowed)
                if edits <= allowed:
                    yield title, edits

    def _confirmed(self, title: str, edits: int, outside: "_Outside", bibtex: bool) -> tuple[bool, bool]:
        """(the reference's other words agree with a paper of this title, an author name agrees)."""
        if edits == 0 and bibtex:
            return True, True
        years = outside.years()
        confirmed = author_agrees = False
        for pid in self.by_title[title]:  # several when the corpus holds duplicates
            facts = self.facts[pid]
            author_ok = any(outside.has(name) for name in facts.names)
            year_ok = facts.year is not None and any(abs(facts.year - year) <= 1 for year in years)
            year_unknown = facts.year is None or not years
            if edits == 0 and facts.words > SHORT_TITLE_WORDS:  # nothing may contradict a long exact title
                confirmed |= author_ok or year_ok or not years or (not facts.names and facts.year is None)
            else:
                confirmed |= author_ok and (year_ok or year_unknown)
            author_agrees |= author_ok
        return confirmed, author_agrees


class _Outside:
    """The words of a reference outside one span (where a title was found): what the checks read."""

    def __init__(self, counts: Counter, span: Counter, year_words: list[str]):
        self.counts, self.span, self.year_words = counts, span, year_words

    def has(self, word: str) -> bool:
        return self.counts[word] > self.span[word]

    def years(self) -> set[int]:
        return {int(word) for word in self.year_words if self.has(word)}


def match_references(items: Iterable[ReferenceItem], papers: Iterable[Paper]) -> set[str]:
    """Corpus ids matched by the items, by DOI, arXiv id or title."""
    return ReferenceIndex(papers).match(items)


def _quoted_words(folded: str, pieces: list[str]) -> list[bool]:
    """For each word (and one past the last), whether it lies inside a quoted passage of two or more words."""
    quoted = [m.span(1) for m in _QUOTED_RE.finditer(folded) if len(m.group(1).split()) >= 2]
    inside, offset, region = [], 0, 0
    for k, piece in enumerate(pieces):
        if k % 2:
            while region < len(quoted) and quoted[region][1] <= offset:
                region += 1
            inside.append(region < len(quoted) and quoted[region][0] <= offset)
        offset += len(piece)
    return inside + [False]


def _break(gap: str) -> str | None:
    """How strongly the characters between two words separate them: "strong", "weak" or None."""
    if not gap or not (any(ch.isspace() for ch in gap) or any(ch in "\"“”«»" for ch in gap)):
        return None
    if any(ch in _STRONG_BREAK for ch in gap):
        return "strong"
    return "weak" if any(ch in _WEAK_BREAK for ch in gap) else None


def _read_source(source: str | os.PathLike) -> str:
    """A `str` is the list's text itself (never opened as a path); a path object is read from disk."""
    if isinstance(source, str):
        check_is_text(source)
        return source
    return decode_reference_bytes(Path(source).read_bytes())


def _parse_bibtex(text: str) -> list[ReferenceItem]:
    items = []
    for entry in parse_library(text).entries:
        fields = {field.key: str(field.value) for field in entry.fields}
        year_match = _YEAR_RE.search(fields.get("year", ""))
        arxiv = ""
        if fields.get("eprint") and fields.get("archiveprefix", "arxiv").lower() == "arxiv":
            arxiv = normalize_arxiv(fields["eprint"])
        items.append(ReferenceItem(
            raw=entry.raw,
            title=latex_text(fields.get("title", "")),
            doi=normalize_doi(fields.get("doi", "")),
            year=int(year_match.group(1)) if year_match else None,
            key=entry.key,
            line=entry.start_line + 1,
            kind="bibtex",
            arxiv=arxiv or _found_arxiv(" ".join(fields.get(f, "") for f in ("journal", "url", "note"))),
        ))
    return items


def _found_arxiv(text: str) -> str:
    match = _ARXIV_RE.search(text)
    return match.group(1).lower() if match else ""


def _guess_year(body: str) -> int | None:
    """The publication year: one in parentheses, else the first plausible one."""
    match = _YEAR_IN_PARENS_RE.search(body) or _YEAR_RE.search(body)
    return int(match.group(1)) if match else None


def _guess_title(body: str) -> str:
    """The title of a reference, read from the cues of the common styles (quotes, year, author list)."""
    quoted = [q.strip(" ,.") for q in _QUOTED_RE.findall(body)]
    quoted = [q for q in quoted if len(q.split()) >= 2]
    if quoted:
        return max(quoted, key=len)
    for cue in (_AFTER_YEAR_RE, _AFTER_COLON_AUTHORS_RE):
        match = cue.search(body)
        if match and _first_sentence(match.group(1)):
            return _first_sentence(match.group(1))
    authors = _SURNAME_INITIALS_RE.match(body)
    if authors and authors.end() < len(body):
        return _first_sentence(body[authors.end():])
    sentences = [s.strip() for s in _SENTENCE_END_RE.split(body) if s and s.strip()]
    return sentences[1] if len(sentences) > 1 else (sentences[0] if sentences else "")


def _first_sentence(text: str) -> str:
    """Text up to the first sentence end, keeping a closing "?" or "!"."""
    match = _SENTENCE_END_RE.search(text)
    if not match:
        return text.strip()
    end = match.start() + (1 if text[match.start()] in "?!" else 0)
    return text[:end].strip()
