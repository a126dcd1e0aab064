"""Write a paper as a real PDF, laid out as journals do, to read back with `recommender.documents`.

Used by `bench.documents` and the tests. The text is set line by line with reportlab (no typesetting
engine): title and authors across the page, then one or two columns, bold numbered headings, indented
paragraphs, long words hyphenated at line ends, a running header from page 2 on, page numbers in the footer,
and a reference list in a smaller font with hanging indents. Also: an encrypted PDF and one whose page is
only an image (a scan without a text layer).
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

FONT_FILES = {"Serif": "DejaVuSerif.ttf", "Serif-Bold": "DejaVuSerif-Bold.ttf", "Sans": "DejaVuSans.ttf",
              "Sans-Bold": "DejaVuSans-Bold.ttf"}
FONT_FOLDERS = [Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu"),
                Path("/usr/local/share/fonts")]
STANDARD_FONTS = {"Serif": "Times-Roman", "Serif-Bold": "Times-Bold", "Sans": "Helvetica",
                  "Sans-Bold": "Helvetica-Bold"}


def _fonts() -> dict[str, str]:
    """DejaVu when the machine has it (every letter of every name), else the PDF standard fonts (Latin-1 only:
    a name such as "Veličković" then loses its "č")."""
    folder = next((f for f in FONT_FOLDERS if all((f / name).is_file() for name in FONT_FILES.values())), None)
    if folder is None:
        return dict(STANDARD_FONTS)
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    for name, file in FONT_FILES.items():
        pdfmetrics.registerFont(TTFont(f"DejaVu{name}", str(folder / file)))
    return {name: f"DejaVu{name}" for name in FONT_FILES}


FONTS = _fonts()
MARGIN, GUTTER = 56, 18
BODY = (FONTS["Serif"], 10, 12.0)  # font, size, leading
HEADING = (FONTS["Serif-Bold"], 11, 14.0)
REFERENCE = (FONTS["Serif"], 8, 9.6)
MIN_PIECE = 3  # letters on each side of a hyphen at a line end


@dataclass
class Draft:
    """What the PDF says: references are written as given (with their own "[n]" when numbered)."""

    title: str
    authors: str
    abstract: str
    sections: list[tuple[str, list[str]]]
    references: list[str]
    columns: int = 1
    running_header: str = ""
    reference_heading: str = "References"
    reference_layout: str = "hanging"  # "hanging" indent, "flat" (no cue where entries start) or "spaced"
    inline_abstract: bool = False  # "Abstract—We present ..." (IEEE) instead of a heading over it


def write_pdf(path: Path, draft: Draft, hyphenate: bool = True, password: str | None = None) -> None:
    """Lay `draft` out and save it as a PDF at `path` (encrypted with `password` when given)."""
    encrypt = None
    if password is not None:
        from reportlab.lib.pdfencrypt import StandardEncryption
        encrypt = StandardEncryption(password, canPrint=1)
    pdf = canvas.Canvas(str(path), pagesize=A4, encrypt=encrypt)
    Layout(pdf, draft, hyphenate).run()
    pdf.save()


def write_scanned_pdf(path: Path, lines: list[str]) -> None:
    """A one-page PDF that is only a picture of some text, as a scanner makes: no text layer."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (1240, 1754), 255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((120, 150 + 40 * number), line, fill=0)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.drawImage(ImageReader(io.BytesIO(buffer.getvalue())), 0, 0, width=A4[0], height=A4[1])
    pdf.showPage()
    pdf.save()


def wrap(text: str, font: str, size: float, width: float, hyphenate: bool, first_indent: float = 0.0,
         rest_indent: float = 0.0) -> list[tuple[float, str]]:
    """(indent, text) of each line: greedy breaking by measured width, long words hyphenated at line ends."""
    lines: list[tuple[float, str]] = []
    words = text.split()
    line, indent = "", first_indent
    index = 0
    while index < len(words):
        word = words[index]
        candidate = f"{line} {word}" if line else word
        if stringWidth(candidate, font, size) <= width - indent:
            line = candidate
            index += 1
            continue
        piece = _hyphen_piece(word, line, font, size, width - indent) if hyphenate else None
        if piece:
            lines.append((indent, f"{line} {piece}-" if line else f"{piece}-"))
            words[index] = word[len(piece):]
        elif line:
            lines.append((indent, line))
        else:  # one word wider than the line
            lines.append((indent, word))
            index += 1
        line, indent = "", rest_indent
    if line:
        lines.append((indent, line))
    return lines


def _hyphen_piece(word: str, line: str, font: str, size: float, room: float) -> str | None:
    """The longest start of `word` that fits on the line with a hyphen, or None."""
    if not word.isalpha() or not word[1:].islower() or len(word) < 2 * MIN_PIECE + 1:  # as TeX: no "unarX-ive"
        return None
    for cut in range(len(word) - MIN_PIECE, MIN_PIECE - 1, -1):
        text = f"{line} {word[:cut]}-" if line else f"{word[:cut]}-"
        if stringWidth(text, font, size) <= room:
            return word[:cut]
    return None


class Layout:
    """Places lines top to bottom in columns, page after page."""

    def __init__(self, pdf: canvas.Canvas, draft: Draft, hyphenate: bool):
        self.pdf, self.draft, self.hyphenate = pdf, draft, hyphenate
        self.page_width, self.page_height = A4
        self.column_width = (self.page_width - 2 * MARGIN - (draft.columns - 1) * GUTTER) / draft.columns
        self.page, self.column = 1, 0
        self.top = self.page_height - MARGIN
        self.y = self.top

    def run(self) -> None:
        self._front_matter()
        if self.draft.inline_abstract:
            self._paragraph(f"Abstract—{self.draft.abstract}", indent=False)
        else:
            self._heading("Abstract")
            self._paragraph(self.draft.abstract, indent=False)
        for heading, paragraphs in self.draft.sections:
            self._heading(heading)
            for number, text in enumerate(paragraphs):
                self._paragraph(text, indent=number > 0)
        self._heading(self.draft.reference_heading)
        font, size, _ = REFERENCE
        layout = self.draft.reference_layout
        for entry in self.draft.references:
            hang = 0 if layout != "hanging" else stringWidth("[00] ", font, size) if entry.startswith("[") else 10
            for indent, line in wrap(entry, font, size, self.column_width, self.hyphenate, 0, hang):
                self._line(line, REFERENCE, indent)
            self.y -= 4 if layout == "spaced" else 0
        self._finish_page()

    def _front_matter(self) -> None:
        for text, (font, size) in ((self.draft.title, (FONTS["Sans-Bold"], 16)), (self.draft.authors, (FONTS["Sans"], 11))):
            for _, line in wrap(text, font, size, self.page_width - 2 * MARGIN, False):
                self.pdf.setFont(font, size)
                self.pdf.drawCentredString(self.page_width / 2, self.y - size, line)
                self.y -= size * 1.3
            self.y -= 10
        self.top = self.y  # the columns of page 1 start below the title

    def _heading(self, text: str) -> None:
        font, size, leading = HEADING
        if self.y - 3 * BODY[2] - leading < MARGIN:  # keep a heading with its first lines
            self._next_column()
        self.y -= 4
        self._line(text, HEADING, 0)

    def _paragraph(self, text: str, indent: bool) -> None:
        font, size, _ = BODY
        for first, line in wrap(text, font, size, self.column_width, self.hyphenate, 12 if indent else 0, 0):
            self._line(line, BODY, first)

    def _line(self, text: str, style: tuple[str, float, float], indent: float) -> None:
        font, size, leading = style
        if self.y - leading < MARGIN:
            self._next_column()
        self.y -= leading
        x = MARGIN + self.column * (self.column_width + GUTTER) + indent
        self.pdf.setFont(font, size)
        self.pdf.drawString(x, self.y, text)

    def _next_column(self) -> None:
        if self.column + 1 < self.draft.columns:
            self.column += 1
            self.y = self.top
            return
        self._finish_page()
        self.pdf.showPage()
        self.page, self.column = self.page + 1, 0
        self.top = self.y = self.page_height - MARGIN

    def _finish_page(self) -> None:
        self.pdf.setFont(FONTS["Serif"], 9)
        self.pdf.drawCentredString(self.page_width / 2, MARGIN / 2, str(self.page))
        if self.page > 1 and self.draft.running_header:
            self.pdf.drawString(MARGIN, self.page_height - MARGIN / 2, self.draft.running_header)
            self.pdf.drawRightString(self.page_width - MARGIN, self.page_height - MARGIN / 2,
                                     self.draft.title[:60])
