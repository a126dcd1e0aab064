"""What a paper's PDF says about itself beyond title and abstract: its authors, DOI and arXiv id.

The document reader (`recommender.documents`) leaves the byline out of the text it returns, so the first page
is read once more here, with vertical text detected (the arXiv stamp runs up the left margin):
- authors: the lines between the title and the abstract, split into names; affiliations, e-mail addresses and
  footnote marks are dropped. When the page has no such byline, the PDF's Author field is used instead;
- DOI: one printed on the first page after "doi" or "doi.org/" that the reference list does not hold;
- arXiv id: the stamp arXiv puts on every first page ("arXiv:2104.08663v3 [cs.IR] 21 Oct 2021").
Whatever cannot be found is left empty: a folder of PDFs is read as well as it can be.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from recommender.corpus.identifiers import normalize_doi, normalize_title
from recommender.documents.model import Document
from recommender.documents.pdf import Line, reading_order

MAX_BYLINE_LINES = 8  # lines after the title that may still name authors
MAX_AUTHORS = 60
_DOI_RE = re.compile(r"(?:\bdoi\s*:?\s*|doi\.org/)(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
_ARXIV_STAMP_RE = re.compile(r"arXiv:\s*(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?\s*\[[A-Za-z.-]+\]")
_AFFILIATION_RE = re.compile(
    r"\b(?:univ\w*|institut\w*|dep(?:t|artment)\w*|school|college|facult\w*|laborator\w*|lab|labs|research|"
    r"cent(?:er|re)|academy|hospital|inc|ltd|gmbh|corp\w*|company|foundation|ministry|street|road|avenue)\b",
    re.IGNORECASE)
_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]{1,64}@\S+")  # a bounded local part (RFC 5321) keeps the search linear
_BRACKETED_RE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}")  # linear: each stops at the next opener
_MARKS_RE = re.compile(r"[\d*†‡§¶#∗⋆✉]+")
_SEPARATORS_RE = re.compile(r"\s*(?:,|;|&|·|•|\band\b|\bund\b)\s*", re.IGNORECASE)
_PARTICLES = {"van", "von", "der", "den", "de", "del", "della", "da", "di", "du", "la", "le", "dos", "das", "bin",
              "ibn", "al", "el", "ter", "ten", "zu", "y"}
_NAME_WORD_RE = re.compile(r"^(?:[A-Z][.]?(?:-[A-Z][.]?)?|[A-Z][\w'’-]*[\w.])$", re.UNICODE)
_HEADING_RE = re.compile(r"^(?:abstract|summary|keywords|index terms|1\.?\s+introduction|introduction)\b",
                         re.IGNORECASE)
_LISTING_RE = re.compile(r"[,;&·•]|\band\b")  # a line that lists names: wrapped, it goes on on the next line
_INITIAL_END_RE = re.compile(r"\b[A-Z]\.$")  # "... and Mary S." + "Dietrich"
_AND_START_RE = re.compile(r"\s*(?:and|&)\s")
_NOT_NAMES = {"abstract", "introduction", "keywords", "proceedings", "conference", "journal", "preprint",
              "submitted", "accepted", "draft", "anonymous", "author", "authors", "administrator", "user"}


@dataclass
class FrontMatter:
    authors: list[str] = field(default_factory=list)
    doi: str = ""
    arxiv: str = ""


def read_front_matter(data: bytes, document: Document) -> FrontMatter:
    """Authors, DOI and arXiv id of the PDF `data`, whose text `document` was read from it."""
    lines = first_page_lines(data)
    cited_dois = {r.doi for r in document.references if r.doi}
    page = "\n".join(lines)
    doi = next((d for d in (normalize_doi(m.group(1).rstrip(".,;:)]")) for m in _DOI_RE.finditer(page))
                if d not in cited_dois), "")
    stamp = _ARXIV_STAMP_RE.search(page)
    authors = byline_authors(lines, document.title, document.abstract) or metadata_authors(data)
    return FrontMatter(authors=authors, doi=doi, arxiv=stamp.group(1) if stamp else "")


def first_page_lines(data: bytes) -> list[str]:
    """The text lines of page 1 in reading order (column by column, as the document reader orders them); the
    vertical lines (a stamp in the margin) last."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTTextContainer, LTTextLine, LTTextLineVertical

    lines: list[Line] = []
    vertical: list[str] = []
    try:
        for page in extract_pages(io.BytesIO(data), maxpages=1, laparams=LAParams(detect_vertical=True)):
            stack = list(page)
            while stack:
                item = stack.pop(0)
                if isinstance(item, LTTextLine):
                    text = " ".join(item.get_text().split())
                    if text and isinstance(item, LTTextLineVertical):
                        vertical.append(text)
                    elif text:
                        lines.append(Line(text=text, x0=item.x0, x1=item.x1, y0=item.y0, y1=item.y1,
                                          size=item.height, bold=False, page=1))
                elif isinstance(item, LTTextContainer):
                    stack[:0] = list(item)
    except Exception:  # the document reader has read this PDF; a second reader's trouble only costs the extras
        return []
    return [line.text for line in reading_order(lines)] + vertical


def byline_authors(lines: list[str], title: str, abstract: str) -> list[str]:
    """Names on the lines after the title and before the abstract (or the first heading)."""
    folded_title = normalize_title(title)
    if not folded_title:
        return []
    folded_abstract = normalize_title(abstract)[:200]
    start = None
    for number, line in enumerate(lines):
        folded = normalize_title(line)
        if folded and folded in folded_title:
            start = number + 1
        elif start is not None:
            break
    if start is None:
        return []
    groups: list[str] = []  # the byline's runs of lines, each wrapped line joined to the one before it
    joined = False
    for line in lines[start:start + MAX_BYLINE_LINES]:
        folded = normalize_title(line)
        if _HEADING_RE.match(line) or (folded and folded_abstract.startswith(folded[:60])):
            break
        if _AFFILIATION_RE.search(_BRACKETED_RE.sub(" ", line)) or _EMAIL_RE.search(line):
            joined = False  # an affiliation or address: the names before it are complete
            continue
        if joined and groups and (_LISTING_RE.search(groups[-1]) or _INITIAL_END_RE.search(groups[-1])
                                  or _AND_START_RE.match(line)):
            groups[-1] += " " + line
        else:
            groups.append(line)
        joined = True
    names = [name for group in groups for name in names_in(group)]
    return list(dict.fromkeys(names))[:MAX_AUTHORS]


def names_in(line: str) -> list[str]:
    """The personal names a byline holds ("Ada Lovelace1, Alan Turing* and G. B. Hopper (Navy Lab)")."""
    if _AFFILIATION_RE.search(_BRACKETED_RE.sub(" ", line)):
        return []
    text = _MARKS_RE.sub(" ", _BRACKETED_RE.sub(" ", _EMAIL_RE.sub(" ", line)))
    return [name for name in (" ".join(part.split()) for part in _SEPARATORS_RE.split(text)) if is_name(name)]


def is_name(text: str) -> bool:
    """Two to five words, each capitalised or an initial, or a particle such as "van" or "de"."""
    words = text.split()
    if not 2 <= len(words) <= 5 or text.casefold() in _NOT_NAMES:
        return False
    capitalised = [w for w in words if w not in _PARTICLES]  # "van", "de" as written; "Das", "De" are surnames
    return (len(capitalised) >= 2 and all(_NAME_WORD_RE.match(w) for w in capitalised)
            and not any(w.casefold().strip(".") in _NOT_NAMES for w in words)
            and any(len(w.rstrip(".")) > 1 for w in capitalised))


def metadata_authors(data: bytes) -> list[str]:
    """Names in the PDF's Author field ("A. Lovelace; A. Turing", "Lovelace, Ada and Turing, Alan")."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    try:
        info = PDFDocument(PDFParser(io.BytesIO(data))).info
        value = resolve1(next((i["Author"] for i in info if isinstance(i, dict) and "Author" in i), b""))
        text = decode_text(value) if isinstance(value, bytes) else str(value) if isinstance(value, str) else ""
    except Exception:  # damaged or odd metadata: no names from it
        return []
    return list(dict.fromkeys(n for n in author_field_names(text) if is_name(n)))[:MAX_AUTHORS]


def author_field_names(text: str) -> list[str]:
    """"Lovelace, Ada; Turing, Alan", "Lovelace, Ada and Turing, Alan" or "Ada Lovelace, Alan Turing" as names
    in their natural order."""
    names = []
    for part in re.split(r";|\band\b|&", text):
        last, comma, first = part.partition(",")
        surname_words = [w for w in last.split() if w.casefold() not in _PARTICLES]
        if comma and len(surname_words) == 1 and "," not in first and 1 <= len(first.split()) <= 3:
            names.append(" ".join(f"{first} {last}".split()))  # "Lovelace, Ada"
        else:
            names += [" ".join(p.split()) for p in part.split(",") if p.strip()]
    return names
