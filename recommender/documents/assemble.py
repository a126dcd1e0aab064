"""From a reader's blocks to a Document: abstract and reference section found by their headings, front matter
(title, authors, keywords) left out of the passages, markers found and resolved."""
from __future__ import annotations

import dataclasses
import re

from recommender.documents.blocks import Block
from recommender.documents.errors import DocumentError
from recommender.documents.markers import Resolver, find_markers
from recommender.documents.model import Document, Passage
from recommender.references.parse import ReferenceItem, parse_reference_list
from recommender.references.text import strip_marker

REFERENCE_HEADINGS = {"references", "reference list", "bibliography", "literature cited", "works cited",
                      "cited literature", "references and notes", "references cited", "literatur",
                      "literaturverzeichnis", "références", "bibliographie", "referencias", "bibliografía",
                      "riferimenti bibliografici", "bibliografia", "参考文献"}
ABSTRACT_HEADINGS = {"abstract", "a b s t r a c t", "zusammenfassung", "résumé", "resumen", "摘要"}
# Labels of the front matter between the abstract and the body: they and their text are no passage.
FRONT_LABELS = ("keywords", "key words", "index terms", "ccs concepts", "acm reference format", "general terms",
                "categories and subject descriptors", "additional key words and phrases", "jel classification")
MIN_PASSAGE_WORDS = 3  # shorter blocks without a marker (table cells, stray numbers) are no passage
MAX_LABEL_BLOCKS = 2  # paragraphs under a front label's heading ("KEYWORDS")
FRONT_MATTER_WORDS = 25  # before the first heading, shorter blocks without a marker are authors and affiliations

_NUMBERING_RE = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|[A-Z]\.)\s+")
# "Abstract. We ...", "Abstract—We ...", "ABSTRACT We ..." (not "Abstract Syntax Notation One ...")
_ABSTRACT_PREFIX_RE = re.compile(r"^\W{0,3}(?i:abstract|a b s t r a c t|summary)\W{0,3}\s*[:.—–-]\s*|"
                                 r"^\W{0,3}ABSTRACT\s+(?=[A-Z])")
APPENDIX_RE = re.compile(r"^(?:appendix|appendices|supplementary|supplemental|online appendix)\b", re.IGNORECASE)
_WORD_RE = re.compile(r"[^\W\d_]{2,}")


def heading_name(text: str) -> str:
    """A heading's words without its number and punctuation, lower case: "7. REFERENCES" -> "references"."""
    text = _NUMBERING_RE.sub("", text.strip())
    return " ".join(re.sub(r"[^\w\s]", " ", text).split()).casefold()


def is_reference_heading(text: str) -> bool:
    return heading_name(text) in REFERENCE_HEADINGS


def is_front_label(text: str) -> bool:
    return heading_name(text[:60]).startswith(FRONT_LABELS)


def assemble(blocks: list[Block], kind: str, title: str, *, abstract: str | None = None,
             references: list[ReferenceItem] | None = None, reference_lines_numbered: bool = True,
             notices: list[str] | None = None) -> Document:
    """The Document of a reader's blocks (the title already taken out of them).

    `abstract`: the abstract when the format marks it (LaTeX), else it is looked for among the blocks.
    `references`: a reference list read elsewhere (a .bib); otherwise the References section is parsed.
    `reference_lines_numbered`: the blocks' lines are source lines, so each reference gets its line number.
    """
    notices = list(notices or [])
    body, reference_blocks = _split_references(blocks)
    if references is None:
        references = _parse_section(reference_blocks, reference_lines_numbered, notices)
    abstract_blocks: list[Block] = []
    if abstract is None:
        abstract, abstract_blocks, body = _take_abstract(body)
    passages = _passages(body, references)
    if not (title or abstract or passages or references):
        raise DocumentError("The document is empty: no title, abstract, text or reference list was found in it.")
    if not passages and any(find_markers(block.text, references) for block in abstract_blocks):
        passages = _passages([Block(text="Abstract", heading=True), *abstract_blocks], references)
        notices.append("No body text was found: the citation places in the abstract are reviewed.")
    elif not passages:
        notices.append("No body text was found (only the title, abstract or reference list).")
    if not references and any(m for p in passages for m in p.markers if not m.placeholder):
        notices.append("The text cites sources, but no reference list was found (no References section"
                       + (" and no .bib file" if kind == "latex" else "") + ").")
    return Document(title=title, abstract=abstract, passages=passages, references=references, kind=kind,
                    notices=notices)


def _passages(blocks: list[Block], references: list[ReferenceItem]) -> list[Passage]:
    """The paragraphs worth reviewing (long enough, or holding a citation marker), each with its section."""
    passages: list[Passage] = []
    section = ""
    resolver = Resolver(references)  # read once for all paragraphs
    for block in blocks:
        if block.heading:
            section = block.text
            continue
        markers = find_markers(block.text, resolver)
        if len(_WORD_RE.findall(block.text)) < MIN_PASSAGE_WORDS and not markers:
            continue
        passages.append(Passage(text=block.text, markers=markers, line=block.line, page=block.page,
                                section=section))
    return passages


def _split_references(blocks: list[Block]) -> tuple[list[Block], list[Block]]:
    """(the blocks without the reference section, the section's blocks); appendices after it stay in the body."""
    starts = [i for i, block in enumerate(blocks)
              if is_reference_heading(block.text) and (block.heading or len(block.text) < 40)]
    if not starts:
        return blocks, []
    start = starts[-1]
    end = next((i for i in range(start + 1, len(blocks))
                if blocks[i].heading and APPENDIX_RE.match(heading_name(blocks[i].text))), len(blocks))
    return blocks[:start] + blocks[end:], blocks[start + 1:end]


def _parse_section(blocks: list[Block], numbered_lines: bool, notices: list[str]) -> list[ReferenceItem]:
    """The reference section's entries, parsed from its lines (a blank line between two blocks)."""
    lines: list[str] = []
    first_lines: list[int | None] = []  # the source line of each line given to the parser
    for number, block in enumerate(blocks, start=1):
        if lines:
            lines.append("")
            first_lines.append(None)
        block_lines = list(block.lines or (block.text,))
        if block.one_entry and strip_marker(block_lines[0]) == block_lines[0]:
            block_lines[0] = f"[{number}] {block_lines[0]}"  # numbered as the parser's cue: one entry each
        for offset, line in enumerate(block_lines):
            lines.append(line)
            first_lines.append(block.line + offset if numbered_lines and block.line else None)
    if not lines:
        return []
    try:
        items = parse_reference_list("\n".join(lines))
    except ValueError as exc:
        notices.append(f"The reference list could not be read: {exc}")
        return []
    return [dataclasses.replace(item, line=first_lines[item.line - 1] if item.line else None) for item in items]


def _take_abstract(blocks: list[Block]) -> tuple[str, list[Block], list[Block]]:
    """(the abstract, its blocks, the body after the front matter)."""
    for i, block in enumerate(blocks):
        if block.heading and heading_name(block.text) in ABSTRACT_HEADINGS:
            end = i + 1
            while end < len(blocks) and not blocks[end].heading and not is_front_label(blocks[end].text):
                end += 1
            if end == len(blocks):  # no heading follows: the abstract is one paragraph
                end = min(i + 2, len(blocks))
            abstract = " ".join(b.text for b in blocks[i + 1:end])
            return abstract, blocks[i + 1:end], _after_front_labels(blocks[end:])
        prefix = _ABSTRACT_PREFIX_RE.match(block.text)
        if prefix and not block.heading:
            text = block.text[prefix.end():].strip()
            return text, [dataclasses.replace(block, text=text)], _after_front_labels(blocks[i + 1:])
    return "", [], _without_front_matter(blocks)


def _after_front_labels(blocks: list[Block]) -> list[Block]:
    """The body after the abstract: keyword lines and the like (and what their headings head) left out."""
    start = 0
    while start < len(blocks) and is_front_label(blocks[start].text):
        label = blocks[start]
        start += 1
        if label.heading:  # "KEYWORDS" over a paragraph or two
            end = min(start + MAX_LABEL_BLOCKS, len(blocks))
            while start < end and not blocks[start].heading:
                start += 1
    return blocks[start:]


def _without_front_matter(blocks: list[Block]) -> list[Block]:
    """Without an abstract: the short blocks before the first heading or paragraph (authors, affiliations)."""
    start = 0
    while start < len(blocks) and not blocks[start].heading and (
            len(blocks[start].text.split()) < FRONT_MATTER_WORDS and not find_markers(blocks[start].text)
            and not blocks[start].text.rstrip().endswith((".", "?", "!", ":"))):
        start += 1
    return _after_front_labels(blocks[start:])
