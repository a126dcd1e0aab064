"""Markdown drafts (.md): YAML front matter (title, abstract), `#` and underlined headings, paragraphs.

The title is the front matter's, else the first heading, else the first line. Code blocks, HTML comments and
images are left out; links keep their text, emphasis its words; `[CIT]`, `[12]` and `[@key]` stay as written.
Line numbers count from 1 in the file as given (front matter included).
"""
from __future__ import annotations

import re

from recommender.documents.assemble import ABSTRACT_HEADINGS, assemble, heading_name
from recommender.documents.blocks import Block, add, paragraph, words_seen
from recommender.documents.model import Document
from recommender.documents.text import take_title

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*)$")  # closing #s cut by `heading_text` (a regex: cubic time)
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)\s*$")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")
_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_BULLET_RE = re.compile(r"^\s*[-*+]\s+")
_QUOTE_RE = re.compile(r"^\s*(?:>\s?)+")
# Linear time: a bracket's text stops at the next bracket, a target at the next parenthesis (one level of
# parentheses inside it kept: "(http://a.b/c_(d))"), emphasis at its own delimiter; else "![" * n, "[a](" * n,
# "[^a" * n and "*a " * n took quadratic time.
_TARGET = r"\((?:[^()]|\([^()]*\))*\)"
_IMAGE_RE = re.compile(rf"!\[[^\[\]]*\]{_TARGET}")
_LINK_RE = re.compile(rf"\[([^\[\]]*)\]{_TARGET}")
_FOOTNOTE_REF_RE = re.compile(r"\[\^[^\[\]]+\]")
_EMPHASIS_RE = re.compile(r"(?<!\w)(?:\*\*(?=\S)((?:[^*]|\*(?!\*))+?)(?<=\S)\*\*|__(?=\S)((?:[^_]|_(?!_))+?)(?<=\S)__"
                          r"|\*(?=\S)([^*]+?)(?<=\S)\*|_(?=\S)([^_]+?)(?<=\S)_|`(?=\S)([^`]+?)(?<=\S)`)(?!\w)")
_YAML_KEY_RE = re.compile(r"^(\w+):\s*(.*)$")


def read_markdown(text: str) -> Document:
    """A Markdown draft: title, abstract, passages with their lines, markers, the References section."""
    text = _blank_comments(text)
    lines = text.splitlines()
    front, start = front_matter(lines)
    vocabulary = words_seen(text)
    blocks = _blocks(lines, start, vocabulary)
    title = inline_text(front.get("title", ""))
    if not title:
        title, blocks = _first_heading(blocks)
    if front.get("abstract"):
        blocks = [Block(text="Abstract", heading=True), Block(text=inline_text(front["abstract"]))] + blocks
    return assemble(blocks, "markdown", title)


def _blank_comments(text: str) -> str:
    """HTML comments replaced by their line ends. With str.find, not `<!--.*?-->`: that regex searched to the end
    of the text from every unclosed "<!--" (quadratic); here, once no "-->" follows, no later comment closes."""
    pieces, at = [], 0
    while (start := text.find("<!--", at)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        pieces += [text[at:start], "\n" * text.count("\n", start, end + 3)]
        at = end + 3
    pieces.append(text[at:])
    return "".join(pieces)


def heading_text(text: str) -> str:
    """An ATX heading's text without its closing #s ("Results ##" -> "Results"; "C#" keeps its #)."""
    text = text.strip()
    bare = text.rstrip("#")
    return bare.rstrip() if bare != text and (not bare or bare[-1].isspace()) else text


def front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """The `key: value` pairs of a YAML front matter (block scalars joined) and the index of the line after it."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, 0
    values: dict[str, str] = {}
    key = None
    for line in lines[1:end]:
        match = _YAML_KEY_RE.match(line)
        if match and not line[:1].isspace():
            key, value = match.group(1).casefold(), match.group(2).strip()
            values[key] = "" if value in ("|", ">", "|-", ">-") else value.strip("'\"")
        elif key and line.strip():
            values[key] = f"{values[key]} {line.strip()}".strip()
    return values, end + 1


def inline_text(text: str) -> str:
    """Markdown inline syntax reduced to its words: images dropped, links to their text, emphasis removed."""
    text = _IMAGE_RE.sub("", text)
    text = _LINK_RE.sub(r"\1", text)
    text = _FOOTNOTE_REF_RE.sub("", text)
    for _ in range(2):  # **_nested_** emphasis
        text = _EMPHASIS_RE.sub(lambda m: next(g for g in m.groups() if g is not None), text)
    return " ".join(text.split())


def _blocks(lines: list[str], start: int, vocabulary: frozenset[str]) -> list[Block]:
    blocks: list[Block] = []
    current: list[str] = []
    first = 0
    in_code = False

    def flush() -> None:
        if current:
            add(blocks, Block(text=inline_text(paragraph(current, vocabulary)), line=first, lines=tuple(current)))
            current.clear()

    for index in range(start, len(lines)):
        number, line = index + 1, lines[index]
        if _FENCE_RE.match(line):
            flush()
            in_code = not in_code
            continue
        if in_code:
            continue
        line = _QUOTE_RE.sub("", line)
        atx = _ATX_RE.match(line)
        if atx:
            flush()
            heading = heading_text(atx.group(2))
            add(blocks, Block(text=inline_text(heading), line=number, heading=True, lines=(heading,)))
            continue
        if current and len(current) == 1 and _SETEXT_RE.match(line) and not _ITEM_RE.match(current[0]):
            heading, heading_line = current[0], first
            current.clear()
            add(blocks, Block(text=inline_text(heading), line=heading_line, heading=True, lines=(heading,)))
            continue
        if not line.strip() or _SETEXT_RE.match(line):
            flush()
            continue
        if _ITEM_RE.match(line):  # every list item is a paragraph of its own
            flush()
            line = _BULLET_RE.sub("", line)
        if not current:
            first = number
        current.append(line.strip())
    flush()
    return blocks


def _first_heading(blocks: list[Block]) -> tuple[str, list[Block]]:
    """The first block as the title when it is a heading (not one such as "Abstract"), else the first line."""
    if not blocks:
        return "", blocks
    if blocks[0].heading:
        if heading_name(blocks[0].text) in ABSTRACT_HEADINGS:
            return "", blocks
        return blocks[0].text, blocks[1:]
    first = blocks[0]
    title, rest = take_title([(first.line, list(first.lines))])
    if not title:
        return "", blocks
    remaining = [Block(text=paragraph(lines_), line=line, lines=tuple(lines_)) for line, lines_ in rest if lines_]
    return inline_text(title), remaining + blocks[1:]
