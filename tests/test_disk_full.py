"""A build that fills its disk, on a small tmpfs of its own: `python -m recommender index` as a user runs it.

It must stop with a message that says the disk is full (where, what is free, that the live index is unchanged),
not a traceback; leave the live version byte for byte as it was, still answering; leave no staging folder
taking space; and, once space is freed, the same command must finish without embedding again the texts whose
embeddings reached the cache before the failure (their cache rows keep their rowids: `INSERT OR REPLACE` of a
text embedded again would give it a new one).

Mounting needs root where `mount -t tmpfs` is allowed; elsewhere (most CI containers) the tests are skipped.
"""
from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from recommender import Query, Recommender
from recommender.embedding.cache import CHUNK_SIZE
from recommender.store import versions
from recommender.store.index import Index

from support.corpora import synthetic_papers

PROJECT = Path(__file__).resolve().parents[1]
TESTS = PROJECT / "tests"
KIB = 1024


def _mount(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def small_disk(tmp_path):
    """`small_disk(size_kib)`: a fresh tmpfs of that size (a folder), unmounted at the end; `small_disk.resize(path,
    size_kib)` remounts it with another size, keeping its files. Skips where a tmpfs cannot be mounted."""
    mounted: list[Path] = []

    def mount(size_kib: int) -> Path:
        point = tmp_path / f"disk-{len(mounted)}"
        point.mkdir()
        if shutil.which("mount") is None:
            pytest.skip("no `mount` command here: the disk-full tests fill a tmpfs of their own")
        done = _mount(["-t", "tmpfs", "-o", f"size={size_kib}k,mode=0755", "tmpfs", str(point)])
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root where mounting is allowed: "
                        f"{(done.stderr or done.stdout).strip() or 'mount failed'}); the disk-full tests need one")
        mounted.append(point)
        return point

    def resize(point: Path, size_kib: int) -> None:
        done = _mount(["-o", f"remount,size={size_kib}k", str(point)])
        assert done.returncode == 0, done.stderr

    mount.resize = resize
    try:
        yield mount
    finally:
        gc.collect()  # drop memory maps of the index files, which keep a file system busy
        for point in reversed(mounted):
            if subprocess.run(["umount", str(point)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(point)], capture_output=True)  # detached now, freed when unused


def write_corpus(path: Path, n: int) -> Path:
    """Papers p0 .. p{n-1}: a bigger corpus holds every paper of a smaller one, with the same texts."""
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in synthetic_papers(n)), encoding="utf-8")
    return path


def index_command(corpus: Path, root: Path, fill_disk_after_first_chunk: Path | None = None) -> list[str]:
    """`python -m recommender index CORPUS --out ROOT`; with `fill_disk_after_first_chunk`, the same `__main__` in a
    process that, once the first chunk of new embeddings is committed to the cache, fills the disk by writing that
    file (as another program could), then goes on."""
    args = ["index", str(corpus), "--out", str(root)]
    if fill_disk_after_first_chunk is None:
        return [sys.executable, "-m", "recommender", *args]
    script = (f"import runpy, sys\n"
              f"sys.argv[1:] = {args!r}\n"
              "from recommender.embedding.cache import EmbeddingCache\n"
              "put_many, filled = EmbeddingCache.put_many, []\n"
              "def put_many_then_fill(self, items):\n"
              "    put_many(self, items)\n"
              "    if not filled:\n"
              "        filled.append(True)\n"
              f"        with open({str(fill_disk_after_first_chunk)!r}, 'wb', buffering=0) as filler:\n"
              "            for block in (1 << 16, 1 << 12):  # up to the last page\n"
              "                try:\n"
              "                    while True:\n"
              "                        filler.write(bytes(block))\n"
              "                except OSError:\n"
              "                    pass\n"
              "EmbeddingCache.put_many = put_many_then_fill\n"
              "runpy.run_module('recommender', run_name='__main__', alter_sys=True)\n")
    return [sys.executable, "-c", script]


def run(command: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join([str(PROJECT), str(TESTS)])}
    return subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=300, env=env)


def snapshot(root: Path) -> dict[str, str]:
    """CURRENT and the checksum of every file of the live version."""
    live = versions.current_version(root)
    files = {"CURRENT": (root / "CURRENT").read_text(encoding="utf-8")}
    for path in sorted(live.rglob("*")):
        if path.is_file():
            files[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def cached_rows(root: Path) -> dict[str, int]:
    """The embedding cache's text keys and their rowids."""
    with sqlite3.connect(versions.embedding_cache_path(root)) as db:
        return dict(db.execute("SELECT key, rowid FROM emb"))


def paper_count(root: Path) -> int:
    index = Index.load(root)
    try:
        return len(index)
    finally:
        index.close()


def assert_failed_cleanly(proc: subprocess.CompletedProcess, root: Path, live: dict[str, str]) -> None:
    """A nonzero exit with the disk-full message, the live version untouched and answering, no staging left."""
    assert proc.returncode == 2, f"exit {proc.returncode} (a negative one is a signal: -7 is SIGBUS)\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    message = proc.stderr.strip().splitlines()[-1]
    assert message.startswith(f"error: {root}: the disk is full ("), message
    name = live["CURRENT"].strip()
    assert f"the live index (version {name}) is unchanged" in message, message
    assert "free" in message and "run the same command again to resume" in message, message
    assert snapshot(root) == live  # CURRENT and every file of the live version, byte for byte
    assert not list((root / "versions").glob(".staging-*"))
    assert [p.name for p in (root / "versions").iterdir()] == [name]
    index = Index.load(root, verify=True)
    try:
        results = list(Recommender(index).recommend(Query(title="A study of retrieval", k=3)))
        assert len(results) == 3
    finally:
        index.close()


def test_a_build_too_big_for_its_disk_stops_cleanly_and_the_same_command_resumes(tmp_path, small_disk):
    disk = small_disk(2 * KIB)  # 20 papers take about 0.5 MiB; 1,000 need over 5 (the cache's 2+, the vectors' 2)
    root = disk / "idx"
    small, big = write_corpus(tmp_path / "small.jsonl", 20), write_corpus(tmp_path / "big.jsonl", 1000)
    assert "indexed 20 papers" in run(index_command(small, root)).stdout
    live = snapshot(root)

    proc = run(index_command(big, root))
    assert_failed_cleanly(proc, root, live)
    kept = cached_rows(root)  # whatever reached the cache before the disk filled up (the 20 at least)
    assert len(kept) >= 20

    small_disk.resize(disk, 64 * KIB)  # space freed
    proc = run(index_command(big, root))
    assert proc.returncode == 0 and "indexed 1000 papers" in proc.stdout, proc.stderr
    after = cached_rows(root)
    assert len(after) == 1000
    assert {key: after[key] for key in kept} == kept  # saved before the failure: not embedded again
    assert paper_count(root) == 1000 and not list((root / "versions").glob(".staging-*"))


def test_an_addition_without_room_for_its_copy_of_the_live_version_stops_cleanly_and_resumes(tmp_path, small_disk):
    """`--add` starts from copies of the live version's files: a disk that cannot hold them says so."""
    disk = small_disk(64 * KIB)
    root = disk / "idx"
    assert "indexed 200 papers" in run(index_command(write_corpus(tmp_path / "first.jsonl", 200), root)).stdout
    live = snapshot(root)
    small_disk.resize(disk, shutil.disk_usage(disk).used // KIB + 64)  # room for the new papers, not for a copy
    add = [*index_command(write_corpus(tmp_path / "all.jsonl", 205), root), "--add"]
    assert_failed_cleanly(run(add), root, live)

    small_disk.resize(disk, 64 * KIB)  # space freed
    proc = run(add)
    assert proc.returncode == 0 and "added 5 papers" in proc.stdout, proc.stderr
    assert paper_count(root) == 205 and not list((root / "versions").glob(".staging-*"))


def test_embeddings_saved_before_the_disk_filled_up_are_not_computed_again(tmp_path, small_disk):
    disk = small_disk(16 * KIB)
    root = disk / "idx"
    small, big = write_corpus(tmp_path / "small.jsonl", 20), write_corpus(tmp_path / "big.jsonl", 600)
    assert "indexed 20 papers" in run(index_command(small, root)).stdout
    live = snapshot(root)
    before = cached_rows(root)

    filler = disk / "filler"
    proc = run(index_command(big, root, fill_disk_after_first_chunk=filler))
    assert filler.stat().st_size > 4 * KIB * KIB  # the disk was filled mid-build, not before
    assert_failed_cleanly(proc, root, live)
    kept = cached_rows(root)
    assert len(kept) == len(before) + CHUNK_SIZE and kept.items() >= before.items()  # the first chunk of new texts

    filler.unlink()  # space freed
    proc = run(index_command(big, root))
    assert proc.returncode == 0 and "indexed 600 papers" in proc.stdout, proc.stderr
    after = cached_rows(root)
    assert len(after) == 600 and {key: after[key] for key in kept} == kept  # only the others were embedded
    assert paper_count(root) == 600 and not list((root / "versions").glob(".staging-*"))


def test_no_room_for_the_nearest_neighbour_index_is_a_clean_error_not_a_crash(tmp_path, small_disk):
    """Every text is in the cache already, so the build gets to the vector file, which is what does not fit."""
    disk = small_disk(8 * KIB)
    root = disk / "idx"
    corpus = write_corpus(tmp_path / "corpus.jsonl", 600)
    assert "indexed 600 papers" in run(index_command(corpus, root)).stdout  # the vectors: about 0.9 MiB
    live = snapshot(root)
    filler = disk / "filler"
    room = 700 * KIB  # the records, columns, BM25 and graph of 600 papers fit (about 0.35 MiB); the vectors not
    with open(filler, "wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, shutil.disk_usage(disk).free - room)

    proc = run(index_command(corpus, root))
    assert_failed_cleanly(proc, root, live)
    assert "the vector file needs about" in proc.stderr

    filler.unlink()
    proc = run(index_command(corpus, root))
    assert proc.returncode == 0 and "indexed 600 papers" in proc.stdout, proc.stderr
    assert not list((root / "versions").glob(".staging-*"))


def test_is_disk_full_knows_the_errors_a_full_disk_raises(tmp_path):
    assert versions.is_disk_full(OSError(errno.ENOSPC, "No space left on device", "x.npy"))
    assert versions.is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert versions.is_disk_full(OSError("Unable to open: No space left on device (28)"))  # a library's message, no errno
    full = sqlite3.OperationalError("database or disk is full")
    assert versions.is_disk_full(full)
    try:
        try:
            raise full
        except sqlite3.OperationalError as exc:
            raise RuntimeError("while saving embeddings") from exc
    except RuntimeError as exc:
        assert versions.is_disk_full(exc)
    assert not versions.is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not versions.is_disk_full(sqlite3.OperationalError("database is locked"))
    assert not versions.is_disk_full(ValueError("no papers"))


def test_a_disk_full_build_leaves_as_a_clear_error_and_removes_its_staging(tmp_path):
    """Without a full disk: what `build_lock` does with a build that raised a disk-full error."""
    root = tmp_path / "idx"
    with pytest.raises(versions.DiskFullError) as caught:
        with versions.build_lock(root):
            staging = versions.new_staging_dir(root)
            (staging / "papers.sqlite").write_bytes(b"x" * 1000)
            raise sqlite3.OperationalError("database or disk is full")
    message = str(caught.value)
    assert message.startswith(f"{root}: the disk is full (") and "database or disk is full" in message
    assert "there was no live index there, and there still is none" in message
    assert not list((root / "versions").glob(".staging-*"))
    with pytest.raises(ValueError):  # other errors pass through as they are
        with versions.build_lock(root):
            raise ValueError("no papers")


def test_publish_leaves_no_orphan_version_when_current_cannot_be_written(tmp_path, monkeypatch):
    root = tmp_path / "idx"
    staging = versions.new_staging_dir(root)
    (staging / "data").write_text("x")
    real_write = versions.write_atomic

    def no_room_for_current(path, content):
        if Path(path).name == "CURRENT":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real_write(path, content)

    monkeypatch.setattr(versions, "write_atomic", no_room_for_current)
    with pytest.raises(OSError):
        versions.publish(root, staging, {})
    assert not (root / "CURRENT").exists() and list((root / "versions").iterdir()) == []


def test_reserve_space_sets_space_aside_or_says_what_is_needed(tmp_path, small_disk):
    disk = small_disk(2 * KIB)
    path = disk / f"{uuid.uuid4().hex}.npy"
    path.touch()
    versions.reserve_space(path, 1024 * KIB, "the test file")
    assert path.stat().st_size == 0  # set aside beyond its end: the size is the writer's to set
    assert shutil.disk_usage(disk).free <= 1024 * KIB  # the space is taken
    other = disk / "other"
    other.touch()
    with pytest.raises(versions.DiskFullError) as caught:
        versions.reserve_space(other, 4 * KIB * KIB, "the nearest-neighbour index")
    assert "the nearest-neighbour index needs about 4.0 MiB" in str(caught.value) and caught.value.needed == 4 << 20
    path.unlink()
    assert shutil.disk_usage(disk).free > 1900 * KIB  # removing the file gives the space back

