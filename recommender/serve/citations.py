"""Citations in a document's source as written: LaTeX citation commands (`\\cite{a, b}`, `\\citep[p. 3]{a}`,
`\\parencite`, `\\textcite`, `\\autocite` ...; one still being typed, `\\cite{ab`, too) and Pandoc citations
(`[see @a, p. 3; @b]`, `@a`), each with the place of every key, and the key at a cursor.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from recommender.documents.latex import CITE_MACROS

_LATEX_OPEN_RE = re.compile(r"\\(?:" + "|".join(sorted(CITE_MACROS, key=len, reverse=True)) +
                            r")\*?(?:\s*\[[^\[\]\n]*\]){0,2}\s*\{")  # an option stops at the next bracket
_LATEX_CLOSED_ARG_RE = re.compile(r"[^{}\\%]*\}")
_LATEX_KEY = r"[^\s,{}\\%]+"
# an argument not closed yet: keys separated by commas, up to the first character no key list holds
_LATEX_OPEN_ARG_RE = re.compile(rf"[ \t]*(?:{_LATEX_KEY}(?:[ \t]*,[ \t\n]*{_LATEX_KEY})*)?(?:[ \t]*,[ \t]*)?")
_LATEX_KEY_RE = re.compile(_LATEX_KEY)
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
# Pandoc: a key starts with a letter, digit or _ and may hold internal punctuation; "@" after a word is an address
_PANDOC_KEY_RE = re.compile(r"(?<![\w@.])-?@(\w(?:[\w:.#$%&+?<>~/-]*\w)?|)")
_PANDOC_BRACKET_CHARS = 300  # how far a bracketed citation may reach on either side of a key
AROUND_CURSOR = 2_000  # source read on either side of a cursor to find the citation holding it


@dataclass(frozen=True)
class Key:
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Citation:
    """One citation as written: `start`/`end` span all of it (a LaTeX command with its argument, a Pandoc bracket
    or bare `@key`); `keys_start`/`keys_end` the text that holds its keys; `closed`: False for a LaTeX command
    whose `}` is not written yet."""

    start: int
    end: int
    keys_start: int
    keys_end: int
    keys: tuple[Key, ...]
    style: str  # "latex" or "pandoc"
    closed: bool = True

    @property
    def key_texts(self) -> list[str]:
        return [key.text for key in self.keys]


@dataclass(frozen=True)
class CitationSite:
    """The cursor inside a citation: the key being written there spans `key_start`..`key_end` (empty between two
    commas), `prefix` is what of it stands before the cursor."""

    citation: Citation
    key_start: int
    key_end: int
    prefix: str


def find_citations(text: str, pandoc: bool = False, *, offset: int = 0) -> list[Citation]:
    """Every LaTeX citation command in `text` (and with `pandoc`, every Pandoc citation), in order; positions are
    in `text` plus `offset`."""
    found = [_latex_citation(text, match, offset) for match in _LATEX_OPEN_RE.finditer(text)]
    if pandoc:
        found += _pandoc_citations(text, offset)
    return sorted(found, key=lambda c: c.start)


def citation_at(text: str, offset: int, pandoc: bool = False) -> CitationSite | None:
    """The citation whose keys the cursor at `offset` stands among (None: it stands in no citation)."""
    low = max(0, offset - AROUND_CURSOR)
    return site_among(find_citations(text[low:offset + AROUND_CURSOR], pandoc, offset=low), text, offset)


def site_among(citations: list[Citation], text: str, offset: int) -> CitationSite | None:
    """`citation_at` among citations already found in `text`."""
    for citation in citations:
        if citation.keys_start <= offset <= citation.keys_end:
            if citation.style == "pandoc" and not any(key.start - 1 < offset <= key.end for key in citation.keys):
                continue  # in a bracket's prefix or locator ("[see @a, p. 3]"), not at a key
            return _site(text, citation, offset)
    return None


def _site(text: str, citation: Citation, offset: int) -> CitationSite:
    for key in citation.keys:
        if key.start <= offset <= key.end:
            return CitationSite(citation, key.start, key.end, text[key.start:offset])
    return CitationSite(citation, offset, offset, "")


def _latex_citation(text: str, match: re.Match, offset: int) -> Citation:
    """The command opened by `match`: to its `}`, or (none written before a blank line or another brace) to the
    end of the keys written so far."""
    begin = match.end()
    closed = _LATEX_CLOSED_ARG_RE.match(text, begin)
    if closed and not _BLANK_LINE_RE.search(closed.group(0)):
        keys_end, end = closed.end() - 1, closed.end()
    else:
        keys_end = end = _LATEX_OPEN_ARG_RE.match(text, begin).end()
        closed = None
    keys = tuple(Key(k.group(0), offset + k.start(), offset + k.end())
                 for k in _LATEX_KEY_RE.finditer(text, begin, keys_end))
    return Citation(offset + match.start(), offset + end, offset + begin, offset + keys_end, keys, "latex",
                    closed is not None)


def _pandoc_citations(text: str, offset: int) -> list[Citation]:
    """Bracketed citations (the keys of one bracket together) and bare `@key`s."""
    found: list[Citation] = []
    keys = list(_PANDOC_KEY_RE.finditer(text))
    i = 0
    while i < len(keys):
        match = keys[i]
        at = match.start() + (1 if text[match.start()] == "-" else 0)  # "-@key": the author suppressed
        bracket = _bracket_around(text, at)
        if bracket is None:
            key = Key(match.group(1), offset + at + 1, offset + match.end())
            found.append(Citation(offset + match.start(), offset + match.end(), key.start, key.end, (key,), "pandoc"))
            i += 1
            continue
        start, end = bracket if bracket[1] is not None else (bracket[0], match.end())
        members = []
        while i < len(keys) and keys[i].start() < end:
            members.append(Key(keys[i].group(1), offset + keys[i].start(1), offset + keys[i].end()))
            i += 1
        closed = bracket[1] is not None
        found.append(Citation(offset + start, offset + end, offset + start + 1, offset + end - closed,
                              tuple(members), "pandoc", closed))
    return found


def _bracket_around(text: str, at: int) -> tuple[int, int | None] | None:
    """(start, end) of the `[...]` holding the `@` at `at` (no nested brackets, no blank line); (start, None) for a
    `[@` whose `]` is not written yet on its line; else None."""
    before = text[max(0, at - _PANDOC_BRACKET_CHARS):at]
    opening = before.rfind("[")
    if opening < 0 or "]" in before[opening:] or "\n\n" in before[opening:]:
        return None
    start = at - len(before) + opening
    after = text[at:at + _PANDOC_BRACKET_CHARS]
    stop = min((p for p in (after.find("]"), after.find("["), after.find("\n\n")) if p >= 0), default=len(after))
    if after[stop:stop + 1] == "]":
        return start, at + stop + 1
    return (start, None) if not text[start + 1:at].strip() else None
