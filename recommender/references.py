"""Reviewer reference lists: parse them and match them against a corpus."""
from __future__ import annotations

import gzip
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .paper import Paper

MIN_CONTAINED_TITLE_WORDS = 3  # shorter titles only match exactly, never inside a line

_NON_ALNUM_RE = re.compile(r"[^0-9a-z]+")
_DROPPED_RE = re.compile(r"[{}'\u2019]")  # BibTeX case braces and apostrophes join their words
_LATEX_ACCENT_RE = re.compile(r"\\[`'^\"~=.]\s*\{?([A-Za-z])\}?|\\[uvHckrbd]\{([A-Za-z])\}")
_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi\s*:\s*|doi\s+)", re.IGNORECASE)
_DOI_IN_TEXT_RE = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+", re.IGNORECASE)
_BIB_ENTRY_RE = re.compile(r"^\s*@[A-Za-z]+\s*[{(]", re.MULTILINE)
_NUMBERING_RE = re.compile(r"^\s*(?:\[\d+\]|\(\d+\)|\d+[.)])\s*")
_QUOTED_RE = re.compile(r"[\"\u201c\u201d\u00ab\u00bb]([^\"\u201c\u201d\u00ab\u00bb]+)[\"\u201c\u201d\u00ab\u00bb]")
_YEAR_RE = re.compile(r"\b(1[89]\d\d|20\d\d)[a-z]?\b")
# "... 2019. Title." (ACM) or "... (2019). Title." (APA)
_AFTER_YEAR_RE = re.compile(r"\(?\b(?:1[89]\d\d|20\d\d)[a-z]?\)?[.,:]\s+(.+)")
# A sentence end: a period after a word of two or more letters or digits, not after an initial.
_SENTENCE_END_RE = re.compile(r"(?<=[a-z0-9?!)\]]{2})[.?!](?=\s|$)|(?<=[?!])(?=\s)", re.IGNORECASE)


def normalize_title(text: str) -> str:
    """Lowercase, strip accents, and collapse every run of non-alphanumerics to one space."""
    text = _LATEX_ACCENT_RE.sub(lambda m: m.group(1) or m.group(2), text or "")
    decomposed = unicodedata.normalize("NFKD", _DROPPED_RE.sub("", text))
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _NON_ALNUM_RE.sub(" ", stripped.casefold()).strip()


def normalize_doi(text: str) -> str:
    """Bare lowercase DOI: no `https://doi.org/` or `doi:` prefix, no trailing punctuation."""
    doi = _DOI_PREFIX_RE.sub("", (text or "").strip())
    return doi.strip().rstrip(".,;").lower()


@dataclass(frozen=True)
class ReferenceItem:
    """One entry of a reference list, with what could be guessed from it."""

    raw: str
    title: str = ""
    doi: str = ""
    year: int | None = None
    key: str = ""  # BibTeX citation key, when the list was BibTeX
    line: int | None = None
    kind: str = "text"  # "text" (a free-form line) or "bibtex"


def parse_reference_list(source: str | os.PathLike) -> list[ReferenceItem]:
    """Parse a reference list given as text (`str`) or as a `Path` (plain, `.bib`, optionally gzipped)."""
    text = _read_source(source)
    if _BIB_ENTRY_RE.search(text):
        return _parse_bibtex(text)
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            items.append(parse_reference_line(line, line_number=number))
    return items


def parse_reference_line(line: str, line_number: int | None = None) -> ReferenceItem:
    """Guess the DOI, year and title of one free-form reference line."""
    body = _NUMBERING_RE.sub("", line.strip(), count=1)
    doi_match = _DOI_IN_TEXT_RE.search(body)
    doi = normalize_doi(doi_match.group(0)) if doi_match else ""
    year_match = _YEAR_RE.search(body)
    return ReferenceItem(
        raw=body,
        title=_guess_title(body),
        doi=doi,
        year=int(year_match.group(1)) if year_match else None,
        line=line_number,
    )


class ReferenceIndex:
    """Look-up tables of a corpus by DOI and normalized title, built once, matched many times."""

    def __init__(self, papers: Iterable[Paper]):
        self.by_doi: dict[str, set[str]] = {}
        self.by_title: dict[str, set[str]] = {}
        self.longest_title = 0
        for paper in papers:
            for doi in {normalize_doi(paper.doi), normalize_doi(paper.id)}:
                if doi.startswith("10."):
                    self.by_doi.setdefault(doi, set()).add(paper.id)
            title = normalize_title(paper.title)
            if title:
                self.by_title.setdefault(title, set()).add(paper.id)
                self.longest_title = max(self.longest_title, title.count(" ") + 1)

    def match_item(self, item: ReferenceItem) -> set[str]:
        """Corpus ids for one item: DOI first, then exact title, then (plain lines) title inside the line."""
        if item.doi and item.doi in self.by_doi:
            return set(self.by_doi[item.doi])
        title = normalize_title(item.title)
        if title in self.by_title:
            return set(self.by_title[title])
        if item.kind == "text":
            return self._contained_titles(normalize_title(item.raw))
        return set()

    def match(self, items: Iterable[ReferenceItem]) -> set[str]:
        matched: set[str] = set()
        for item in items:
            matched |= self.match_item(item)
        return matched

    def _contained_titles(self, line: str) -> set[str]:
        """Ids of the longest corpus title (>= 3 words) that occurs word-aligned inside `line`."""
        words = line.split()
        for size in range(min(len(words), self.longest_title), MIN_CONTAINED_TITLE_WORDS - 1, -1):
            hits: set[str] = set()
            for start in range(len(words) - size + 1):
                hits |= self.by_title.get(" ".join(words[start:start + size]), set())
            if hits:
                return hits
        return set()


def match_references(items: Iterable[ReferenceItem], papers: Iterable[Paper]) -> set[str]:
    """Corpus ids matched by the items, by DOI or by normalized title."""
    return ReferenceIndex(papers).match(items)


def _read_source(source: str | os.PathLike) -> str:
    """A `str` is the list's text itself (never opened as a path); a path object is read from disk."""
    if isinstance(source, str):
        return source
    data = Path(source).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def _parse_bibtex(text: str) -> list[ReferenceItem]:
    import bibtexparser
    from pylatexenc.latex2text import LatexNodes2Text

    decode = LatexNodes2Text(math_mode="verbatim").latex_to_text
    items = []
    for entry in bibtexparser.parse_string(text).entries:
        fields = {field.key.lower(): str(field.value) for field in entry.fields}
        year_match = _YEAR_RE.search(fields.get("year", ""))
        items.append(ReferenceItem(
            raw=entry.raw,
            title=" ".join(decode(fields.get("title", "")).split()),
            doi=normalize_doi(fields.get("doi", "")),
            year=int(year_match.group(1)) if year_match else None,
            key=entry.key,
            line=entry.start_line + 1,
            kind="bibtex",
        ))
    return items


def _guess_title(body: str) -> str:
    """The title of a reference line: quoted text, else the sentence after the year, else the 2nd sentence."""
    quoted = [q.strip(" ,.") for q in _QUOTED_RE.findall(body)]
    quoted = [q for q in quoted if len(q.split()) >= 2]
    if quoted:
        return max(quoted, key=len)
    after_year = _AFTER_YEAR_RE.search(body)
    if after_year:
        return _first_sentence(after_year.group(1))
    sentences = [s.strip() for s in _SENTENCE_END_RE.split(body) if s and s.strip()]
    return sentences[1] if len(sentences) > 1 else (sentences[0] if sentences else "")


def _first_sentence(text: str) -> str:
    """Text up to the first sentence end, keeping a closing "?" or "!"."""
    match = _SENTENCE_END_RE.search(text)
    if not match:
        return text.strip()
    end = match.start() + (1 if text[match.start()] in "?!" else 0)
    return text[:end].strip()
