"""The clusters' files: the permissions of the index's other files, and nothing left behind when a build fails after
one field's files were written."""
import shutil

import pytest

from recommender.paper import Paper
from recommender.store import clusters, versions
from recommender.store.index import Index
from recommender.store.build import build_index


def test_cluster_files_have_the_usual_permissions(small_index):
    version = versions.current_version(small_index)
    usual = (version / "papers.sqlite").stat().st_mode
    for field in ("dense", "multilingual"):
        for name in [f"{field}.npy", *clusters.file_names(field)]:
            assert (version / name).stat().st_mode == usual, (name, oct((version / name).stat().st_mode), oct(usual))


def test_build_failing_after_a_fields_clusters_leaves_nothing_behind(small_index, corpus_records, tmp_path):
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
            seen.append(sorted(p.name for p in staging.glob("dense.*")))
            raise RuntimeError("stopped after the dense field's clusters")

    with pytest.raises(RuntimeError, match="stopped after"):
        build_index(papers, root, multilingual=True, on_progress=stop_at_second_field, progress_bar=False)
    assert len(seen) == 1 and "dense.codes.npy" in seen[0]  # the dense field's files were in the staging folder
    assert not list((root / "versions").glob(".staging-*"))
    assert versions.current_version(root) == live and len(Index.load(root)) == 5
