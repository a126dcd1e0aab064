"""User corpora imported through the app: one index directory each, on a shelf.

A shelf is a folder of corpora. The shared shelf is the corpora root itself: every session of the app
may list it when the operator enables shared corpora. A private shelf belongs to one owner (a person's
workspace, `personal`) and lives under the root's `.sessions/` folder; `sweep_private_shelves` removes those
whose owner is gone. Indexes outside a shelf (the demo, or one named by $CITREC_INDEX) are never modified:
extending one builds a new user corpus holding its papers plus the new ones.

Builds from a source (OpenAlex, an arXiv snapshot, Zotero, a folder of PDFs) run as background jobs
(`recommender.background`), one per corpus name, in the shelf's `.jobs/<name>/` folder: `python -m recommender
corpus` writes the papers there, then `python -m recommender index` publishes the corpus on the shelf.
"""
from __future__ import annotations

import os
import re
import shutil
import sqlite3
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from recommender.background import Job, JobBusy, Step
from recommender.embedding.encoders import parse_encoder_name
from recommender.paper import Paper
from recommender.store import versions
from recommender.store.index import Index
from recommender.store.build import Progress, add_to_index, build_index
from workspace import PROJECT_ROOT

PRIVATE_FOLDER = ".sessions"  # a slug never starts with a dot, so no corpus can take this name
JOBS_FOLDER = ".jobs"
OWNER_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")
DEFAULT_MAX_WORKSPACES = 500  # private shelves on the server ($CITREC_MAX_WORKSPACES): anyone may start one
MAX_CORPORA_PER_SHELF = 20  # corpora of one private shelf, with those being built
MAX_BUILDS_RUNNING_PER_SHELF = 2  # builds of one shelf running at a time (each a process downloading papers)
MAX_BUILDS_RUNNING = 8  # builds running on the whole server at a time


def max_workspaces() -> int:
    """How many private shelves the server keeps at most ($CITREC_MAX_WORKSPACES, default 500)."""
    return int(os.environ.get("CITREC_MAX_WORKSPACES") or DEFAULT_MAX_WORKSPACES)


def corpora_root() -> Path:
    """$CITREC_CORPORA, else .index/corpora in the project; also the shared shelf."""
    return Path(os.environ.get("CITREC_CORPORA") or PROJECT_ROOT / ".index" / "corpora")


def on_a_shelf(directory: Path) -> bool:
    """Whether `directory` is a user corpus, on the shared shelf or on a private one."""
    parent, root = Path(directory).resolve().parent, corpora_root().resolve()
    return parent == root or parent.parent == root / PRIVATE_FOLDER


def private_shelf(owner: str) -> Path:
    """The shelf of one owner (a session id: letters, digits, `-` and `_`); not created here."""
    if not OWNER_RE.fullmatch(owner):
        raise ValueError(f"not a valid shelf owner: {owner!r}")
    return corpora_root() / PRIVATE_FOLDER / owner


def is_private_shelf(shelf: Path) -> bool:
    return Path(shelf).parent == corpora_root() / PRIVATE_FOLDER


def check_new_shelf(shelf: Path) -> None:
    """ValueError when `shelf` is a private shelf not created yet and the server keeps `max_workspaces()`
    already."""
    if not is_private_shelf(shelf) or shelf.is_dir():
        return
    limit = max_workspaces()
    existing = sum(1 for _ in zip(range(limit), (corpora_root() / PRIVATE_FOLDER).iterdir())) \
        if shelf.parent.is_dir() else 0
    if existing >= limit:
        raise ValueError(f"This server keeps {limit:,} workspaces already, the most it keeps; unused ones are removed "
                         "after a day: try again later, or ask its operator.")


def check_room_for_corpus(shelf: Path, slug: str) -> None:
    """ValueError when a private `shelf` holds MAX_CORPORA_PER_SHELF corpora (with those being built) already;
    also `check_new_shelf`."""
    check_new_shelf(shelf)
    if not is_private_shelf(shelf):
        return
    held = set(list_corpora(shelf)) | set(build_jobs(shelf))
    if slug not in held and len(held) >= MAX_CORPORA_PER_SHELF:
        raise ValueError(f"This workspace holds {len(held)} corpora (with builds), the most it holds: delete or "
                         "remove one first.")


def slugify(name: str) -> str:
    """A folder name from a corpus name: ASCII letters, digits and dashes."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:60]


def list_corpora(shelf: Path | None = None) -> dict[str, Path]:
    """Corpora on `shelf` (default: the shared one) that have a published version, by folder name."""
    shelf = shelf or corpora_root()
    if not shelf.is_dir():
        return {}
    return {p.name: p for p in sorted(shelf.iterdir()) if (p / "CURRENT").is_file()}


def corpus_counts(directory: Path) -> tuple[int, int] | None:
    """(papers, citation links) of a corpus's live version, from its manifest; None when it cannot be read."""
    try:
        manifest = versions.read_manifest(versions.current_version(directory), verify=False)
        return int(manifest["papers"]), int(manifest["edges"])
    except (versions.IndexDirectoryError, KeyError, TypeError, ValueError):
        return None


def is_user_corpus(directory: Path, shelf: Path | None = None) -> bool:
    """Whether `directory` is a corpus on `shelf` (default: the shared one)."""
    return Path(directory).resolve().parent == (shelf or corpora_root()).resolve()


def _seed_cache(base: Path, target: Path) -> None:
    """Copy the base index's embedding cache, so its papers are not embedded again."""
    source = versions.embedding_cache_path(base)
    if not source.is_file():
        return
    destination = versions.embedding_cache_path(target)
    destination.parent.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(f"file:{source}?mode=ro", uri=True), sqlite3.connect(destination)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def create_corpus(name: str, papers: list[Paper], base: Index | None = None,
                  on_progress: Progress | None = None, multilingual: bool | None = None,
                  shelf: Path | None = None) -> Path:
    """Build a new user corpus `name` on `shelf` (default: the shared one) from `papers` (after the base
    index's papers, if given).

    Papers whose id is already in the base are skipped. Fails if the name is taken. `multilingual`: also build
    the multilingual field (queries in other languages); None: as the base has it (no base: no).
    """
    slug = slugify(name)
    if not slug:
        raise ValueError("Give the corpus a name with at least one letter or digit.")
    target = (shelf or corpora_root()) / slug
    if (target / "CURRENT").exists():
        raise ValueError(f"A corpus named “{slug}” already exists; choose another name or extend it.")
    _check_no_build(shelf or corpora_root(), slug)
    check_room_for_corpus(shelf or corpora_root(), slug)
    existing = base.all_papers() if base is not None else []
    known = {p.id for p in existing}
    options = {"multilingual": bool(multilingual)}
    if base is not None:
        _seed_cache(base.root, target)
        inherited = base.manifest.get("multilingual", False)
        options = {"max_tokens": base.manifest["max_tokens"], "runtime": parse_encoder_name(base.manifest["model"])[1],
                   "multilingual": inherited if multilingual is None else multilingual}
    build_index(existing + [p for p in papers if p.id not in known], target, on_progress=on_progress,
                progress_bar=False, source={"imported_as": name}, **options)
    return target


def extend_corpus(directory: Path, papers: list[Paper], on_progress: Progress | None = None,
                  shelf: Path | None = None) -> int:
    """Add papers to a corpus on `shelf` in place (a new version is published atomically); returns how many
    were new."""
    if not is_user_corpus(directory, shelf):
        raise ValueError(f"{directory} is not a user corpus; create a new corpus from it instead.")
    _, added = add_to_index(papers, directory, on_progress=on_progress, progress_bar=False)
    return added


def delete_corpus(directory: Path, shelf: Path | None = None) -> None:
    """Remove a corpus on `shelf` with all its versions and cached embeddings."""
    if not is_user_corpus(directory, shelf):
        raise ValueError(f"{directory} is not a user corpus on this shelf; it is not deleted.")
    shutil.rmtree(directory)


def touch_shelf(shelf: Path) -> bool:
    """Record that the shelf's owner is still around (the folder's modification time); False if it has none."""
    try:
        os.utime(shelf)
    except FileNotFoundError:
        return False
    return True


def sweep_private_shelves(owner_alive: Callable[[str], bool], grace_s: float, idle_limit_s: float,
                          on_remove: Callable[[Path], None] | None = None, now: float | None = None) -> int:
    """Remove the private shelves of owners that are gone; returns how many were removed.

    A shelf goes when it has not been touched for `grace_s` and `owner_alive(owner)` is false, or when it
    has not been touched for `idle_limit_s` whatever its owner. `on_remove(corpus)` is called for each
    corpus on a shelf just before the shelf is deleted (to free what the app holds of it).
    """
    root = corpora_root() / PRIVATE_FOLDER
    if not root.is_dir():
        return 0
    now = time.time() if now is None else now
    removed = 0
    for shelf in sorted(root.iterdir()):
        try:
            idle = now - shelf.stat().st_mtime
        except FileNotFoundError:  # removed meanwhile by another sweep
            continue
        if idle > idle_limit_s or (idle > grace_s and not owner_alive(shelf.name)):
            for corpus in list_corpora(shelf).values():
                if on_remove is not None:
                    on_remove(corpus)
            shutil.rmtree(shelf, ignore_errors=True)
            removed += 1
    return removed


# --------------------------------------------------------------------------- builds in the background


def build_jobs(shelf: Path) -> dict[str, Job]:
    """The background builds of corpora for `shelf` (running, finished or interrupted), by corpus folder name."""
    folder = shelf / JOBS_FOLDER
    if not folder.is_dir():
        return {}
    return {p.name: Job(p) for p in sorted(folder.iterdir()) if (p / "job.json").is_file()}


def check_build_room(shelf: Path) -> None:
    """ValueError when `shelf` runs MAX_BUILDS_RUNNING_PER_SHELF builds already, or the server
    MAX_BUILDS_RUNNING."""
    if sum(job.running() for job in build_jobs(shelf).values()) >= MAX_BUILDS_RUNNING_PER_SHELF:
        raise ValueError(f"{MAX_BUILDS_RUNNING_PER_SHELF} builds of this workspace run already, the most at a time: "
                         "wait until one ends or stop it.")
    root = corpora_root()
    shelves = [root, *sorted((root / PRIVATE_FOLDER).glob("*"))]
    if sum(job.running() for other in shelves for job in build_jobs(other).values()) >= MAX_BUILDS_RUNNING:
        raise ValueError(f"{MAX_BUILDS_RUNNING} builds run on this server already, the most at a time: try again "
                         "when one has ended.")


def resume_build(job: Job) -> None:
    """Resume a stopped, failed or interrupted build, when its shelf and the server have room for it."""
    check_build_room(job.folder.parent.parent)
    job.start()


def _check_no_build(shelf: Path, slug: str) -> None:
    job = build_jobs(shelf).get(slug)
    if job is not None and job.running():
        raise JobBusy(f"A build of “{slug}” is running; wait until it ends or stop it, or choose another name.")


def start_build(name: str, source: list[str], shelf: Path, *, multilingual: bool = False,
                keep_fresh: bool = False) -> Job:
    """Start building corpus `name` on `shelf` in the background from `source` (the arguments of
    `python -m recommender corpus` without --out). `keep_fresh`: the job keeps the shelf's modification time
    fresh while it runs (a private shelf, which the clean-up would otherwise take for abandoned)."""
    slug = slugify(name)
    if not slug:
        raise ValueError("Give the corpus a name with at least one letter or digit.")
    target = shelf / slug
    if (target / "CURRENT").exists():
        raise ValueError(f"A corpus named “{slug}” already exists; choose another name.")
    folder = shelf / JOBS_FOLDER / slug
    earlier = build_jobs(shelf).get(slug)
    if earlier is not None:
        state = earlier.state()
        if state == "running":
            raise JobBusy(f"A build of “{slug}” is running; wait until it ends or stop it, or choose another name.")
        if state != "done":  # its downloads are kept for a resume: never thrown away unasked
            raise ValueError(f"An earlier build of “{slug}” is {state}: resume or remove it below, or choose "
                             "another name.")
        earlier.remove()  # done, and its corpus has been deleted since
    check_room_for_corpus(shelf, slug)
    check_build_room(shelf)
    papers = folder / "corpus.jsonl.gz"
    steps = [Step("Collecting the papers", ["corpus", *source, "--out", str(papers)], creates=str(papers)),
             Step("Building the index", ["index", str(papers), "--out", str(target)]
                  + (["--multilingual"] if multilingual else []))]
    try:
        job = Job.create(folder, name, steps, touch=[str(shelf)] if keep_fresh else [], temporary=[str(papers)],
                         info={"corpus": str(target), "source": source[0] if source else ""})
    except FileExistsError:  # another session started it a moment ago
        raise JobBusy(f"A build of “{slug}” has just been started; choose another name.") from None
    job.start()
    return job
