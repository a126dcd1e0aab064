"""On-disk layout of an index directory: immutable versions, an atomic CURRENT pointer, a manifest.

    DIR/CURRENT            name of the live version (replaced atomically)
    DIR/versions/<name>/   one complete index; never modified once published (format 4: papers.sqlite, columns/,
                           bm25/, graph.*.npy, per dense field a .npy of its vectors and its clusters' files)
    DIR/cache/             embedding cache shared by all versions (`embedding_cache_path`), and the record of
                           files whose checksums matched (`VERIFIED`)
    DIR/.build.lock        held by the one build that may run at a time (`build_lock`)
A build writes a new version under a temporary name and publishes it only when complete,
so a crash or kill at any moment leaves the previous version answering. Every file the engine
replaces in place (CURRENT, manifests, learned models) goes through `write_atomic`.

A build that fills its disk stops with `DiskFullError` (`build_lock` turns the OS's and SQLite's "disk full"
into it): nothing is published, its staging folder is removed, and the embeddings it saved to the cache are
reused when the same build runs again. A build killed outright (SIGKILL, the OOM killer, a power cut) leaves its
staging folder behind, at most one: the next build of the directory removes it before it starts (`new_staging_dir`).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time
import uuid
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from filelock import FileLock, Timeout

FORMAT_VERSION = 4  # 4: dense fields searched by clusters (3 and 2: by Annoy forests; rebuilt, not read)
READABLE_FORMATS = (4,)
MANIFEST = "manifest.json"
LOCK_FILE = ".build.lock"
VERIFIED = "verified.json"
SETTLED_S = 2.0  # a file is recorded as verified only when unchanged for this long (file times are coarse)


class IndexDirectoryError(RuntimeError):
    """An index directory that is missing, incomplete or damaged."""


class IndexBusyError(IndexDirectoryError):
    """Another build of the same index directory holds its lock."""


class DiskFullError(IndexDirectoryError):
    """A build stopped because the disk holding its index directory is full; it published nothing.

    `needed`: the bytes the step that could not start asked for, when it said (`reserve_space`), else None."""

    def __init__(self, message: str, needed: int | None = None, what: str = ""):
        super().__init__(message)
        self.needed, self.what = needed, what


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_dir(root: Path) -> Path:
    return root / "cache"


def embedding_cache_path(root: Path) -> Path:
    """The SQLite embedding cache of an index directory (shared by all its versions)."""
    return cache_dir(Path(root)) / "embeddings.sqlite"


@contextmanager
def build_lock(root: Path, wait: float = 0.0) -> Iterator[None]:
    """Hold the index directory's build lock; after `wait` seconds, fail with `IndexBusyError`.

    The lock is an OS file lock, so the kernel releases it when its holder dies (a killed build never
    blocks the next one). It also excludes a second build from another thread of the same process.

    A build inside that fails because the disk is full (`is_disk_full`) leaves as a `DiskFullError` that says so
    (where, how much is free, that the live version is unchanged, how to resume), once any staging folder is gone.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(root / LOCK_FILE, timeout=max(wait, 0.0), preserve_lock_file=True)
        lock.acquire()
    except Timeout:
        waited = f" (waited {wait:g} s)" if wait > 0 else ""
        raise IndexBusyError(f"{root}: another build of this index is running{waited}; wait for it to "
                             "finish or pass --wait SECONDS.") from None
    except Exception as exc:
        if is_disk_full(exc):
            raise disk_full(root, exc) from exc
        raise
    try:
        yield
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        _remove_staging(root)  # every staging folder belongs to a dead build now, this one's included
        raise disk_full(root, exc) from exc
    finally:
        lock.release()


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether `exc`, or an exception it arose from, says that the disk (or the user's quota) is full: ENOSPC or
    EDQUOT from the OS (numpy, SQLite's files), SQLITE_FULL from SQLite."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DiskFullError):
            return True
        if isinstance(exc, OSError) and (exc.errno in _NO_SPACE or any(os.strerror(code) in str(exc)
                                                                        for code in _NO_SPACE)):
            return True
        if isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL
                                               or "database or disk is full" in str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
_SQLITE_FULL = getattr(sqlite3, "SQLITE_FULL", 13)


def disk_full(root: Path, cause: BaseException | None = None) -> DiskFullError:
    """The error a build of `root` that ran out of disk space ends with: where, what is free (and needed, when
    known), that nothing was published, and that running the same command again resumes."""
    root = Path(root)
    needed = what = None
    error = cause
    while error is not None and not isinstance(error, DiskFullError):
        error = error.__cause__ or error.__context__
    if error is not None:
        needed, what = error.needed, error.what
    try:
        free = f"{_size(shutil.disk_usage(root).free)} free on {_mount_point(root)}"
    except OSError:
        free = f"free space on {_mount_point(root)} unknown"
    if needed:
        step = f"; {what or 'the next step'} needs about {_size(needed)}"
    elif cause is not None:
        step = f"; {_reason(cause)}"
    else:
        step = ""
    live = _pointer(root)
    state = (f"the live index (version {live}) is unchanged and still answers" if live
             else "there was no live index there, and there still is none")
    return DiskFullError(f"{root}: the disk is full ({free}{step}). The build stopped and "
                         f"published nothing, and removed the files it had written; {state}. Embeddings computed "
                         f"so far are kept in {embedding_cache_path(root)}: free some space on that disk and run "
                         "the same command again to resume without computing them again.", needed, what or "")


def _reason(exc: BaseException) -> str:
    """What the failed write said, in one line (the file it wrote, when the OS named one)."""
    if isinstance(exc, OSError) and exc.filename:
        return f"writing {exc.filename}: {exc.strerror or exc}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _mount_point(path: Path) -> str:
    """The mount point of the file system holding `path` (the disk that is full), or `path` itself."""
    try:
        found = Path(path).resolve()
        while not os.path.ismount(found) and found != found.parent:
            found = found.parent
        return str(found)
    except OSError:
        return str(path)


def reserve_space(path: Path, nbytes: int, what: str = "") -> None:
    """Set `nbytes` of disk aside for the file at `path` (beyond its end: its size stays), or fail with
    `DiskFullError` saying how much `what` needs.

    For files written through a memory map (the clusters' codes), where a full disk is not an error but a
    SIGBUS that kills the process: pages written later land in the space set aside. Where the file system cannot
    set space aside, the free space is checked instead (it can still run out if another writer takes it). Space
    set aside and never written is given back when the file is truncated or removed."""
    path = Path(path)
    if nbytes <= 0:
        return
    fd = os.open(path, os.O_RDWR)
    try:
        reserved = _fallocate_keep_size(fd, nbytes)
    finally:
        os.close(fd)
    if reserved is None:  # cannot set space aside here: check it instead
        free = shutil.disk_usage(path.parent).free
        reserved = free >= nbytes
    if not reserved:
        free = shutil.disk_usage(path.parent).free
        raise DiskFullError(f"{path.parent}: the disk is full: {what or path.name} needs about {_size(nbytes)}, "
                            f"{_size(free)} is free", nbytes, what)


def _fallocate_keep_size(fd: int, nbytes: int) -> bool | None:
    """fallocate(FALLOC_FL_KEEP_SIZE) on Linux: True when done, False when the disk is full, None when this system
    or file system cannot."""
    function = _libc_fallocate()
    if function is None:
        return None
    if function(fd, 1, 0, nbytes) == 0:  # 1: FALLOC_FL_KEEP_SIZE
        return True
    code = ctypes.get_errno()
    if code in _NO_SPACE:
        return False
    if code in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL, errno.ENODEV):
        return None
    raise OSError(code, os.strerror(code))


@lru_cache(maxsize=1)
def _libc_fallocate():
    """libc's fallocate on Linux, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = getattr(libc, "fallocate64", None) or libc.fallocate
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    function.restype = ctypes.c_int
    return function


def new_staging_dir(root: Path) -> Path:
    """A fresh private folder for a version under construction; stale ones from crashed builds are removed.

    Call it only while holding `build_lock`: any other staging folder then belongs to a dead build.
    """
    versions = root / "versions"
    versions.mkdir(parents=True, exist_ok=True)
    _remove_staging(root)
    staging = versions / f".staging-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    return staging


def _remove_staging(root: Path) -> None:
    """Remove every staging folder of `root` (call it only while holding `build_lock`)."""
    for stale in (root / "versions").glob(".staging-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _fsync(path: Path) -> None:
    """Flush a file's data, or a directory's entries (files created, renamed or removed in it), to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, content: bytes | str | Callable[[BinaryIO], None]) -> None:
    """Replace `path` so that readers, crashes and power cuts see either the old file or the whole new one.

    `content`: bytes, text (written as UTF-8), or a function that writes into the binary handle it is given.
    The data and the directory entry are fsynced; on failure the temporary file is removed.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    try:
        with open(tmp, "wb") as handle:
            if callable(content):
                content(handle)
            else:
                handle.write(content.encode("utf-8") if isinstance(content, str) else content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync(path.parent)


def publish(root: Path, staging: Path, info: dict) -> Path:
    """Write the manifest (checksums of every file), move the version in place and point CURRENT at it.

    Every file is fsynced before CURRENT changes, so even a power cut never leaves CURRENT naming a version
    whose data did not reach the disk. The version CURRENT named before stays (see `_prune`).
    """
    files = {}
    for path in sorted(staging.rglob("*")):
        if path.is_file():
            _fsync(path)
            files[str(path.relative_to(staging))] = {"sha256": sha256_of(path), "bytes": path.stat().st_size}
    manifest = {"format_version": FORMAT_VERSION, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                **info, "files": files}
    write_atomic(staging / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1))
    for folder in {p.parent for p in staging.rglob("*")} - {staging}:
        _fsync(folder)
    previous = _pointer(root)
    name = time.strftime("v%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    final = staging.parent / name
    os.replace(staging, final)
    try:
        _fsync(final.parent)
        write_atomic(root / "CURRENT", name + "\n")
    except BaseException:
        if _pointer(root) != name:  # not published (e.g. no room left for CURRENT): leave no orphan version behind
            shutil.rmtree(final, ignore_errors=True)
        raise
    _prune(root, keep={name, previous} - {None})
    _remember_verified(final, files)  # just checksummed: the first load need not hash the files again
    return final


def _pointer(root: Path) -> str | None:
    """The version name CURRENT holds, or None when there is none yet."""
    try:
        return (root / "CURRENT").read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def _prune(root: Path, keep: set[str]) -> None:
    """Remove versions other than `keep`: the new live one and the one it replaced (an app may still use it).

    Removal goes by the CURRENT pointer, never by file times, so the live version and its predecessor
    survive whatever the clock or a copy did to modification times.
    """
    for path in (root / "versions").iterdir():
        if path.is_dir() and not path.name.startswith(".") and path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)


def current_version(root: Path) -> Path:
    """The live version folder, or a clear error when there is none."""
    name = _pointer(root) if (root / "CURRENT").is_file() else None
    if name is None:
        raise IndexDirectoryError(f"{root} is not an index directory (no CURRENT file); build one with "
                                  f"`python -m recommender index CORPUS --out {root}`.")
    version = root / "versions" / name
    if not version.is_dir():
        raise IndexDirectoryError(f"{root}: CURRENT points to {version.name}, which is missing.")
    return version


def read_manifest(version: Path, verify: bool = True) -> dict:
    """The manifest of a version; with `verify`, every file's size and checksum is checked (a file unchanged since
    its checksum last matched is not hashed again: see `_remember_verified`)."""
    try:
        manifest = json.loads((version / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexDirectoryError(f"{version}: manifest unreadable ({exc}); rebuild the index.") from exc
    if manifest.get("format_version") not in READABLE_FORMATS:
        raise IndexDirectoryError(f"{version}: index format {manifest.get('format_version')} is not one this version "
                                  f"reads ({', '.join(map(str, READABLE_FORMATS))}); rebuild the index.")
    if verify:
        known = _verified_states(version)
        hashed = [name for name in manifest["files"] if not _unchanged(version / name, known.get(name))]
        for name in hashed:
            if not _matches(version / name, manifest["files"][name]):
                raise IndexDirectoryError(f"{version}: file {name} is missing or damaged (checksum mismatch); "
                                          "rebuild the index.")
        if hashed:
            _remember_verified(version, manifest["files"])
    return manifest


def is_intact(version: Path, name: str, manifest: dict) -> bool:
    """Whether the file `name` of `version` has the size and checksum its manifest records (as `read_manifest`
    checks them all: a file unchanged since its checksum last matched is not hashed again)."""
    facts, path = manifest["files"].get(name), version / name
    if facts is None:
        return False
    if _unchanged(path, _verified_states(version).get(name)):
        return True
    if not _matches(path, facts):
        return False
    _remember_verified(version, [name])
    return True


def _unchanged(path: Path, state: list[int] | None) -> bool:
    """Whether the file is as it was when its checksum last matched (`state`: what `_file_state` said then)."""
    return state is not None and path.is_file() and state == _file_state(path)


def _matches(path: Path, facts: dict) -> bool:
    """Whether the file has the size and checksum a manifest records for it."""
    return path.is_file() and path.stat().st_size == facts["bytes"] and sha256_of(path) == facts["sha256"]


def _file_state(path: Path) -> list[int]:
    """What changes whenever a file's content does: size, inode, modification and status-change times (the
    latter cannot be set back by any tool)."""
    stat = path.stat()
    return [stat.st_size, stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns]


def _verified_states(version: Path) -> dict[str, list[int]]:
    """The files of `version` whose checksums matched, with their state then ({} when none is recorded)."""
    try:
        record = json.loads((cache_dir(version.parent.parent) / VERIFIED).read_text(encoding="utf-8"))
        return record.get(version.name, {})
    except (OSError, ValueError, AttributeError):
        return {}


def _remember_verified(version: Path, names) -> None:
    """Record the state of the named files of `version`, whose checksums have just matched, so that later loads
    hash only files changed since (a file changed at all gets a new status-change time). Files changed in the
    last `SETTLED_S` seconds are left out: a change within the same tick of the file clock would go unseen.
    Best effort: an index on a read-only disk is simply verified in full each time."""
    root = version.parent.parent
    now = time.time_ns()
    states = {}
    for name in names:
        state = _file_state(version / name)
        if now - max(state[2], state[3]) > SETTLED_S * 1e9:
            states[name] = state
    try:
        record = json.loads((cache_dir(root) / VERIFIED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    live = {p.name for p in (root / "versions").iterdir()} if (root / "versions").is_dir() else set()
    record = {name: files for name, files in record.items() if name in live}
    if states:
        record[version.name] = {**record.get(version.name, {}), **states}
    try:
        cache_dir(root).mkdir(exist_ok=True)
        write_atomic(cache_dir(root) / VERIFIED, json.dumps(record))
    except OSError:
        pass
