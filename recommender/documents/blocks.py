"""Blocks: what every reader but LaTeX's hands on, a paragraph or a heading with where it starts."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..reference_text import clean_line, join_lines

_WORD_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


@dataclass
class Block:
    """A paragraph (its lines joined) or a heading, with its first line or page and the lines as read."""

    text: str
    line: int | None = None
    page: int | None = None
    heading: bool = False
    lines: tuple[str, ...] = ()  # the source lines: a reference list is parsed from these
    one_entry: bool = False  # in a reference section, this block is exactly one entry (as the layout shows)


def words_seen(text: str) -> frozenset[str]:
    """Every word of a text, hyphenated compounds whole, except a word broken at a line end: tells
    `join_lines` whether "citation-" + "based" is the compound "citation-based" or "cita-" + "tion" one word."""
    words = set()
    for line in text.splitlines():
        found = _WORD_RE.findall(line)
        if found and line.rstrip().endswith("-"):
            found.pop()
        words.update(word.casefold() for word in found)
    return frozenset(words)


def paragraph(lines: list[str], vocabulary: frozenset[str] = frozenset()) -> str:
    """Lines of one paragraph as one line: PDF artefacts cleaned, end-of-line hyphenation undone."""
    cleaned = [clean_line(line) for line in lines]
    return join_lines([line for line in cleaned if line], vocabulary)
