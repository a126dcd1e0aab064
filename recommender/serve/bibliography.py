"""The bibliography a document names and what it holds: the .bib files of `\\bibliography{}`,
`\\addbibresource{}` or a front matter's `bibliography:` (else the one .bib beside the document), each entry
with its place and the index paper it is, and the entry (the app's export) and key a new paper adds.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from recommender.corpus.export import citation_keys, to_bibtex
from recommender.documents.markdown import front_matter
from recommender.paper import Paper
from recommender.references.match import ReferenceIndex
from recommender.references.parse import parse_reference_list

_LATEX_BIB_RE = re.compile(r"^[^%\n]*\\(?:bibliography|addbibresource(?:\s*\[[^\[\]]*\])?)\s*\{([^{}]*)\}",
                           re.MULTILINE)  # the argument stops at the next brace: "{" × n took quadratic time
_ENTRY_RE = re.compile(r"@(\w+)\s*[{(]\s*([^,\s{}()]+)\s*,")
_NOT_REFERENCES = {"string", "preamble", "comment"}


@dataclass(frozen=True)
class Entry:
    key: str
    start: int  # offset of its "@" in the .bib text
    end: int  # offset of the end of its key
    title: str
    paper_id: str | None  # the index paper it is, if any


@dataclass
class Bibliography:
    """One .bib file as the editor shows it (`text`: its open buffer, else its file; "" when it does not exist)."""

    path: Path
    text: str
    exists: bool
    entries: dict[str, Entry] = field(default_factory=dict)  # key -> entry, in file order

    def key_of(self, paper_id: str) -> str | None:
        """The key of the entry that is this index paper, if the file has one."""
        return next((e.key for e in self.entries.values() if e.paper_id == paper_id), None)

    def new_key(self, paper: Paper, taken: set[str] = frozenset()) -> str:
        """The app's export key for the paper, with a letter added while another entry (or `taken`) holds it."""
        base = citation_keys([paper])[0]
        taken = {key.casefold() for key in [*self.entries, *taken]}
        key, letter = base, ord("a")
        while key.casefold() in taken:
            letter += 1
            key = base + chr(letter)
        return key

    def addition(self, paper: Paper, key: str) -> str:
        """The text that appends the paper's BibTeX entry (as the app exports it) under `key` to the file."""
        entry = bibtex_entry(paper, key)
        if not self.text.strip():
            return entry
        return ("\n" if self.text.endswith("\n") else "\n\n") + entry


def bibtex_entry(paper: Paper, key: str) -> str:
    """The paper's BibTeX entry as the app exports it (`export.to_bibtex`), under `key`."""
    return re.sub(r"^(@\w+\{)[^,\n]*,", lambda m: f"{m.group(1)}{key},", to_bibtex([paper]), count=1)


def bibliography_paths(text: str, document: Path) -> list[Path]:
    """The .bib files a document names (relative to its folder; ".bib" added where the name has none); when it
    names none, the only .bib file in its folder, if there is exactly one."""
    names = [name.strip() for match in _LATEX_BIB_RE.finditer(text) for name in match.group(1).split(",")]
    values, _ = front_matter(text.splitlines()[:200])
    if values.get("bibliography"):
        names += [name.strip("-'\" ") for name in re.split(r"[\s,\[\]]+", values["bibliography"])]
    paths = [document.parent / (name if name.endswith(".bib") else f"{name}.bib") for name in names if name.strip()]
    if not paths and document.parent.is_dir():
        found = sorted(document.parent.glob("*.bib"))
        paths = found if len(found) == 1 else []
    return list(dict.fromkeys(paths))


def read_bibliography(path: Path, text: str | None, references: ReferenceIndex) -> Bibliography:
    """The .bib at `path` (`text`: its open buffer, else read from disk), each entry matched to the index."""
    exists = text is not None or path.is_file()
    if text is None:
        text = path.read_text(encoding="utf-8", errors="replace") if exists else ""
    bib = Bibliography(path, text, exists)
    places = {match.group(2): match for match in _ENTRY_RE.finditer(text)
              if match.group(1).casefold() not in _NOT_REFERENCES}
    if not places:
        return bib
    try:
        items = {item.key: item for item in parse_reference_list(text, most=None) if item.key}  # the user's own
    except ValueError:
        items = {}
    for key, match in places.items():
        item = items.get(key)
        ids = references.match_item(item) if item is not None else set()
        bib.entries.setdefault(key, Entry(key, match.start(), match.end(2), item.title if item else "",
                                          min(ids) if ids else None))
    return bib
