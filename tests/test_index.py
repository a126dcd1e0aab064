import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from recommender import index_files
from recommender.index import Index, add_to_index, build_index
from recommender.paper import Paper

PROJECT = Path(__file__).resolve().parents[1]


def synthetic_papers(n: int, start: int = 0) -> list[Paper]:
    topics = ["retrieval", "citation graphs", "protein folding", "image segmentation", "speech", "robotics"]
    return [Paper(id=f"p{i}", title=f"Study {i} of {topics[i % len(topics)]}",
                  abstract=f"We report experiment number {i} on {topics[i % len(topics)]} with method {i * 7 % 13}.",
                  authors=[f"Author {i % 11}"], year=2000 + i % 20) for i in range(start, start + n)]


def embedding_totals(calls):
    return [total for stage, done, total in calls if stage.startswith("embedding (all-MiniLM")]


def test_build_publishes_a_verified_version_and_loads(small_index, corpus_records):
    version = index_files.current_version(small_index)
    manifest = index_files.read_manifest(version)
    assert manifest["papers"] == len(corpus_records)
    assert manifest["edges"] == sum(len(r["references"]) for r in corpus_records)
    assert {"papers.sqlite", "dense.npy", "dense.ann", "graph.npz", "meta.json"} <= set(manifest["files"])
    index = Index.load(small_index)
    assert len(index) == len(corpus_records)
    assert index.papers([index.position["ir3"]])[0].title == corpus_records[9]["title"]
    assert np.allclose(np.linalg.norm(index.dense, axis=1), 1.0, atol=1e-3)


def test_damaged_index_fails_with_a_clear_message(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    version = index_files.current_version(root)
    with open(version / "dense.npy", "r+b") as handle:
        handle.seek(200)
        handle.write(b"\xff\xff\xff\xff")
    with pytest.raises(index_files.IndexError_, match="dense.npy is missing or damaged"):
        Index.load(root)
    with pytest.raises(index_files.IndexError_, match="not an index directory"):
        Index.load(tmp_path / "nothing")


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
    live = index_files.current_version(root).name
    script = (
        "import sys; sys.path[:0] = [%r, %r]\n"
        "from test_index import synthetic_papers\n"
        "from recommender.index import build_index\n"
        "build_index(synthetic_papers(1500), %r, progress_bar=False)\n"
    ) % (str(PROJECT), str(PROJECT / "tests"), str(root))
    proc = subprocess.Popen([sys.executable, "-c", script])
    cache = root / "cache" / "embeddings.sqlite"
    deadline = time.time() + 120
    cached = 0
    while time.time() < deadline and proc.poll() is None:
        with sqlite3.connect(cache) as db:
            cached = db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]
        if cached >= 10 + 256:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the build finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert index_files.current_version(root).name == live
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
