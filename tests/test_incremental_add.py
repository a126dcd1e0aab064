"""Small additions keep the clusters' centroids (issue 30): only the new papers are assigned, every search finds
them, rankings equal a full rebuild's, and the addition that passes `MERGE_SHARE` trains new clusters."""
import shutil
import sqlite3

import numpy as np
import pytest

from recommender.paper import Paper
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


def test_a_small_addition_keeps_the_centroids_and_the_old_papers_clusters(grown):
    folder, first = grown
    version = versions.current_version(folder / "grown")
    assert version != first
    old = Index(folder / "grown", first, versions.read_manifest(first))  # the version before the addition
    index, full = Index.load(folder / "grown"), Index.load(folder / "full")
    try:
        assert len(index) == 65 and index.manifest["clusters_trained_on"]["dense"] == 60
        assert np.array_equal(index.clusters.centroids, old.clusters.centroids)
        assert np.array_equal(index.clusters.cluster_of()[:60], old.clusters.cluster_of())
        assert np.array_equal(index.dense, full.dense)  # every paper's vector, the new ones too
    finally:
        for each in (old, index, full):
            each.close()


def test_new_papers_are_found_by_the_searches_that_use_the_clusters(grown, monkeypatch):
    folder, _ = grown
    monkeypatch.setattr(retrieve, "EXACT_SEARCH_SHARE", 2.0)  # search the clusters even in a corpus this small
    index = Index.load(folder / "grown")
    try:
        searcher = retrieve.DenseRetriever(index.dense, index.clusters)
        allowed = np.ones(len(index), dtype=bool)
        for pos in (0, 30, 62, 64):  # old and new papers
            assert searcher.search(np.asarray(index.dense[pos]), allowed, 5)[0] == pos
        exact = retrieve.top_positions(np.asarray(index.dense @ index.dense[63]), allowed, 5)
        assert searcher.search(np.asarray(index.dense[63]), allowed, 5).tolist() == exact.tolist()
    finally:
        index.close()


def test_rankings_equal_a_full_rebuilds(grown):
    folder, _ = grown
    for query in QUERIES:
        assert top10(folder / "grown", query) == top10(folder / "full", query)


def linked_papers(n: int) -> list[Paper]:
    """Papers that cite earlier and later ones, with venues, words and a retraction that first appear late."""
    papers = synthetic_papers(n)
    for i, paper in enumerate(papers):
        paper.references = [f"p{(i * 5) % n}", f"p{i + 3}", "outside"]
        paper.venue = f"Venue {i % (3 + i // 10)}"
        paper.abstract += f" Term{i // 4} appears."
    papers[-1].extra["is_retracted"] = True
    return papers


def test_an_addition_reads_only_the_new_papers_and_writes_what_a_full_build_writes(tmp_path, monkeypatch):
    papers = linked_papers(40)
    build_index(papers[:37], tmp_path / "grown", multilingual=True, progress_bar=False)
    with monkeypatch.context() as patch:
        patch.setattr(Index, "iter_papers", lambda self: pytest.fail("an old paper was read again"))
        assert add_to_index(papers[37:], tmp_path / "grown", progress_bar=False)[1] == 3
    cache = versions.embedding_cache_path(tmp_path / "full")  # the same vectors (int8 ones depend on their batch)
    cache.parent.mkdir(parents=True)
    shutil.copy(versions.embedding_cache_path(tmp_path / "grown"), cache)
    build_index(papers, tmp_path / "full", multilingual=True, progress_bar=False)
    grown, full = (versions.current_version(tmp_path / name) for name in ("grown", "full"))
    names = [name for name in versions.read_manifest(full)["files"]
             if name != "papers.sqlite" and not any(name.startswith(f"{field}.") and name.count(".") == 2
                                                   for field in ("dense", "multilingual"))]  # not the clusters
    assert {"bm25/document_terms.i32", "graph.cites.indices.npy", "multilingual.npy", "columns/venues.utf8.npy"} <= set(names)
    assert [name for name in names if (grown / name).read_bytes() != (full / name).read_bytes()] == []
    a, b = Index.load(tmp_path / "grown"), Index.load(tmp_path / "full")
    try:
        assert [p.to_dict() for p in a.all_papers()] == [p.to_dict() for p in b.all_papers()]
        assert sorted(a.graph.references_of(a.position["p36"]).tolist()) == [20, 39]  # p39: an added paper
    finally:
        a.close()
        b.close()


def test_an_index_that_does_not_keep_its_terms_is_read_again_by_an_addition(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    for name in ("document_terms.i32", "document_lengths.npy"):  # as a version built before they were kept
        (versions.current_version(root) / "bm25" / name).unlink()
    add_to_index(synthetic_papers(2, start=20), root, progress_bar=False)
    index = Index.load(root)
    try:
        assert len(index) == 22 and (index.version / "bm25" / "document_terms.i32").is_file()
        assert index.papers([21])[0].title == synthetic_papers(1, start=21)[0].title
    finally:
        index.close()


@pytest.mark.parametrize("damage", ["a record deleted", "an id changed"])
def test_an_addition_to_damaged_records_is_refused_and_changes_nothing(tmp_path, damage):
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    version = versions.current_version(root)
    if damage == "a record deleted":
        with sqlite3.connect(version / "papers.sqlite") as db:
            db.execute("DELETE FROM papers WHERE pos = 5")
    else:  # the new paper p20 would be taken for one already present
        ids = version / "columns" / "ids.utf8.npy"
        ids.write_bytes(ids.read_bytes().replace(b"p19", b"p20"))
    with pytest.raises(versions.IndexDirectoryError, match="damaged.*cannot be added to it; rebuild"):
        add_to_index(synthetic_papers(1, start=20), root, progress_bar=False)
    assert versions.current_version(root) == version and len(list((root / "versions").iterdir())) == 1


def test_an_index_whose_records_are_gone_is_refused_clearly(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    (versions.current_version(root) / "papers.sqlite").unlink()
    with pytest.raises(versions.IndexDirectoryError, match="cannot be loaded.*rebuild the index"):
        Index.load(root, verify=False)


def test_the_addition_past_the_share_trains_new_clusters(tmp_path):
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    add_to_index(synthetic_papers(2, start=20), root, progress_bar=False)  # 22 <= 110% of 20: kept
    assert versions.read_manifest(versions.current_version(root))["clusters_trained_on"]["dense"] == 20
    add_to_index(synthetic_papers(3, start=22), root, progress_bar=False)  # 25 > 110% of 20: trained anew
    index = Index.load(root)
    try:
        assert len(index) == 25 and index.manifest["clusters_trained_on"]["dense"] == 25
    finally:
        index.close()


def test_damaged_clusters_are_trained_anew_instead_of_kept(tmp_path):
    """An addition loads the live index without checking its files; the clusters it would keep are checked first."""
    root = tmp_path / "idx"
    build_index(synthetic_papers(20), root, progress_bar=False)
    live = versions.current_version(root) / "dense.centroids.npy"
    with open(live, "r+b") as centroids:  # one flipped byte inside the first centroid
        centroids.seek(200)
        byte = centroids.read(1)
        centroids.seek(200)
        centroids.write(bytes([byte[0] ^ 0xFF]))
    add_to_index(synthetic_papers(1, start=20), root, progress_bar=False)
    index = Index.load(root)  # every file checked against the new manifest
    try:
        assert len(index) == 21 and index.manifest["clusters_trained_on"]["dense"] == 21
    finally:
        index.close()
