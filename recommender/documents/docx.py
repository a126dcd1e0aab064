"""Word drafts (.docx), read with python-docx: the body's paragraphs in order (tables, headers, footers and
footnotes are left out).

The title is the paragraph styled "Title", else a first heading or short first paragraph; headings are
paragraphs styled "Heading N" or short ones set wholly in bold. A passage's `line` is its paragraph's number
in the document (1-based, empty paragraphs counted), which Word does not show but a reader can count. In the
References section every paragraph is one entry, also when Word numbers the list itself.
"""
from __future__ import annotations

import io
import re
import zipfile

from recommender.documents.assemble import ABSTRACT_HEADINGS, assemble, heading_name
from recommender.documents.blocks import Block, add, paragraph
from recommender.documents.errors import DocumentError
from recommender.documents.limits import (MAX_DOCX_BYTES, MAX_DOCX_RUNS, MAX_DOCX_STYLES, MAX_DOCX_XML_BYTES,
                                           MAX_PARAGRAPHS, check, megabytes)
from recommender.documents.model import Document

MAX_BOLD_HEADING_WORDS = 10
MAX_TITLE_WORDS = 30
_PREFIX = rb"<(?:[A-Za-z_][\w.-]*:)?"  # an element's namespace prefix, if any (not necessarily "w:")
_PARAGRAPH_TAG_RE = re.compile(_PREFIX + rb"p[\s>/]")
_RUN_TAG_RE = re.compile(_PREFIX + rb"r[\s>/]")
_STYLE_TAG_RE = re.compile(_PREFIX + rb"style[\s>/]")


def read_docx(data: bytes) -> Document:
    """A Word draft: title, abstract, passages with their paragraph numbers, markers, the References section."""
    import docx

    _check_sizes(data)
    try:
        word = docx.Document(io.BytesIO(data))
        title, blocks = _read_body(word, StyleNames(word.styles))
    except DocumentError:
        raise
    except Exception as exc:  # python-docx and lxml raise many kinds of error on a damaged package
        raise DocumentError(f"This Word file is damaged or not a .docx document ({type(exc).__name__}: {exc}). "
                            "Open it in Word and save it again as .docx, or export it as PDF.") from exc
    if not title and blocks and _could_be_title(blocks[0]):
        title, blocks = blocks[0].text, blocks[1:]
    return assemble(blocks, "docx", title)


def _read_body(word, styles: StyleNames) -> tuple[str, list[Block]]:
    """The paragraph styled "Title" and the body's blocks."""
    from docx.oxml.ns import qn
    from docx.text.paragraph import Paragraph

    title = ""
    blocks: list[Block] = []
    body = word.element.body
    # the body's paragraphs, as `word.paragraphs` has them, with their style ids read from each paragraph itself
    for number, element in enumerate(body.iterchildren(qn("w:p")) if body is not None else (), start=1):
        para = Paragraph(element, word)
        lines = [line.strip() for line in para.text.split("\n") if line.strip()]
        if not lines:
            continue
        text = paragraph(lines)
        style = styles.paragraph(element.style)
        if style == "Title" and not title:
            title = text
            continue
        if style.casefold() == "abstract":
            add(blocks, Block(text="Abstract", line=number, heading=True))
        heading = style.startswith("Heading") or style == "Subtitle" or _bold_heading(para, text, styles)
        add(blocks, Block(text=text, line=number, heading=heading, lines=tuple(lines), one_entry=True))
    return title, blocks


def _bold_heading(para, text: str, styles: StyleNames) -> bool:
    if len(text.split()) > MAX_BOLD_HEADING_WORDS or text.endswith("."):
        return False
    runs = [run for run in para.runs if run.text.strip()]
    return bool(runs) and all(run.bold or "Strong" in styles.character(run.element.style) for run in runs)


class StyleNames:
    """The names of a Word file's styles by id, read once (python-docx's own look-up searches every style of the
    file for each paragraph and run: minutes for a long document)."""

    def __init__(self, styles):
        from docx.enum.style import WD_STYLE_TYPE

        self.names: dict[str, tuple] = {}
        for style in styles:  # the first style of an id answers for it (python-docx's look-up)
            self.names.setdefault(style.style_id, (style.type, style.name or ""))
        self.kinds = WD_STYLE_TYPE.PARAGRAPH, WD_STYLE_TYPE.CHARACTER
        self.defaults = {kind: (default.name or "") if default is not None else ""
                         for kind in self.kinds for default in [styles.default(kind)]}

    def paragraph(self, style_id: str | None) -> str:
        return self._name(style_id, self.kinds[0])

    def character(self, style_id: str | None) -> str:
        return self._name(style_id, self.kinds[1])

    def _name(self, style_id: str | None, kind) -> str:
        """The style's name; the kind's default style's for none, an unknown id or a style of another kind (as
        python-docx answers)."""
        found = self.names.get(style_id) if style_id else None
        return found[1] if found is not None and found[0] == kind else self.defaults[kind]


def _could_be_title(block: Block) -> bool:
    return (heading_name(block.text) not in ABSTRACT_HEADINGS and len(block.text.split()) <= MAX_TITLE_WORDS
            and not block.text.endswith("."))


def _check_sizes(data: bytes) -> None:
    """DocumentError unless the Word file's parts unpack within their limits: checked on the zip's own records
    (which reading holds to) and on every XML part's tags, under any namespace prefix, before it is parsed. Which
    part is the text, and which the styles, is for the package to say; each part is held to the limits of both."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        infos = package.infolist()
        total = sum(info.file_size for info in infos)
        if total > MAX_DOCX_BYTES:
            raise DocumentError(f"This Word file unpacks to {megabytes(total)}; up to {megabytes(MAX_DOCX_BYTES)} "
                                "are read. Leave out large pictures, or export it as PDF.")
        for info in infos:
            if not info.filename.casefold().endswith((".xml", ".rels")):
                continue
            if info.file_size > MAX_DOCX_XML_BYTES:
                raise DocumentError(f"The part {info.filename} of this Word file unpacks to "
                                    f"{megabytes(info.file_size)}; up to {megabytes(MAX_DOCX_XML_BYTES)} are read. "
                                    "Split the document.")
            xml = _read_part(package, info)
            check(len(_PARAGRAPH_TAG_RE.findall(xml)), MAX_PARAGRAPHS, "The document", "paragraphs")
            check(len(_RUN_TAG_RE.findall(xml)), MAX_DOCX_RUNS, "The document", "runs of text")
            check(len(_STYLE_TAG_RE.findall(xml)), MAX_DOCX_STYLES, "This Word file's list of styles", "styles")


def _read_part(package: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A part of the package, unpacked (DocumentError when it is damaged)."""
    try:
        return package.read(info)
    except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, ValueError) as exc:
        raise DocumentError(f"This Word file is damaged ({exc}). Open it in Word and save it again as .docx, or "
                            "export it as PDF.") from exc
