"""Blocks: what every reader but LaTeX's hands on, a paragraph or a heading with where it starts."""
from __future__ import annotations

from dataclasses import dataclass

from recommender.documents.limits import MAX_PARAGRAPHS, check
from recommender.references.text import clean_line, join_lines, words_seen

__all__ = ["Block", "add", "paragraph", "words_seen"]


@dataclass
class Block:
    """A paragraph (its lines joined) or a heading, with its first line or page and the lines as read."""

    text: str
    line: int | None = None
    page: int | None = None
    heading: bool = False
    lines: tuple[str, ...] = ()  # the source lines: a reference list is parsed from these
    one_entry: bool = False  # in a reference section, this block is exactly one entry (as the layout shows)


def paragraph(lines: list[str], vocabulary: frozenset[str] = frozenset()) -> str:
    """Lines of one paragraph as one line: PDF artefacts cleaned, end-of-line hyphenation undone."""
    cleaned = [clean_line(line) for line in lines]
    return join_lines([line for line in cleaned if line], vocabulary)


def add(blocks: list, block) -> None:
    """Append `block` (a Block, or a reader's own paragraph) to `blocks`; DocumentError past MAX_PARAGRAPHS."""
    check(len(blocks) + 1, MAX_PARAGRAPHS, "The document", "paragraphs")
    blocks.append(block)
