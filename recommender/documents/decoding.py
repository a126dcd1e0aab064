"""Bytes to text for every text format a document comes in; binary data is refused with a message."""
from __future__ import annotations

import unicodedata

from recommender.documents.errors import DocumentError
from recommender.references.text import decode_text

MAX_BINARY_SHARE = 0.01  # control characters a text may hold
SUPPORTED = ("PDF, LaTeX (.tex, with its .bib, or the project as .zip or .tar.gz), Word (.docx), Markdown (.md) or "
             "text (.txt)")


def decode(data: str | bytes, what: str) -> str:
    """Text from bytes (UTF-8, UTF-16, else Windows-1252); `what` names the file in the message for binary data."""
    text = data if isinstance(data, str) else decode_text(data)
    controls = sum(1 for ch in text[:200_000] if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f\v")
    if "\x00" in text[:200_000] or controls > MAX_BINARY_SHARE * min(len(text), 200_000):
        raise DocumentError(f"{what[0].upper()}{what[1:]} holds binary data, not text, and is of no format that "
                            f"can be read. Upload {SUPPORTED}.")
    return text
