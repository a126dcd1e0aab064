"""The Annoy files are built on disk (issue 13): the same bytes as Annoy's in-memory build, the permissions of the
index's other files, and nothing left behind when a build fails after one of them was written."""
import shutil
from pathlib import Path

import numpy as np
import pytest
from annoy import AnnoyIndex

from recommender.config import ANNOY_TREES
from recommender.paper import Paper
from recommender.store import versions
from recommender.store.index import Index
from recommender.store.build import build_index, write_annoy


def in_memory_annoy(path: Path, vectors: np.ndarray, n_jobs: int = -1) -> None:
    """The way the engine built its Annoy files before: in memory, then `save`."""
    annoy = AnnoyIndex(vectors.shape[1], "angular")
    for pos, vec in enumerate(vectors):
        annoy.add_item(pos, vec)
    annoy.build(ANNOY_TREES, n_jobs=n_jobs)
    annoy.save(str(path))
    annoy.unload()


def test_engine_annoy_files_are_the_in_memory_build_with_the_usual_permissions(small_index, tmp_path):
    index = Index.load(small_index, verify=False)
    try:
        fields = {"dense": np.array(index.dense), "multilingual": np.array(index.multilingual)}
    finally:
        index.close()
    version = versions.current_version(small_index)
    usual = (version / "papers.sqlite").stat().st_mode
    for name, vectors in fields.items():
        in_memory_annoy(tmp_path / f"{name}.ann", vectors)
        built = version / f"{name}.ann"
        assert built.read_bytes() == (tmp_path / f"{name}.ann").read_bytes(), name
        assert built.stat().st_mode == usual, (name, oct(built.stat().st_mode), oct(usual))


def test_on_disk_build_writes_the_same_trees_as_in_memory(tmp_path):
    # more items than fit in one leaf (dim + 2), so every tree splits; one thread, so the node order is fixed
    vectors = np.random.default_rng(7).standard_normal((700, 12)).astype(np.float32)
    write_annoy(tmp_path / "disk.ann", vectors, 12, n_jobs=1)
    in_memory_annoy(tmp_path / "memory.ann", vectors, n_jobs=1)
    assert (tmp_path / "disk.ann").read_bytes() == (tmp_path / "memory.ann").read_bytes()
    annoy = AnnoyIndex(12, "angular")
    annoy.load(str(tmp_path / "disk.ann"))
    try:
        assert annoy.get_n_trees() == ANNOY_TREES
        nearest = annoy.get_nns_by_vector(vectors[3], 10)
        assert nearest[0] == 3 and len(set(nearest)) == 10
    finally:
        annoy.unload()
    assert {p.name for p in tmp_path.iterdir()} == {"disk.ann", "memory.ann"}


def test_build_failing_after_an_annoy_file_leaves_nothing_behind(small_index, corpus_records, tmp_path):
    root = tmp_path / "idx"
    (root / "cache").mkdir(parents=True)
    shutil.copy(versions.embedding_cache_path(small_index), versions.embedding_cache_path(root))
    papers = [Paper.from_dict(r) for r in corpus_records]
    build_index(papers[:5], root, progress_bar=False)
    live = versions.current_version(root)
    seen = []

    def stop_at_second_field(stage: str, done: int, total: int) -> None:
        if stage == "nearest-neighbour index (multilingual)":
            staging = next((root / "versions").glob(".staging-*"))
            seen.append(sorted(p.name for p in staging.glob("*.ann")))
            raise RuntimeError("stopped after the dense Annoy file")

    with pytest.raises(RuntimeError, match="stopped after"):
        build_index(papers, root, multilingual=True, on_progress=stop_at_second_field, progress_bar=False)
    assert len(seen) == 1 and "dense.ann" in seen[0]  # the dense field's file had been written in the staging folder
    assert not list((root / "versions").glob(".staging-*"))
    assert versions.current_version(root) == live and len(Index.load(root)) == 5
