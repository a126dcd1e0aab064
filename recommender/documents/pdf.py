"""PDF submissions, read with pdfminer.six: the text layer's lines with their positions, fonts and pages.

What the layout tells:
- columns: a page whose lines sit left or right of its middle is read column by column; lines across the
  middle (title, a wide figure caption) separate the page into bands read top to bottom;
- running headers, footers and page numbers: lines near the top or bottom edge that are a page number, that
  repeat (digits aside) on several pages, or that stand apart from the text in smaller type are left out;
- the title: the largest type on page 1; headings: short lines in bold or larger type, or in capitals;
- paragraphs: a new one starts after a wider gap, at an indented line, after a short line that ends a
  sentence, or where the type changes; a paragraph goes on across a column or page break;
- the reference list: entries start at the lines that a hanging indent leaves at the margin (or after a gap).
Words hyphenated at line ends are joined again. Passages carry the page they start on.
"""
from __future__ import annotations

import io
import re
import statistics
from collections import Counter
from dataclasses import dataclass

from recommender.documents.assemble import APPENDIX_RE, REFERENCE_HEADINGS, assemble, heading_name
from recommender.documents.blocks import Block, paragraph, words_seen
from recommender.documents.errors import DocumentError
from recommender.documents.limits import MAX_PDF_PAGES, MAX_TEXT_CHARS
from recommender.documents.model import Document
from recommender.references.text import looks_like_entry_start

EDGE_SHARE = 0.1  # lines within this share of the page height from its top or bottom may be headers/footers
MIN_TEXT_CHARS_PER_PAGE = 5  # fewer characters on a page (on average, for the whole PDF): no text layer
MAX_UNMAPPED_SHARE = 0.3  # glyphs without a Unicode mapping ("(cid:12)") beyond this share: unreadable fonts
MAX_HEADING_WORDS = 14
MAX_CAPS_HEADING_WORDS = 6
WRAP_SLACK = 1.3  # a line shorter than the next word's width (estimated) times this was not wrapped
MIN_COLUMN_LINES = 6  # a column with fewer lines takes its edges from the fuller ones

_CID_RE = re.compile(r"\(cid:\d+\)")
_PAGE_NUMBER_RE = re.compile(r"^(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_BOLD_RE = re.compile(r"bold|black|heavy|semibold|demi|,b$|-b$|\.b$", re.IGNORECASE)
_TERMINAL_RE = re.compile(r"[.!?:][\"”’)]?$")
_URL_END_RE = re.compile(r"(?:https?://|doi\.org/|doi:\s?|10\.\d{4,9}/)\S+$", re.IGNORECASE)  # an entry may end so
_ABBREVIATION_END_RE = re.compile(r"(?:\bet al|\be\.g|\bi\.e|\bcf|\bvs|\bFig|\bEq|\bSec|\bTab|\bRef|\bpp?|\bno|"
                                  r"\bvol|\b[A-Z])\.$")  # a line ending so goes on


@dataclass
class Line:
    """One line of the text layer, as pdfminer grouped its characters."""

    text: str
    x0: float
    x1: float
    y0: float
    y1: float
    size: float
    bold: bool
    page: int
    column: int = 0  # 0: across the page or in its only column; 1, 2: left, right
    band: int = 0  # the band of the page (between lines across the middle) the line belongs to
    indent: float = 0.0  # from the left edge of its column
    room: float = 0.0  # left free up to the right edge of its column


def read_pdf(data: bytes) -> Document:
    """A PDF: title, abstract, passages with their pages, markers, the References section."""
    pages, notices = extract_lines(data)
    lines = [line for page in pages for line in page]
    text_chars = sum(len(line.text) for line in lines)
    if text_chars < MIN_TEXT_CHARS_PER_PAGE * max(1, len(pages)):
        raise DocumentError("This PDF has no text layer (scanned?): its pages are images, so there is no text to "
                            "read. Run it through OCR first (for example ocrmypdf), or upload the source "
                            "(.tex, .docx) or a PDF exported from it.")
    empty = [number for number, page in enumerate(pages, start=1)
             if sum(len(line.text) for line in page) < MIN_TEXT_CHARS_PER_PAGE]
    if empty:
        notices.append(f"{len(empty)} of {len(pages)} pages have no text layer (scanned?), so their text is missing: "
                       f"page{'s' if len(empty) > 1 else ''} {', '.join(map(str, empty[:10]))}"
                       f"{' ...' if len(empty) > 10 else ''}.")
    body_size = _body_size(lines)
    kept = drop_running_lines(pages, body_size)
    if not kept:  # every line looked like a running header, footer or page number: keep the lines with words
        kept = [line for line in lines if not _PAGE_NUMBER_RE.match(line.text)] or lines
        notices.append("Every line of this PDF sits at a page edge and repeats from page to page, as running "
                       "headers and footers do; they were read as its text instead of being left out.")
    lines = kept
    ordered = [line for page in _by_page(lines) for line in reading_order(page)]
    measure_columns(ordered)
    title, ordered = take_title(ordered, body_size)
    vocabulary = words_seen("\n".join(line.text for line in ordered))
    blocks = make_blocks(ordered, body_size, vocabulary)
    return assemble(blocks, "pdf", title, reference_lines_numbered=False, notices=notices)


def extract_lines(data: bytes) -> tuple[list[list[Line]], list[str]]:
    """The text lines of each page (up to MAX_PDF_PAGES, and no further once MAX_TEXT_CHARS of text are read),
    and notices; clear errors for encrypted or damaged files."""
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfexceptions import PDFException, PSException
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    pages: list[list[Line]] = []
    notices: list[str] = []
    unmapped = total = 0
    try:
        manager = PDFResourceManager(caching=True)
        device = _page_lines(manager)
        interpreter = PDFPageInterpreter(manager, device)
        for number, page in enumerate(PDFPage.get_pages(io.BytesIO(data), caching=True), start=1):
            if number > MAX_PDF_PAGES:
                notices.append(f"Only the first {MAX_PDF_PAGES} pages were read.")
                break
            if total >= MAX_TEXT_CHARS:
                notices.append(f"Only the first {number - 1} pages were read: their text reached the limit of "
                               f"{MAX_TEXT_CHARS:,} characters.")
                break
            interpreter.process_page(page)
            found: list[Line] = []
            for chars in device.lines:
                line, cids = _line(chars, number)
                if line is not None:
                    unmapped += cids
                    total += len(line.text)
                    found.append(line)
            found.sort(key=lambda l: (-l.y1, l.x0))  # top to bottom; a row left to right
            pages.append(found)
    except (PDFPasswordIncorrect, PDFEncryptionError) as exc:
        raise DocumentError("This PDF is encrypted (password-protected), so its text cannot be read. Remove "
                            "the password (print it to a new PDF, or ask the authors for an open copy) and "
                            "upload it again.") from exc
    except (PDFException, PSException, ValueError, KeyError, TypeError, AssertionError) as exc:
        raise DocumentError(f"This PDF is damaged and cannot be read ({type(exc).__name__}: {exc}). Open it in a "
                            "PDF viewer and save or print it to a new PDF.") from exc
    if total and unmapped > MAX_UNMAPPED_SHARE * (unmapped + total / 4):
        raise DocumentError("This PDF's fonts do not say which letters their glyphs are, so its text cannot be "
                            "read. Upload the source (.tex, .docx), or run the PDF through OCR first.")
    return pages, notices


# One character as _PageLines keeps it: x0, y0, x1, y1, text, size, font name.
_Char = tuple[float, float, float, float, str, float, str]
LINE_OVERLAP, CHAR_MARGIN, WORD_MARGIN = 0.5, 2.0, 0.1  # pdfminer's LAParams defaults, which the reader was tuned on


def _page_lines_device():
    """The pdfminer device class (pdfminer is imported only when a PDF is read)."""
    from pdfminer.layout import LTChar
    from pdfminer.pdfdevice import PDFTextDevice
    from pdfminer.pdffont import PDFUnicodeNotDefined

    class _PageLines(PDFTextDevice):
        """A pdfminer device that groups each page's characters into text lines as they are drawn.

        The lines are the ones pdfminer's layout analysis makes with its default LAParams: characters in the
        order drawn, one going on the line while it overlaps the one before vertically by more than half the
        smaller height and lies within twice the wider width of it; a space where the gap is wider than a tenth
        of the character; text inside Form XObjects left out. But no layout objects are built: pdfminer's LTChar
        per character, its boxes of lines and its reading order of the boxes took about two thirds of the
        time, and the reader orders the lines itself. `lines` holds the last page's lines, as character lists.
        """

        def __init__(self, manager) -> None:
            super().__init__(manager)
            self.lines: list[list[_Char]] = []
            self._glyphs: dict[object, dict[int, tuple[str, float]]] = {}
            self._figures = 0
            self._previous: _Char | None = None
            self._current: list[_Char] | None = None

        def begin_page(self, page, ctm) -> None:
            self.lines, self._figures, self._previous, self._current = [], 0, None, None

        def end_page(self, page) -> None:
            if self._previous is not None:
                self.lines.append(self._current if self._current is not None else [self._previous])
            self._previous = self._current = None

        def begin_figure(self, name, bbox, matrix) -> None:
            self._figures += 1

        def end_figure(self, name) -> None:
            self._figures -= 1

        def _add(self, char: _Char) -> None:
            """One step of pdfminer's `group_objects` (horizontal lines only: detect_vertical is off)."""
            previous, self._previous = self._previous, char
            if previous is None:
                return
            x0, y0, x1, y1 = char[:4]
            px0, py0, px1, py1 = previous[:4]
            aligned = (y0 <= py1 and py0 <= y1
                       and min(py1 - py0, y1 - y0) * LINE_OVERLAP < min(abs(py0 - y1), abs(py1 - y0))
                       and (0 if x0 <= px1 and px0 <= x1 else min(abs(px0 - x1), abs(px1 - x0)))
                       < max(px1 - px0, x1 - x0) * CHAR_MARGIN)
            if aligned and self._current is not None:
                self._current.append(char)
            elif self._current is not None:
                self.lines.append(self._current)
                self._current = None
            elif aligned:
                self._current = [previous, char]
            else:
                self.lines.append([previous])

        def _font_glyphs(self, font) -> dict[int, tuple[str, float]]:
            glyphs = self._glyphs.get(font)
            if glyphs is None:
                glyphs = self._glyphs[font] = {}
            return glyphs

        def _glyph(self, font, glyphs: dict, cid: int) -> tuple[str, float]:
            """(text, width) of a glyph, looked up once per font."""
            try:
                text = font.to_unichr(cid)
            except PDFUnicodeNotDefined:
                text = f"(cid:{cid})"
            glyph = glyphs[cid] = (text, font.char_width(cid))
            return glyph

        def render_char(self, matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate) -> float:
            """Vertical fonts (the one path that draws a character at a time here): as pdfminer does."""
            glyphs = self._font_glyphs(font)
            text, width = glyphs.get(cid) or self._glyph(font, glyphs, cid)
            item = LTChar(matrix, font, fontsize, scaling, rise, text, width, font.char_disp(cid), ncs,
                          graphicstate)
            if not self._figures:
                self._add((item.x0, item.y0, item.x1, item.y1, text, item.size, item.fontname))
            return item.adv

        def render_string_horizontal(self, seq, matrix, pos, font, fontsize, scaling, charspace, wordspace, rise,
                                     dxscale, ncs, graphicstate):
            """pdfminer's loop, with each character's box computed here with LTChar's arithmetic (so to the
            same numbers) and `_add` written out: this loop is where a long PDF spends its time."""
            (x, y) = pos
            a, b, c, d, e, f = matrix
            descent = font.get_descent() * fontsize
            bottom, top = descent + rise, descent + rise + fontsize
            fontname = font.fontname
            glyphs = self._font_glyphs(font)
            keep = not self._figures
            axis_aligned = b == 0 and c == 0
            lines, previous, current = self.lines, self._previous, self._current
            needcharspace = False
            for obj in seq:
                if isinstance(obj, (int, float)):
                    x -= obj * dxscale
                    needcharspace = True
                    continue
                if not isinstance(obj, bytes):
                    continue
                for cid in font.decode(obj):
                    if needcharspace:
                        x += charspace
                    needcharspace = True
                    text, width = glyphs.get(cid) or self._glyph(font, glyphs, cid)
                    adv = width * fontsize * scaling
                    if keep:
                        te, tf = x * a + y * c + e, x * b + y * d + f  # utils.translate_matrix
                        if axis_aligned:  # apply_matrix_rect's corners, the zero terms left out (same floats)
                            x0, x1 = te, a * adv + te
                            y0, y1 = d * bottom + tf, d * top + tf
                            if x1 < x0:
                                x0, x1 = x1, x0
                            if y1 < y0:
                                y0, y1 = y1, y0
                        else:
                            xs = (a * 0 + c * bottom + te, a * adv + c * bottom + te,
                                  a * adv + c * top + te, a * 0 + c * top + te)
                            ys = (b * 0 + d * bottom + tf, b * adv + d * bottom + tf,
                                  b * adv + d * top + tf, b * 0 + d * top + tf)
                            x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
                        char = (x0, y0, x1, y1, text, y1 - y0, fontname)
                        if previous is not None:  # _add
                            px0, py0, px1, py1 = previous[0], previous[1], previous[2], previous[3]
                            if (y0 <= py1 and py0 <= y1
                                    and min(py1 - py0, y1 - y0) * LINE_OVERLAP < min(abs(py0 - y1), abs(py1 - y0))
                                    and (0 if x0 <= px1 and px0 <= x1 else min(abs(px0 - x1), abs(px1 - x0)))
                                    < max(px1 - px0, x1 - x0) * CHAR_MARGIN):
                                if current is not None:
                                    current.append(char)
                                else:
                                    current = [previous, char]
                            elif current is not None:
                                lines.append(current)
                                current = None
                            else:
                                lines.append([previous])
                        previous = char
                    x += adv
                    if cid == 32 and wordspace:
                        x += wordspace
            self._previous, self._current = previous, current
            return (x, y)

    return _PageLines


_PAGE_LINES = None


def _page_lines(manager):
    """A new _PageLines device (the class made on first use)."""
    global _PAGE_LINES
    if _PAGE_LINES is None:
        _PAGE_LINES = _page_lines_device()
    return _PAGE_LINES(manager)


_bold_fonts: dict[str, bool] = {}


def _is_bold(fontname: str) -> bool:
    bold = _bold_fonts.get(fontname)
    if bold is None:
        bold = _bold_fonts[fontname] = bool(_BOLD_RE.search(fontname or ""))
    return bold


def _line(chars: list[_Char], page: int) -> tuple[Line | None, int]:
    """A Line from its characters (None when it holds no text), and how many of them had no Unicode mapping.
    Words are separated where pdfminer puts a space: a gap wider than a tenth of the character's size."""
    pieces: list[str] = []
    right = float("inf")
    for x0, y0, x1, y1, text, _, _ in chars:
        if right < x0 - WORD_MARGIN * max(x1 - x0, y1 - y0):
            pieces.append(" ")
        right = x1
        pieces.append(text)
    raw = "".join(pieces)
    unmapped = len(_CID_RE.findall(raw)) if "(cid:" in raw else 0
    text = " ".join((_CID_RE.sub(" ", raw) if unmapped else raw).split())
    x0s, y0s, x1s, y1s, texts, sizes, fonts = zip(*chars)
    inked = [i for i, piece in enumerate(texts) if piece.strip()]
    if not text or not inked:
        return None, 0
    size = round(statistics.median(sizes[i] for i in inked) * 2) / 2
    bold = sum(count for font, count in Counter(fonts[i] for i in inked).items() if _is_bold(font)) > len(inked) / 2
    line = Line(text=text, x0=min(x0s), x1=max(x1s), y0=min(y0s), y1=max(y1s), size=size, bold=bold, page=page)
    return line, unmapped


def drop_running_lines(pages: list[list[Line]], body_size: float) -> list[Line]:
    """All lines but page numbers and the running headers and footers near the page edges (those in type no
    larger than the body's: a title on page 1 may repeat in the running header of the pages after it)."""
    if not pages:
        return []
    height = max((line.y1 for page in pages for line in page), default=0) or 1
    extent = [(max((l.y1 for l in page), default=0), min((l.y0 for l in page), default=0)) for page in pages]

    def at_edge(line: Line) -> bool:
        top, bottom = extent[line.page - 1]
        return (line.y0 > top - EDGE_SHARE * height and line.y1 >= top - 1) or \
               (line.y1 < bottom + EDGE_SHARE * height and line.y0 <= bottom + 1) or \
               line.y0 > (1 - EDGE_SHARE / 2) * height or line.y1 < EDGE_SHARE / 2 * height

    def signature(line: Line) -> str:
        return re.sub(r"\d+", "#", line.text.casefold())

    edge_pages: dict[str, set[int]] = {}
    for page in pages:
        for line in page:
            if at_edge(line):
                edge_pages.setdefault(signature(line), set()).add(line.page)
    repeated = max(2, len(pages) // 3)
    kept = []
    for page in pages:
        for line in page:
            if at_edge(line) and (_PAGE_NUMBER_RE.match(line.text) or (
                    line.size <= body_size + 0.5 and len(edge_pages[signature(line)]) >= repeated)
                    or (line.size < body_size - 0.5 and _isolated(line, page, 1.5 * body_size))):
                continue
            kept.append(line)
    return kept


def _isolated(line: Line, page: list[Line], gap: float) -> bool:
    """No other line of the page (beside it on the same row aside) lies within `gap` above or below it."""
    for other in page:
        if other is line or (other.y0 < line.y1 and other.y1 > line.y0):
            continue
        if min(abs(other.y0 - line.y1), abs(line.y0 - other.y1)) < gap:
            return False
    return True


def reading_order(lines: list[Line]) -> list[Line]:
    """One page's lines in reading order: column by column within each band between lines across the page."""
    if not lines:
        return []
    left_edge, right_edge = min(l.x0 for l in lines), max(l.x1 for l in lines)
    middle = (left_edge + right_edge) / 2
    slack = 0.01 * (right_edge - left_edge)
    for line in lines:
        line.column = 1 if line.x1 <= middle + slack else 2 if line.x0 >= middle - slack else 0
    sides = Counter(line.column for line in lines)
    if min(sides[1], sides[2]) < 3 or sides[1] + sides[2] < 2 * sides[0]:
        for line in lines:
            line.column = 0  # one column: short lines that end left of the middle are no column
        return sorted(lines, key=lambda l: -l.y1)
    ordered: list[Line] = []
    band: list[Line] = []
    number = 0
    for line in sorted(lines, key=lambda l: -l.y1):
        if line.column == 0:
            ordered.extend(sorted(band, key=lambda l: (l.column, -l.y1)))
            band = []
            number += 1
            line.band = number
            ordered.append(line)
            number += 1
        else:
            line.band = number
            band.append(line)
    ordered.extend(sorted(band, key=lambda l: (l.column, -l.y1)))
    return ordered


def take_title(lines: list[Line], body_size: float) -> tuple[str, list[Line]]:
    """The title (the largest type in the upper half of page 1, its lines joined) and the lines after it."""
    first_page = [l for l in lines if l.page == 1]
    if not first_page:
        return "", lines
    top = max(l.y1 for l in first_page)
    candidates = [l for l in first_page if l.y1 >= top - 0.5 * top and len(l.text) > 3]
    largest = max((l.size for l in candidates), default=0)
    if largest < body_size + 1.5:
        return "", lines
    chosen = {id(l) for l in candidates if l.size == largest}
    start = next(i for i, l in enumerate(lines) if id(l) in chosen)
    end = start + 1
    while end < len(lines) and lines[end].page == 1 and lines[end].size == largest:
        end += 1
    return paragraph([l.text for l in lines[start:end]]), lines[end:]


def make_blocks(lines: list[Line], body_size: float, vocabulary: frozenset[str]) -> list[Block]:
    """Paragraphs and headings; in the reference section, one block per entry where the layout shows them."""
    groups: list[list[Line]] = []
    for previous, line in zip([None] + lines[:-1], lines):
        if previous is None or _starts_block(previous, line, body_size):
            groups.append([line])
        else:
            groups[-1].append(line)
    blocks: list[Block] = []
    index = 0
    while index < len(groups):
        group = groups[index]
        text = paragraph([l.text for l in group], vocabulary)
        heading = _is_heading(group, text, body_size)
        blocks.append(Block(text=text, page=group[0].page, heading=heading, lines=tuple(l.text for l in group)))
        index += 1
        if heading and heading_name(text) in REFERENCE_HEADINGS:
            end = index
            while end < len(groups) and not (_is_heading(groups[end], groups[end][0].text, body_size)
                                             and APPENDIX_RE.match(heading_name(groups[end][0].text))):
                end += 1
            blocks.extend(reference_entries([l for g in groups[index:end] for l in g]))
            index = end
    return blocks


def reference_entries(lines: list[Line]) -> list[Block]:
    """The reference section: one block per entry when a hanging indent or gaps show where entries start,
    else one block of all its lines (the reference parser then finds the entries from the text)."""
    if not lines:
        return []
    size = statistics.median(l.size for l in lines)
    indented = [l.indent > 0.8 * size for l in lines]
    starts: list[int] = []
    if sum(indented) >= 2 and indented.count(False) >= 2:  # a hanging indent: entries start at the margin
        starts = [i for i, flag in enumerate(indented) if not flag]
    else:
        gaps = [i for i in range(1, len(lines)) if _same_column(lines[i - 1], lines[i])
                and lines[i - 1].y0 - lines[i].y1 > 0.45 * size]
        if len(gaps) >= 2:  # entries set apart: a column break between two is seen in the text
            breaks = [i for i in range(1, len(lines)) if not _same_column(lines[i - 1], lines[i])
                      and (_TERMINAL_RE.search(lines[i - 1].text) or _URL_END_RE.search(lines[i - 1].text))
                      and looks_like_entry_start(lines[i].text)]
            starts = sorted({0, *gaps, *breaks})
    if not starts:
        return [Block(text=paragraph([l.text for l in lines]), page=lines[0].page,
                      lines=tuple(l.text for l in lines))]
    if starts[0] != 0:
        starts = [0] + starts
    entries = [lines[a:b] for a, b in zip(starts, starts[1:] + [len(lines)])]
    return [Block(text=paragraph([l.text for l in entry]), page=entry[0].page, lines=tuple(l.text for l in entry),
                  one_entry=True) for entry in entries]


def _starts_block(previous: Line, line: Line, body_size: float) -> bool:
    if abs(previous.size - line.size) > 0.6 or previous.bold != line.bold:
        return True
    margin = 0.8 * line.size
    ends_sentence = _TERMINAL_RE.search(previous.text) is not None and not _ABBREVIATION_END_RE.search(previous.text)
    if not _same_column(previous, line):  # a column or page break: the paragraph goes on unless indented
        return ends_sentence and line.indent > margin
    gap = previous.y0 - line.y1
    if gap > 0.6 * line.size or gap < -0.5 * line.size:
        return True
    if line.indent - previous.indent > margin:  # an indented first line
        return True
    return ends_sentence and line.indent <= margin and previous.room > WRAP_SLACK * _width_of_first_word(previous, line)


def _width_of_first_word(previous: Line, line: Line) -> float:
    """About how wide `line`'s first word is: when it would have fitted on `previous`, that line ended a paragraph."""
    char_width = (previous.x1 - previous.x0) / max(1, len(previous.text))
    return (len(line.text.split()[0]) + 1) * char_width


def _is_heading(group: list[Line], text: str, body_size: float) -> bool:
    words = text.split()
    if not words or len(group) > 2 or len(words) > MAX_HEADING_WORDS or text.endswith((",", ";")):
        return False
    if heading_name(text) in REFERENCE_HEADINGS:
        return True
    if text.endswith(".") and not re.match(r"^\d", text):
        return False
    larger = all(l.size >= body_size + 0.9 for l in group)
    bold = all(l.bold for l in group)
    letters = [ch for ch in text if ch.isalpha()]
    capitals = bool(letters) and all(ch.isupper() for ch in letters) and len(words) <= MAX_CAPS_HEADING_WORDS
    return larger or bold or capitals


def _same_column(a: Line, b: Line) -> bool:
    return a.page == b.page and a.column == b.column and a.band == b.band


def measure_columns(lines: list[Line]) -> None:
    """Set each line's indent and room from the edges of its column (its page, band and column). A column of
    a few lines (a reference that runs over to the next page) takes the nearest edges of the fuller columns."""
    segments: dict[tuple[int, int, int], list[Line]] = {}
    for line in lines:
        segments.setdefault((line.page, line.band, line.column), []).append(line)
    edges = {key: (min(l.x0 for l in group), max(l.x1 for l in group)) for key, group in segments.items()}
    full = [edges[key] for key, group in segments.items() if len(group) >= MIN_COLUMN_LINES]
    for key, group in segments.items():
        left, right = edges[key]
        if len(group) < MIN_COLUMN_LINES and full:
            left = max((l for l, _ in full if l <= left + 1), default=left)
            right = min((r for _, r in full if r >= right - 1), default=right)
        for line in group:
            line.indent, line.room = line.x0 - left, right - line.x1


def _by_page(lines: list[Line]) -> list[list[Line]]:
    pages: dict[int, list[Line]] = {}
    for line in lines:
        pages.setdefault(line.page, []).append(line)
    return [pages[number] for number in sorted(pages)]


def _body_size(lines: list[Line]) -> float:
    sizes = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0
