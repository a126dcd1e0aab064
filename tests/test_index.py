import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from recommender.store import versions
from recommender.pipeline.retracted import RetractedPapers
from recommender.store.index import Index
from recommender.store.build import add_to_index, build_index
from support.corpora import synthetic_papers
from support.processes import kill, wait_for_marker

PROJECT = Path(__file__).resolve().parents[1]


def embedding_totals(calls):
    return [total for stage, done, total in calls if stage.startswith("embedding (all-MiniLM")]


def test_build_publishes_a_verified_version_and_loads(small_index, corpus_records):
    version = versions.current_version(small_index)
    manifest = versions.read_manifest(version)
    assert manifest["papers"] == len(corpus_records)
    assert manifest["edges"] == sum(len(r["references"]) for r in corpus_records)
    assert {"papers.sqlite", "dense.npy", "dense.codes.npy", "graph.cites.indptr.npy",
            "graph.cited_by.indices.npy", "columns/ids.utf8.npy"} <= set(manifest["files"])
    assert set(manifest["clusters_trained_on"].values()) == {len(corpus_records)}
    assert manifest["bm25"]["k1"] > 0 and "the" in manifest["bm25"]["stopwords"]  # the analyzer is on record
    index = Index.load(small_index)
    assert len(index) == len(corpus_records)
    assert index.papers([index.position["ir3"]])[0].title == corpus_records[9]["title"]
    assert np.allclose(np.linalg.norm(index.dense, axis=1), 1.0, atol=1e-3)


def test_damaged_index_fails_with_a_clear_message(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    version = versions.current_version(root)
    with open(version / "dense.npy", "r+b") as handle:
        handle.seek(200)
        handle.write(b"\xff\xff\xff\xff")
    with pytest.raises(versions.IndexDirectoryError, match="dense.npy is missing or damaged"):
        Index.load(root)
    with pytest.raises(versions.IndexDirectoryError, match="not an index directory"):
        Index.load(tmp_path / "nothing")


def test_files_verified_once_are_hashed_again_only_when_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(versions, "SETTLED_S", 0.0)  # record the files the build just wrote
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    hashed = []
    real_sha256 = versions.sha256_of
    monkeypatch.setattr(versions, "sha256_of", lambda path: hashed.append(path.name) or real_sha256(path))
    assert len(Index.load(root)) == 20 and hashed == []  # checksummed by the build: nothing to hash again
    version = versions.current_version(root)
    damaged = bytearray((version / "dense.npy").read_bytes())
    damaged[200:204] = b"\xff\xff\xff\xff"
    (version / "dense.new").write_bytes(damaged)
    os.replace(version / "dense.new", version / "dense.npy")  # same size, other content
    with pytest.raises(versions.IndexDirectoryError, match="dense.npy is missing or damaged"):
        Index.load(root)
    assert hashed == ["dense.npy"]


def test_author_table_is_built_on_the_first_lookup_only(tmp_path):
    papers = synthetic_papers(6)
    for paper, names in zip(papers, [["Ada Lovelace"], ["A. Lovelace", "Alan Turing"], ["Lovelace, Ada"],
                                     ["Grace Hopper"], [], ["Ünal Çelik", "Turing, A."]]):
        paper.authors = names
    root = tmp_path / "idx"
    build_index(papers, root, progress_bar=False)
    index = Index.load(root)
    assert "table" not in vars(index.by_author)  # opening the index, or asking for the mapping, builds nothing
    assert index.by_author.get("lovelace_a").tolist() == [0, 1, 2]
    assert index.by_author["turing_a"].tolist() == [1, 5] and index.by_author["celik_u"].tolist() == [5]
    assert index.by_author.get("nobody_x") is None and "hopper_g" in index.by_author and len(index.by_author) == 4


def test_add_reuses_cached_embeddings_and_keeps_old_papers(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(30), root, progress_bar=False)
    calls = []
    _, added = add_to_index(synthetic_papers(5, start=30) + synthetic_papers(2), root,
                            on_progress=lambda *c: calls.append(c), progress_bar=False)
    assert added == 5
    assert embedding_totals(calls)[-1] == 5  # only the new papers were embedded
    index = Index.load(root)
    assert len(index) == 35 and "p0" in index.position and "p34" in index.position


def test_killed_build_leaves_the_live_index_and_resumes(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(10), root, progress_bar=False)
    live = versions.current_version(root).name
    marker = tmp_path / "chunk-saved"
    script = (
        "import sys; sys.path[:0] = [%r, %r]\n"
        "from support.corpora import synthetic_papers\n"
        "from support.processes import pause_here\n"
        "from recommender.store.build import build_index\n"
        "def progress(stage, done, total):\n"
        "    if stage.startswith('embedding') and done >= 256:\n"
        "        pause_here(%r)  # a chunk of the new papers is in the cache: to be killed here\n"
        "build_index(synthetic_papers(1500), %r, on_progress=progress, progress_bar=False)\n"
    ) % (str(PROJECT), str(PROJECT / "tests"), str(marker), str(root))
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE)
    try:
        wait_for_marker(marker, proc, "its first chunk of new embeddings")
        with sqlite3.connect(versions.embedding_cache_path(root)) as db:
            assert db.execute("SELECT COUNT(*) FROM emb").fetchone()[0] >= 10 + 256
        assert proc.poll() is None, "the build finished before it could be killed"
    finally:
        kill(proc)
    assert versions.current_version(root).name == live
    assert len(Index.load(root)) == 10  # the previous version still answers
    calls = []
    build_index(synthetic_papers(1500), root, on_progress=lambda *c: calls.append(c), progress_bar=False)
    assert embedding_totals(calls)[-1] <= 1500 - 256  # finished chunks were not embedded again
    assert len(Index.load(root)) == 1500
    assert not list((root / "versions").glob(".staging-*"))


def test_failed_build_removes_its_staging_folder(tmp_path):
    root = tmp_path / "idx"
    with pytest.raises(ValueError):
        build_index([], root, progress_bar=False)
    bad = synthetic_papers(3)
    bad[1].abstract = None  # not text: embedding fails mid-build
    with pytest.raises(Exception):
        build_index(bad, root, progress_bar=False)
    assert not list((root / "versions").glob(".staging-*"))
    assert not (root / "CURRENT").exists()


def version_names(root: Path) -> set[str]:
    return {p.name for p in (root / "versions").iterdir()}


def test_adding_nothing_new_publishes_nothing(tmp_path):
    root = tmp_path / "idx"
    first = build_index(synthetic_papers(6), root, progress_bar=False)
    for again in (synthetic_papers(6), [], synthetic_papers(2)):  # nothing new, three times over
        live, added = add_to_index(again, root, progress_bar=False)
        assert (live, added) == (first, 0)
    assert versions.current_version(root) == first and version_names(root) == {first.name}
    _, added = add_to_index(synthetic_papers(2, start=6) * 2, root, progress_bar=False)  # repeated ids: once
    assert added == 2 and len(Index.load(root)) == 8


def test_publishing_keeps_the_live_version_and_the_one_it_replaced(tmp_path):
    root = tmp_path / "idx"
    first = build_index(synthetic_papers(4), root, progress_bar=False)
    second = build_index(synthetic_papers(5), root, progress_bar=False)
    os.utime(first, (time.time() + 3600, time.time() + 3600))  # a clock or copy that makes the oldest look newest
    stray = root / "versions" / "v19990101-000000-abcdef"  # e.g. left by an older release
    stray.mkdir()
    third = build_index(synthetic_papers(6), root, progress_bar=False)
    assert version_names(root) == {second.name, third.name}  # by the CURRENT pointer, not by file times
    assert versions.current_version(root) == third and len(Index.load(root)) == 6


def test_a_second_build_stops_or_waits_while_the_lock_is_held(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(3), root, progress_bar=False)
    live = versions.current_version(root)
    held, release = threading.Event(), threading.Event()

    def other_build():  # holds the lock the way a running build does, from another thread
        with versions.build_lock(root):
            held.set()
            release.wait()

    thread = threading.Thread(target=other_build)
    thread.start()
    held.wait()
    try:
        with pytest.raises(versions.IndexBusyError, match="another build of this index is running"):
            build_index(synthetic_papers(4), root, progress_bar=False)
        with pytest.raises(versions.IndexBusyError, match=r"running \(waited 0.2 s\)"):
            add_to_index(synthetic_papers(2, start=3), root, progress_bar=False, wait=0.2)
    finally:
        release.set()
        thread.join()
    assert versions.current_version(root) == live and not list((root / "versions").glob(".staging-*"))
    _, added = add_to_index(synthetic_papers(2, start=3), root, progress_bar=False)  # free again
    assert added == 2


def test_write_atomic_replaces_whole_files_and_leaves_no_debris(tmp_path):
    target = tmp_path / "model.bin"
    versions.write_atomic(target, b"old")
    versions.write_atomic(target, "new text ✓")
    assert target.read_text(encoding="utf-8") == "new text ✓"
    versions.write_atomic(target, lambda handle: np.save(handle, np.arange(3)))
    assert np.load(target).tolist() == [0, 1, 2]

    def fails_half_way(handle):
        handle.write(b"partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        versions.write_atomic(target, fails_half_way)
    assert np.load(target).tolist() == [0, 1, 2] and [p.name for p in tmp_path.iterdir()] == ["model.bin"]


def test_records_flagged_retracted_are_a_column_read_without_the_records(tmp_path, monkeypatch):
    papers = synthetic_papers(4)
    papers[1].extra["is_retracted"] = True
    papers[2].extra["is_retracted"] = "1"  # not a flag: a string
    papers[3].extra["is_retracted"] = False
    build_index(papers, tmp_path / "idx", progress_bar=False)
    index = Index.load(tmp_path / "idx")
    try:
        assert index.flagged_retracted.tolist() == [1]
        monkeypatch.setattr(Index, "record_fields", lambda *_: pytest.fail("the records were read"))
        assert RetractedPapers(index, store=None).flagged == {1}
    finally:
        index.close()
