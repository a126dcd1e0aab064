"""On-disk layout of an index directory: immutable versions, an atomic CURRENT pointer, a manifest.

    DIR/CURRENT            name of the live version (replaced atomically)
    DIR/versions/<name>/   one complete index; never modified once published
    DIR/cache/             embedding cache shared by all versions
A build writes a new version under a temporary name and publishes it only when complete,
so a crash or kill at any moment leaves the previous version answering.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
KEEP_OLD_VERSIONS = 1


class IndexError_(RuntimeError):
    """An index directory that is missing, incomplete or damaged."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_dir(root: Path) -> Path:
    return root / "cache"


def new_staging_dir(root: Path) -> Path:
    """A fresh private folder for a version under construction; stale ones from crashed builds are removed."""
    versions = root / "versions"
    versions.mkdir(parents=True, exist_ok=True)
    for stale in versions.glob(".staging-*"):
        shutil.rmtree(stale, ignore_errors=True)
    staging = versions / f".staging-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    return staging


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def publish(root: Path, staging: Path, info: dict) -> Path:
    """Write the manifest (checksums of every file), move the version in place and point CURRENT at it."""
    files = {str(p.relative_to(staging)): {"sha256": sha256_of(p), "bytes": p.stat().st_size}
             for p in sorted(staging.rglob("*")) if p.is_file()}
    manifest = {"format_version": FORMAT_VERSION, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                **info, "files": files}
    write_json_atomic(staging / MANIFEST, manifest)
    name = time.strftime("v%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    final = staging.parent / name
    os.replace(staging, final)
    _fsync_dir(final.parent)
    pointer = root / "CURRENT"
    tmp = root / f".CURRENT.{uuid.uuid4().hex[:6]}.tmp"
    tmp.write_text(name + "\n", encoding="utf-8")
    os.replace(tmp, pointer)
    _fsync_dir(root)
    _prune(root, keep={name})
    return final


def _prune(root: Path, keep: set[str]) -> None:
    """Remove old versions beyond the most recent ones (a running app keeps its open files)."""
    old = sorted((p for p in (root / "versions").iterdir() if p.is_dir() and not p.name.startswith(".")
                  and p.name not in keep), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in old[KEEP_OLD_VERSIONS:]:
        shutil.rmtree(path, ignore_errors=True)


def current_version(root: Path) -> Path:
    """The live version folder, or a clear error when there is none."""
    pointer = root / "CURRENT"
    if not pointer.is_file():
        raise IndexError_(f"{root} is not an index directory (no CURRENT file); build one with "
                          f"`python -m recommender index CORPUS --out {root}`.")
    version = root / "versions" / pointer.read_text(encoding="utf-8").strip()
    if not version.is_dir():
        raise IndexError_(f"{root}: CURRENT points to {version.name}, which is missing.")
    return version


def read_manifest(version: Path, verify: bool = True) -> dict:
    """The manifest of a version; with `verify`, every file's size and checksum is checked."""
    try:
        manifest = json.loads((version / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexError_(f"{version}: manifest unreadable ({exc}); rebuild the index.") from exc
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IndexError_(f"{version}: index format {manifest.get('format_version')} is not "
                          f"{FORMAT_VERSION}; rebuild the index.")
    if verify:
        for name, facts in manifest["files"].items():
            path = version / name
            if not path.is_file() or path.stat().st_size != facts["bytes"] or sha256_of(path) != facts["sha256"]:
                raise IndexError_(f"{version}: file {name} is missing or damaged (checksum mismatch); "
                                  "rebuild the index.")
    return manifest
