"""Small additions keep the Annoy forests (issue 30): the new papers are searched exactly beside them, rankings
equal a full rebuild's, and the addition that passes `MERGE_SHARE` builds new forests over all papers."""
import shutil

import numpy as np
import pytest

from recommender.pipeline import retrieve
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store import versions
from recommender.store.build import MERGE_SHARE, add_to_index, build_index
from recommender.store.index import Index
from support.corpora import synthetic_papers

QUERIES = [Query(title="Study of protein folding", abstract="We report experiment number 64 on protein folding."),
           Query(title="Speech", abstract="An experiment on speech with method 3."),
           Query(context="Robotics with method 5 [CIT] was reported in experiment 61.")]


def top10(root, query):
    recommender = Recommender.load(root)
    try:
        return [(r.paper_id, r.score) for r in recommender.recommend(query).recommendations]
    finally:
        recommender.index.close()


@pytest.fixture(scope="module")
def grown(tmp_path_factory):
    """An index of 60 papers grown by 5 (within the share), and a full build of the same 65."""
    folder = tmp_path_factory.mktemp("incremental")
    build_index(synthetic_papers(60), folder / "grown", progress_bar=False)
    first = versions.current_version(folder / "grown")
    _, added = add_to_index(synthetic_papers(5, start=60), folder / "grown", progress_bar=False)
    assert added == 5 and 5 <= MERGE_SHARE * 60
    cache = versions.embedding_cache_path(folder / "full")  # the same vectors (int8 ones depend on their batch)
    cache.parent.mkdir(parents=True)
    shutil.copy(versions.embedding_cache_path(folder / "grown"), cache)
    build_index(synthetic_papers(65), folder / "full", progress_bar=False)
    return folder, first


def test_a_small_addition_links_the_forest_and_keeps_every_vector(grown):
    folder, first = grown
    version = versions.current_version(folder / "grown")
    assert version != first
    assert (version / "dense.ann").stat().st_ino == (first / "dense.ann").stat().st_ino  # not rebuilt: linked
    index, full = Index.load(folder / "grown"), Index.load(folder / "full")
    try:
        assert len(index) == 65 and index.annoy.get_n_items() == 60
        assert np.array_equal(index.dense, full.dense)  # the .npy copy holds the new papers' vectors too
    finally:
        index.close()
        full.close()


def test_papers_outside_the_forest_are_found_by_the_searches_that_use_it(grown, monkeypatch):
    folder, _ = grown
    monkeypatch.setattr(retrieve, "EXACT_SEARCH_RATIO", 0)  # search the forest even in a corpus this small
    index = Index.load(folder / "grown")
    try:
        searcher = retrieve.DenseRetriever(index.dense, index.annoy)
        allowed = np.ones(len(index), dtype=bool)
        for pos in (0, 30, 62, 64):  # inside and outside the forest
            assert searcher.search(np.asarray(index.dense[pos]), allowed, 5)[0] == pos
        exact = retrieve.top_positions(np.asarray(index.dense @ index.dense[63]), allowed, 5)
        assert searcher.search(np.asarray(index.dense[63]), allowed, 5).tolist() == exact.tolist()
    finally:
        index.close()


def test_rankings_equal_a_full_rebuilds(grown):
    folder, _ = grown
    for query in QUERIES:
        assert top10(folder / "grown", query) == top10(folder / "full", query)


def test_the_addition_past_the_share_builds_new_forests(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    add_to_index(synthetic_papers(2, start=20), root, progress_bar=False)  # 2 <= 10% of 20: kept
    kept = versions.current_version(root)
    assert (kept / "dense.npy").is_file()
    add_to_index(synthetic_papers(3, start=22), root, progress_bar=False)  # 5 outside > 10% of 20: rebuilt
    merged = versions.current_version(root)
    assert not (merged / "dense.npy").is_file()
    index = Index.load(root)
    try:
        assert len(index) == 25 and index.annoy.get_n_items() == 25
    finally:
        index.close()


def test_a_damaged_forest_is_built_anew_instead_of_linked(tmp_path):
    """An addition loads the live index without checking its files; the forest it would link is checked first."""
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    live = versions.current_version(root) / "dense.ann"
    with open(live, "r+b") as forest:  # one flipped byte inside the first item's vector
        forest.seek(100)
        byte = forest.read(1)
        forest.seek(100)
        forest.write(bytes([byte[0] ^ 0xFF]))
    add_to_index(synthetic_papers(1, start=20), root, progress_bar=False)
    version = versions.current_version(root)
    assert (version / "dense.ann").stat().st_ino != live.stat().st_ino
    index = Index.load(root)  # every file checked against the new manifest
    try:
        assert len(index) == 21 and index.annoy.get_n_items() == 21
    finally:
        index.close()
