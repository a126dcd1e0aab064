"""Turn what a user typed into a `Query`: text copied from a PDF unwrapped, mode detection and length limits."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from recommender.query import CITATION_MARK, Query
from recommender.references.text import join_lines, words_seen

MAX_TITLE_CHARS = 300
MAX_TEXT_CHARS = 5_000
MODES = ("auto", "draft", "passage")


@dataclass
class Prepared:
    """The query to run, the mode it was run in, and notices for the user (e.g. truncation)."""

    query: Query
    mode: str
    notices: list[str] = field(default_factory=list)


def unwrap(text: str) -> str:
    """Text as copied from a PDF made whole: each paragraph's lines joined and words hyphenated at a line end
    rejoined ("em-\nbeddings" -> "embeddings", "BERT-\nbased" -> "BERT-based"); blank lines still part paragraphs."""
    vocabulary = words_seen(text)
    paragraphs = (join_lines([line.strip() for line in block.splitlines() if line.strip()], vocabulary)
                  for block in re.split(r"\n\s*\n", text))
    return "\n\n".join(p for p in paragraphs if p)


def detect_mode(text: str) -> str:
    """"passage" when the text holds a [CIT] placeholder, else "draft"."""
    return "passage" if CITATION_MARK.lower() in text.lower() else "draft"


def split_authors(text: str) -> list[str]:
    """Author names typed as 'Ada Lovelace; A. Turing' (semicolons or new lines between names)."""
    return [name.strip() for name in text.replace("\n", ";").split(";") if name.strip()]


def clip(text: str, limit: int, label: str, notices: list[str]) -> str:
    """`text` cut to `limit` characters at a word boundary, with a notice when it was cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    notices.append(f"The {label} was {len(text):,} characters long; only the first {limit:,} were used.")
    return text[:limit].rsplit(" ", 1)[0]


def prepare(title: str, text: str, mode: str = "auto", **options) -> Prepared:
    """A query from a title and a text (an abstract or a passage); `options` go to `Query` (k, years, ...).

    In passage mode the text is the citation context and the title is the draft's global context.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    notices: list[str] = []
    title = " ".join(clip(unwrap(title), MAX_TITLE_CHARS, "title", notices).split())
    text = clip(unwrap(text), MAX_TEXT_CHARS, "text", notices)
    mode = detect_mode(text) if mode == "auto" else mode
    if mode == "passage":
        if text and CITATION_MARK.lower() not in text.lower():
            notices.append(f"No {CITATION_MARK} marker found: the whole passage is used as the citation context.")
        return Prepared(Query(title=title, context=text, **options), mode, notices)
    return Prepared(Query(title=title, abstract=text, **options), mode, notices)
