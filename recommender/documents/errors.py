"""The one error a document reader raises: its message is meant for the user as it is."""
from __future__ import annotations


class DocumentError(ValueError):
    """The document cannot be read (empty, encrypted, scanned, damaged, too large or of another format)."""
