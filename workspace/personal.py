"""A person's workspace: the private shelf that one unguessable token names, carried in the app's address.

Whoever opens the address works on that shelf: the corpora imported or built there, the models learned for them
(stored inside each corpus), and the corpus used last. A token from an address opens a shelf only when it has the
form of a token and that shelf exists: an address can never create a workspace, name a path, or list another
one. Shelves nobody has used for the idle limit are removed by `cleanup`.
"""
from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from workspace import corpora

TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{32,64}")  # token_urlsafe(24) gives 32; the earlier ?builds= tokens were hex(16)
LAST_USED = ".last-used"  # a file on the shelf: the folder name of the corpus used last ("" for the default one)


def new_token() -> str:
    """A fresh token (192 random bits) for a workspace that does not exist yet."""
    return secrets.token_urlsafe(24)


def shelf_of(token: str) -> Path | None:
    """The existing shelf that an address's `token` names, or None (malformed, or no such workspace)."""
    if not TOKEN_RE.fullmatch(token):
        return None
    shelf = corpora.private_shelf(token)
    return shelf if shelf.is_dir() else None


def remember_choice(shelf: Path, directory: Path) -> None:
    """Record on the shelf (when it exists) which corpus is in use: one of its own, else the default."""
    if shelf.is_dir():
        chosen = Path(directory)
        (shelf / LAST_USED).write_text(chosen.name if corpora.is_user_corpus(chosen, shelf) else "", encoding="utf-8")


def last_used(shelf: Path) -> Path | None:
    """The shelf's corpus used last, while it still exists; None for the default corpus or when unknown."""
    try:
        with open(shelf / LAST_USED, encoding="utf-8") as handle:
            name = handle.read(100).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return corpora.list_corpora(shelf).get(name)


def mark_used(directory: Path) -> None:
    """Record that a corpus is in use now (its folder's modification time, shown as "last used")."""
    try:
        os.utime(directory)
    except FileNotFoundError:
        pass


@dataclass(frozen=True)
class CorpusInfo:
    """One corpus of a workspace, as the list of one's corpora shows it."""
    name: str
    directory: Path
    papers: int | None
    links: int | None
    disk_bytes: int
    changed: float  # when its current version was published (seconds since the epoch)
    used: float  # when it was last used, or changed


def disk_bytes(directory: Path) -> int:
    """Bytes the files under `directory` take (links not followed)."""
    total = 0
    for folder, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except FileNotFoundError:  # a version pruned meanwhile
                continue
    return total


def your_corpora(shelf: Path) -> list[CorpusInfo]:
    """The corpora on `shelf`, by name, with their size and dates."""
    found = []
    for name, directory in corpora.list_corpora(shelf).items():
        try:
            changed, used = (directory / "CURRENT").stat().st_mtime, directory.stat().st_mtime
        except FileNotFoundError:  # deleted meanwhile
            continue
        papers, links = corpora.corpus_counts(directory) or (None, None)
        found.append(CorpusInfo(name, directory, papers, links, disk_bytes(directory), changed, max(used, changed)))
    return found
