"""Index format 4: vectors stored once and searched by their clusters, columns mapped, not parsed."""
import json
import shutil

import numpy as np
import pytest
from scipy import sparse

from recommender.paper import Paper
from recommender.pipeline import retrieve
from recommender.pipeline.retrieve import DenseRetriever, top_positions
from recommender.store import columns as columns_module
from recommender.store import versions
from recommender.store import clusters as clusters_module
from recommender.store import graph as graph_module
from recommender.store.columns import Columns, read_columns, write_columns
from recommender.store.index import Index
from recommender.store.build import build_index, date_key

ODD_PAPERS = [
    Paper(id="w1", title="Zitationsempfehlung für Übersichtsarbeiten", authors=["Jörg Müller", "李 明"],
          venue="SIGIR", year=2021, extra={"doi": "10.1/abc", "date": "2021-07-11"}),
    Paper(id="w2", title="A title\nwrapped over two lines\x00with a NUL", authors=[], venue=None, year=None),
    Paper(id="w3", title="", abstract="Only an abstract: dense retrieval of citations.", authors=["A. B."],
          venue="SIGIR", year=1999),
    Paper(id="w4", title="Graph neural networks 🚀 for citations", authors=["X", "Y", "Z"], venue="KDD", year=2020),
]


def test_columns_round_trip_odd_values(tmp_path, monkeypatch):
    monkeypatch.setattr(columns_module, "CHUNK", 3)  # walking through a column crosses chunk boundaries
    written = Columns(ids=[p.id for p in ODD_PAPERS], titles=[p.title for p in ODD_PAPERS],
                      authors=[p.authors for p in ODD_PAPERS], venues=[p.venue for p in ODD_PAPERS],
                      dois=[p.doi for p in ODD_PAPERS], years=[2021, 0, 1999, 2020],
                      dates=[date_key(p) for p in ODD_PAPERS])
    write_columns(tmp_path, written)
    read = read_columns(tmp_path)
    assert list(read.ids) == ["w1", "w2", "w3", "w4"] and len(read.titles) == 4
    assert list(read.titles) == [p.title for p in ODD_PAPERS] and read.titles[-1] == ODD_PAPERS[3].title
    assert read.titles[1:3] == [ODD_PAPERS[1].title, ""] and read.titles[::-2] == [ODD_PAPERS[3].title, ODD_PAPERS[1].title]
    assert list(read.authors) == [["Jörg Müller", "李 明"], [], ["A. B."], ["X", "Y", "Z"]]
    assert read.authors[1] == [] and read.authors[-1] == ["X", "Y", "Z"] and read.authors[:2] == list(read.authors)[:2]
    assert list(read.venues) == ["SIGIR", "", "SIGIR", "KDD"] and read.venues[3] == "KDD"
    assert read.venues[1:] == ["", "SIGIR", "KDD"]
    assert list(read.dois) == ["10.1/abc", "", "", ""]
    assert read.years.tolist() == [2021, 0, 1999, 2020] and read.dates.tolist() == [20210711, 0, 0, 0]
    for column in (read.ids, read.authors, read.venues):
        with pytest.raises(IndexError):
            column[4]
    assert "w3" in read.ids and "w9" not in read.ids


def test_a_damaged_column_is_refused(tmp_path):
    write_columns(tmp_path, Columns(ids=["a", "b"], titles=["x", "y"], authors=[[], []], venues=["", ""],
                                    dois=["", ""], years=[0, 0], dates=[0, 0]))
    np.save(tmp_path / "columns" / "titles.offsets.npy", np.array([0, 1, 5], dtype=np.int64))
    with pytest.raises(ValueError, match="column titles is inconsistent"):
        read_columns(tmp_path)


def test_vectors_are_stored_once_and_clustered(small_index):
    index = Index.load(small_index)
    try:
        for vectors, clusters, dim in ((index.dense, index.clusters, 384),
                                       (index.multilingual, index.multilingual_clusters, 512)):
            assert vectors.shape == (len(index), dim) and not vectors.flags.writeable
            assert sorted(np.asarray(clusters.members).tolist()) == list(range(len(index)))  # each paper once
            assert clusters.offsets[0] == 0 and clusters.offsets[-1] == len(index)
            decoded = np.asarray(clusters.codes, dtype=np.float32) * clusters.scale
            assert np.abs(decoded - vectors[np.asarray(clusters.members)]).max() <= clusters.scale.max()
        assert np.allclose(np.linalg.norm(index.dense, axis=1), 1.0, atol=1e-3)
    finally:
        index.close()


def mapped(array: np.ndarray) -> bool:
    """Whether the array is a view of a memory-mapped file (scipy keeps a plain view of the map)."""
    while array is not None and not isinstance(array, np.memmap):
        array = array.base if isinstance(array, np.ndarray) else None
    return array is not None


def test_the_graph_is_mapped_in_both_directions_and_an_older_single_file_still_loads(small_index, tmp_path):
    index = Index.load(small_index)
    try:
        graph = index.graph
        assert all(mapped(part) for matrix in (graph.cites, graph.cited_by) for part in (matrix.indices, matrix.indptr))
        assert graph.edge_count == index.manifest["edges"] > 0
        assert (graph.cited_by != graph.cites.T.tocsr()).nnz == 0  # the stored transpose is the transpose
        citers = {p: sorted(q for q in range(len(index)) if p in graph.references_of(q).tolist())
                  for p in range(len(index))}
        assert {p: sorted(graph.citers_of(p).tolist()) for p in range(len(index))} == citers
        assert graph.in_degree.tolist() == [len(citers[p]) for p in range(len(index))]
        root = tmp_path / "single-file"
        shutil.copytree(small_index, root)
        version = versions.current_version(root)
        sparse.save_npz(version / graph_module.LEGACY_FILE, graph.cites.copy(), compressed=False)
        for name in graph_module.FILES:
            (version / name).unlink()
        older = Index.load(root, verify=False)
        assert (older.graph.cited_by != graph.cited_by).nnz == 0
        assert older.graph.in_degree.tolist() == graph.in_degree.tolist()
        older.close()
    finally:
        index.close()


def test_clusters_find_what_exact_search_finds(tmp_path, monkeypatch):
    """20,000 vectors around 300 topics: the clusters' 10 nearest (scored exactly) are nearly the exact 10."""
    monkeypatch.setattr(retrieve, "EXACT_SEARCH_SHARE", 2.0)  # search the clusters even in a field this small
    rng = np.random.default_rng(1)
    topics = rng.normal(size=(300, 48))
    vectors = topics[rng.integers(0, 300, 20_000)] + 0.6 * rng.normal(size=(20_000, 48))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    np.save(tmp_path / "dense.npy", vectors)
    mapped = np.load(tmp_path / "dense.npy", mmap_mode="r")
    centroids, scale = clusters_module.train(mapped)
    assert len(centroids) == clusters_module.cluster_count(20_000) == 141
    clusters_module.write(tmp_path, "dense", mapped, centroids, scale, clusters_module.assign(mapped, centroids))
    searcher = DenseRetriever(mapped, clusters_module.Clusters.load(tmp_path, "dense", 20_000))
    allowed = np.ones(20_000, dtype=bool)
    queries = vectors[rng.integers(0, 20_000, 50)] + 0.3 * rng.normal(size=(50, 48)).astype(np.float32)
    found = [len(set(searcher.search(q, allowed, 10).tolist())
                 & set(top_positions(vectors @ q, allowed, 10).tolist())) for q in queries]
    assert np.mean(found) >= 9.5
    with pytest.raises(ValueError, match="do not hold the version's 20001 papers"):
        clusters_module.Clusters.load(tmp_path, "dense", 20_001)


def test_an_index_of_an_older_format_is_refused_with_a_rebuild_message(small_index, tmp_path):
    root = tmp_path / "old"
    shutil.copytree(small_index, root)
    version = versions.current_version(root)
    manifest = json.loads((version / versions.MANIFEST).read_text(encoding="utf-8"))
    manifest["format_version"] = 3  # Annoy forests: rebuilt from the corpus (the embedding cache is kept)
    (version / versions.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(versions.IndexDirectoryError, match="index format 3 is not one this version reads.*rebuild"):
        Index.load(root)


def test_an_unknown_format_is_refused_clearly(small_index, tmp_path):
    root = tmp_path / "future"
    shutil.copytree(small_index, root)
    version = versions.current_version(root)
    manifest = json.loads((version / versions.MANIFEST).read_text(encoding="utf-8"))
    manifest["format_version"] = 5
    (version / versions.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(versions.IndexDirectoryError, match="index format 5 is not one this version reads"):
        Index.load(root)


def test_a_new_build_has_the_papers_in_order(tmp_path):
    root = tmp_path / "idx"
    build_index(ODD_PAPERS, root, progress_bar=False)
    index = Index.load(root)
    assert "position" not in vars(index)  # the id table is built on the first lookup, not at load
    assert index.position == {"w1": 0, "w2": 1, "w3": 2, "w4": 3}
    assert [p.id for p in index.papers([3, 0])] == ["w4", "w1"] and index.authors[1] == []
    assert index.venues[1] == "" and index.years.tolist() == [2021, 0, 1999, 2020]


def test_vectors_are_mapped_as_numpy_reads_them_and_other_arrays_are_refused(tmp_path):
    vectors = np.random.default_rng(3).normal(size=(50, 12)).astype(np.float32)
    np.save(tmp_path / "v.npy", vectors)
    mapped = clusters_module.map_vectors(tmp_path / "v.npy")
    assert np.array_equal(mapped, vectors) and mapped.shape == (50, 12) and not mapped.flags.writeable
    np.save(tmp_path / "wide.npy", vectors.astype(np.float64))
    np.save(tmp_path / "flat.npy", vectors[0])
    for name in ("wide.npy", "flat.npy"):
        with pytest.raises(ValueError, match="not a matrix of float32 vectors"):
            clusters_module.map_vectors(tmp_path / name)
