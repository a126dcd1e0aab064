"""One key per author, so that 'J. Smith', 'John Smith' and 'Smith, John' count as the same person."""
from __future__ import annotations

import re
import unicodedata


def author_key(name: str) -> str:
    """Surname plus first initial ("smith_j"); "" for a name without letters."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    if "," in text:
        last, _, first = text.partition(",")
    else:
        parts = text.split()
        last, first = (parts[-1], " ".join(parts[:-1])) if parts else ("", "")
    last = re.sub(r"[^a-z]", "", last)
    initial = re.sub(r"[^a-z]", "", first)[:1]
    return f"{last}_{initial}" if last else ""
