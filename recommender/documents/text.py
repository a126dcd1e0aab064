"""Plain-text drafts (.txt), also text copied out of a PDF: paragraphs are separated by blank lines.

The title is the first line (or the first short block); a heading is a short line that is numbered
("2 Related Work", "III. METHOD") or a section name such as "Abstract", "Introduction" or "References" (also
inside a paragraph, for text pasted without blank lines), or a short line alone in capitals or title case.
Line numbers count from 1 in the file as given.
"""
from __future__ import annotations

import re

from recommender.documents.assemble import ABSTRACT_HEADINGS, REFERENCE_HEADINGS, assemble, heading_name
from recommender.documents.blocks import Block, add, paragraph, words_seen
from recommender.documents.model import Document

MAX_HEADING_WORDS = 10
MAX_INNER_HEADING_WORDS = 6  # a numbered heading inside a paragraph (no blank line around it) is this short
MAX_TITLE_WORDS = 30
MAX_TITLE_LINES = 3
SECTION_NAMES = ABSTRACT_HEADINGS | REFERENCE_HEADINGS | {
    "introduction", "related work", "background", "method", "methods", "methodology", "approach", "experiments",
    "experimental setup", "evaluation", "results", "discussion", "conclusion", "conclusions", "future work",
    "limitations", "acknowledgments", "acknowledgements", "appendix", "keywords", "index terms"}

_NUMBERED_HEADING_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.)\s+[A-Z][^.!?]*$")
_FRONT_LABEL_LINE_RE = re.compile(r"^(?:abstract|keywords|index terms)\s*[:.—–-]", re.IGNORECASE)


def read_text(text: str) -> Document:
    """A plain-text draft: title, abstract, passages with their lines, markers, the References section."""
    vocabulary = words_seen(text)
    chunks = split_paragraphs(text.splitlines())
    title, chunks = take_title(chunks)
    blocks: list[Block] = []
    for first, lines in chunks:
        for start, piece in _split_at_headings(first, lines):
            heading = len(piece) == 1 and is_heading_line(piece[0], alone=True)
            add(blocks, Block(text=paragraph(piece, vocabulary), line=start, heading=heading, lines=tuple(piece)))
    return assemble(blocks, "text", title)


def _split_at_headings(first: int, lines: list[str]) -> list[tuple[int, list[str]]]:
    """A paragraph cut before and after each heading line inside it (text pasted without blank lines)."""
    pieces: list[tuple[int, list[str]]] = []
    for offset, line in enumerate(lines):
        if len(lines) > 1 and is_heading_line(line, alone=False):
            pieces.append((first + offset, [line]))
            pieces.append((first + offset + 1, []))
        elif pieces:
            pieces[-1][1].append(line)
        else:
            pieces.append((first + offset, [line]))
    return [(start, piece) for start, piece in pieces if piece]


def split_paragraphs(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(1-based line of its first line, its lines) of each run of non-blank lines; a form feed is a blank."""
    chunks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.strip() == "\f":
            current = []
            continue
        if not current:
            add(chunks, (number, current))
        current.append(line.strip().replace("\f", ""))
    return chunks


def take_title(chunks: list[tuple[int, list[str]]]) -> tuple[str, list[tuple[int, list[str]]]]:
    """The title (the first block when it is short, else its first line) and the chunks without it."""
    if not chunks:
        return "", chunks
    first, lines = chunks[0]
    if heading_name(lines[0]) in ABSTRACT_HEADINGS or _FRONT_LABEL_LINE_RE.match(lines[0]):
        return "", chunks
    words = sum(len(line.split()) for line in lines)
    if len(lines) <= MAX_TITLE_LINES and words <= MAX_TITLE_WORDS and not lines[0].rstrip().endswith("."):
        return paragraph(lines), chunks[1:]
    if len(lines[0].split()) <= MAX_TITLE_WORDS and not lines[0].rstrip().endswith(".") \
            and not is_heading_line(lines[0], alone=False):
        return lines[0].strip(), [(first + 1, lines[1:])] + chunks[1:]
    return "", chunks


def is_heading_line(line: str, alone: bool) -> bool:
    """Does a line look like a section heading? At the top of a paragraph (`alone` False) only a section name
    or a numbered heading counts; alone, a short line in capitals or title case counts too."""
    line = line.strip()
    words = line.split()
    if not words or len(words) > MAX_HEADING_WORDS or line.endswith((",", ";", ":")):
        return False
    if heading_name(line) in SECTION_NAMES:
        return True
    if _NUMBERED_HEADING_RE.match(line) and (alone or len(words) <= MAX_INNER_HEADING_WORDS):
        return True
    if not alone or line.endswith(".") or not line[0].isupper():
        return False
    letters = [ch for ch in line if ch.isalpha()]
    return bool(letters) and (all(ch.isupper() for ch in letters) or all(w[0].isupper() for w in words if len(w) > 3))
