"""Parse a reference list (BibTeX, LaTeX `\\bibitem`, text copied from a PDF) into `ReferenceItem`s: what each
entry names (title, DOI, arXiv id, year, key, number)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from recommender.corpus.bibtex import holds_entry, latex_text, parse_library
from recommender.corpus.identifiers import find_arxiv, normalize_arxiv, normalize_doi
from recommender.references.text import (bibitem_count, check_is_text, decode_reference_bytes, entry_number, split_entries,
                                         strip_marker)

MAX_ENTRY_CHARS = 2_000  # no reference is longer; what follows is not read (the matching costs grow with length)
MAX_REFERENCES = 5_000  # entries of one list (a long survey cites 1,000-2,000; `check-refs` takes ~1.6 ms an entry)
_DOI_IN_TEXT_RE = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>“”]+", re.IGNORECASE)
# where bibtexparser starts a block: "@type{" or "@type(" anywhere in the text
_BIB_BLOCK_RE = re.compile(r"@\s*([A-Za-z]+)\s*[{(]")
_NOT_ENTRIES = ("string", "preamble", "comment")
QUOTED_RE = re.compile(r"[\"\u201c\u201d\u00ab\u00bb]([^\"\u201c\u201d\u00ab\u00bb]+)[\"\u201c\u201d\u00ab\u00bb]")
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


def parse_reference_list(source: str | os.PathLike, most: int | None = MAX_REFERENCES) -> list[ReferenceItem]:
    """Parse a reference list given as text (`str`) or as a `Path` (plain, `.bib`, optionally gzipped).

    Raises ValueError with a message for the user when the input is not a text reference list, or holds more than
    `most` entries (None: any number, for a user's own library read on their machine).
    """
    text = _read_source(source)
    if holds_entry(text):
        if most is not None:
            entries = (m for m in _BIB_BLOCK_RE.finditer(text) if m.group(1).casefold() not in _NOT_ENTRIES)
            _check_count(sum(1 for _ in islice(entries, most + 1)), most, "BibTeX entries")
        return _parse_bibtex(text)
    if most is not None and "\\bibitem" in text:
        _check_count(bibitem_count(text, most + 1), most, "\\bibitem entries")
    entries = split_entries(text, None if most is None else most + 1)
    if most is not None:
        _check_count(len(entries), most, "entries")
    return [parse_reference_line(entry, line_number=number) for number, entry in entries]


def cited_bibtex(text: str, keys: set[str]) -> str:
    """A .bib text with only the entries whose key is one of `keys` (compared case-folded; the key is what comes
    before the entry's first comma), its @string and @preamble blocks, and any block whose key cannot be read; each
    other block is replaced by its line breaks, so entries keep their line numbers."""
    folded = {key.casefold() for key in keys}
    blocks = list(_BIB_BLOCK_RE.finditer(text))
    pieces = [text[:blocks[0].start()] if blocks else text]
    for block, end in zip(blocks, [b.start() for b in blocks[1:]] + [len(text)]):
        key, comma, _ = text[block.end():end].partition(",")
        kept = block.group(1).casefold() in ("string", "preamble") or not comma or key.strip().casefold() in folded
        pieces.append(text[block.start():end] if kept else "\n" * text.count("\n", block.start(), end))
    return "".join(pieces)


def _check_count(count: int, most: int, what: str) -> None:
    if count > most:
        raise ValueError(f"The reference list holds over {most:,} {what}, more than any paper cites. "
                         "Give the list of one paper (for a LaTeX draft: its .bib, of which only the cited entries "
                         "are read).")


def parse_reference_line(line: str, line_number: int | None = None) -> ReferenceItem:
    """Guess the DOI, arXiv id, year and title of one free-form reference (its lines already joined)."""
    line = " ".join(line[:4 * MAX_ENTRY_CHARS].split())[:MAX_ENTRY_CHARS]
    body = strip_marker(line)
    doi_match = _DOI_IN_TEXT_RE.search(body)
    return ReferenceItem(
        raw=body,
        title=_guess_title(body),
        doi=normalize_doi(doi_match.group(0)) if doi_match else "",
        year=_guess_year(body),
        line=line_number,
        arxiv=find_arxiv(body),
        number=entry_number(line),
    )


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
            raw=entry.raw[:MAX_ENTRY_CHARS],
            title=latex_text(fields.get("title", "")[:MAX_ENTRY_CHARS]),
            doi=normalize_doi(fields.get("doi", "")),
            year=int(year_match.group(1)) if year_match else None,
            key=entry.key,
            line=entry.start_line + 1,
            kind="bibtex",
            arxiv=arxiv or find_arxiv(" ".join(fields.get(f, "")[:MAX_ENTRY_CHARS]
                                               for f in ("journal", "url", "note"))),
        ))
    return items


def _guess_year(body: str) -> int | None:
    """The publication year: one in parentheses, else the first plausible one."""
    match = _YEAR_IN_PARENS_RE.search(body) or _YEAR_RE.search(body)
    return int(match.group(1)) if match else None


def _guess_title(body: str) -> str:
    """The title of a reference, read from the cues of the common styles (quotes, year, author list)."""
    quoted = [q.strip(" ,.") for q in QUOTED_RE.findall(body)]
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
