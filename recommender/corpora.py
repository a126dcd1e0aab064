"""User corpora imported through the app: one index directory each under a corpora root.

Indexes outside that root (the demo, or one named by $CITREC_INDEX) are never modified:
extending one builds a new user corpus holding its papers plus the new ones.
"""
from __future__ import annotations

import os
import re
import sqlite3
import unicodedata
from pathlib import Path

from . import index_files
from .demo import PROJECT_ROOT
from .index import Index, Progress, add_to_index, build_index
from .paper import Paper


def corpora_root() -> Path:
    """$CITREC_CORPORA, else .index/corpora in the project."""
    return Path(os.environ.get("CITREC_CORPORA") or PROJECT_ROOT / ".index" / "corpora")


def slugify(name: str) -> str:
    """A folder name from a corpus name: ASCII letters, digits and dashes."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:60]


def list_corpora() -> dict[str, Path]:
    """User corpora that have a published version, by folder name."""
    root = corpora_root()
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if (p / "CURRENT").is_file()}


def is_user_corpus(directory: Path) -> bool:
    return Path(directory).resolve().parent == corpora_root().resolve()


def _seed_cache(base: Path, target: Path) -> None:
    """Copy the base index's embedding cache, so its papers are not embedded again."""
    source = index_files.cache_dir(base) / "embeddings.sqlite"
    if not source.is_file():
        return
    destination = index_files.cache_dir(target) / "embeddings.sqlite"
    destination.parent.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(f"file:{source}?mode=ro", uri=True), sqlite3.connect(destination)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def create_corpus(name: str, papers: list[Paper], base: Index | None = None,
                  on_progress: Progress | None = None, multilingual: bool | None = None) -> Path:
    """Build a new user corpus `name` from `papers` (after the base index's papers, if given).

    Papers whose id is already in the base are skipped. Fails if the name is taken. `multilingual`: also build
    the multilingual field (queries in other languages); None: as the base has it (no base: no).
    """
    slug = slugify(name)
    if not slug:
        raise ValueError("Give the corpus a name with at least one letter or digit.")
    target = corpora_root() / slug
    if (target / "CURRENT").exists():
        raise ValueError(f"A corpus named “{slug}” already exists; choose another name or extend it.")
    existing = base.all_papers() if base is not None else []
    known = {p.id for p in existing}
    options = {"multilingual": bool(multilingual)}
    if base is not None:
        _seed_cache(base.root, target)
        inherited = base.manifest.get("multilingual", False)
        options = {"max_tokens": base.manifest["max_tokens"],
                   "multilingual": inherited if multilingual is None else multilingual}
    build_index(existing + [p for p in papers if p.id not in known], target, on_progress=on_progress,
                progress_bar=False, source={"imported_as": name}, **options)
    return target


def extend_corpus(directory: Path, papers: list[Paper], on_progress: Progress | None = None) -> int:
    """Add papers to a user corpus in place (a new version is published atomically); returns how many were new."""
    if not is_user_corpus(directory):
        raise ValueError(f"{directory} is not a user corpus; create a new corpus from it instead.")
    _, added = add_to_index(papers, directory, on_progress=on_progress, progress_bar=False)
    return added
