"""Every size a document may have, in one place (docs/security.md says why each value).

A lab server reads files from anyone who can reach it, so each limit is checked while reading, before the
work it bounds, and its message says what was too large and what the limit is.
"""
from __future__ import annotations

from recommender.documents.errors import DocumentError

MB = 1024 * 1024

MAX_BYTES = 50 * MB  # an uploaded file, or what one gzipped file unpacks to
MAX_ARCHIVE_BYTES = 2 * 1024 * MB  # what a tar archive may unpack to, figures included (streamed, not kept)
MAX_ARCHIVE_MEMBERS = 20_000  # files in a zip or tar archive
MAX_PROJECT_TEX_BYTES = 4 * MB  # the .tex files of a LaTeX project, together
MAX_PROJECT_BIB_BYTES = 16 * MB  # its .bib and .bbl files, together
MAX_DOCX_BYTES = 100 * MB  # what a Word file's parts unpack to, together (its pictures included)
MAX_DOCX_XML_BYTES = 24 * MB  # each of its XML parts (the text, word/document.xml; the styles ...), unpacked
MAX_TEXT_CHARS = 2_000_000  # the text of a document once read (a LaTeX project with its includes expanded)
MAX_DOCX_STYLES = 1_000  # styles of a Word file (a long thesis has a few hundred)
MAX_DOCX_RUNS = 100_000  # runs of text (stretches of one formatting) in a part of a Word file (a thesis: ~50,000)
MAX_PARAGRAPHS = 20_000  # paragraphs (and lines of a text file) of a document
MAX_INCLUDES = 200  # \input / \include commands a LaTeX project may follow, in all
MAX_INCLUDE_DEPTH = 10  # \input inside \input ...
MAX_PDF_PAGES = 300  # pages of a PDF read (the rest left out, with a notice)
MAX_CLAIMS = 300  # uncited claims listed in one review (the likeliest; the count of the rest said)
MAX_PLACES = 300  # citation places answered in one review (placeholders first; the rest unanswered, said so)


def megabytes(size: int) -> str:
    """A size for people: "8 MB"."""
    return f"{size / MB:,.0f} MB"


def check(size: int, limit: int, what: str, unit: str = "characters") -> None:
    """DocumentError when `size` passes `limit`: "The document's text is over 2,000,000 characters; ..."."""
    if size > limit:
        raise DocumentError(f"{what} is over {limit:,} {unit}, the most a document may have here. Split it, or "
                            "leave out what a review does not need (appendices, data tables) and try again.")
