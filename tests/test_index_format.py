"""Index format 3 (vectors stored once, inside Annoy's file; columns mapped, not parsed) and format-2 indexes."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from annoy import AnnoyIndex

from recommender.paper import Paper
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store import columns as columns_module
from recommender.store import versions
from recommender.store.annoy_vectors import item_vectors
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


def as_format_2(root: Path) -> None:
    """Rewrite the live version of `root` as index format 2 stored it: the vectors also in FIELD.npy (taken from
    Annoy's own reading), the columns in meta.json (from the paper records), the manifest's checksums redone."""
    version = versions.current_version(root)
    index = Index.load(root)
    papers = index.all_papers()
    fields = [("dense", index.annoy)] + ([("multilingual", index.multilingual_annoy)] if index.multilingual_annoy
                                        else [])
    for field, annoy in fields:
        vectors = np.array([annoy.get_item_vector(i) for i in range(len(papers))], dtype=np.float32)
        np.save(version / f"{field}.npy", vectors)
    index.close()
    meta = {"ids": [p.id for p in papers], "titles": [p.title for p in papers], "authors": [p.authors for p in papers],
            "venues": [p.venue for p in papers], "dois": [p.doi for p in papers],
            "years": [p.year if isinstance(p.year, int) else 0 for p in papers],
            "dates": [date_key(p) for p in papers]}
    (version / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(version / "columns")
    (version / versions.VECTOR_DIMS).unlink()
    manifest = json.loads((version / versions.MANIFEST).read_text(encoding="utf-8"))
    manifest["format_version"] = 2
    manifest["files"] = {str(p.relative_to(version)): {"sha256": versions.sha256_of(p), "bytes": p.stat().st_size}
                         for p in sorted(version.rglob("*")) if p.is_file() and p.name != versions.MANIFEST}
    (version / versions.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


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


def test_vectors_are_read_from_the_annoy_file(small_index):
    index = Index.load(small_index)
    version = index.version
    assert not (version / "dense.npy").exists() and not (version / "meta.json").exists()
    for vectors, annoy, dim in ((index.dense, index.annoy, 384), (index.multilingual, index.multilingual_annoy, 512)):
        assert vectors.shape == (len(index), dim) and not vectors.flags.writeable
        expected = np.array([annoy.get_item_vector(i) for i in range(len(index))], dtype=np.float32)
        assert np.array_equal(vectors, expected)
        query = expected[3] + 0.1 * expected[7]
        assert np.array_equal(vectors @ query, expected @ query)  # strided rows give the same products, bit for bit
    assert np.allclose(np.linalg.norm(index.dense, axis=1), 1.0, atol=1e-3)


def test_an_annoy_file_of_another_layout_is_refused(tmp_path):
    rng = np.random.default_rng(0)
    for metric in ("euclidean", "dot"):  # other node layouts than the angular one the index writes
        annoy = AnnoyIndex(8, metric)
        for i in range(50):
            annoy.add_item(i, rng.normal(size=8).tolist())
        annoy.build(2)
        path = tmp_path / f"{metric}.ann"
        annoy.save(str(path))
        with pytest.raises(ValueError, match="do not hold|not stored where"):
            item_vectors(path, 8, 50, annoy)
    angular = AnnoyIndex(8, "angular")
    for i in range(50):
        angular.add_item(i, rng.normal(size=8).tolist())
    angular.build(2)
    angular.save(str(tmp_path / "angular.ann"))
    assert item_vectors(tmp_path / "angular.ann", 8, 50, angular).shape == (50, 8)
    with pytest.raises(ValueError, match="do not hold"):
        item_vectors(tmp_path / "angular.ann", 8, 51, angular)  # more papers than the file has items


def test_a_format_2_index_still_loads_and_ranks_identically(small_index, small_recommender, tmp_path):
    old_root = tmp_path / "old"
    shutil.copytree(small_index, old_root)
    as_format_2(old_root)
    old, new = Index.load(old_root), Index.load(small_index)
    assert old.manifest["format_version"] == 2 and new.manifest["format_version"] == versions.FORMAT_VERSION == 3
    assert isinstance(old.titles, list) and not isinstance(new.titles, list)  # meta.json parsed; columns mapped
    for name in ("ids", "titles", "authors", "venues", "dois"):
        assert list(getattr(old, name)) == list(getattr(new, name)), name
    assert np.array_equal(old.years, new.years) and np.array_equal(old.dates, new.dates)
    assert np.array_equal(old.dense, new.dense) and np.array_equal(old.multilingual, new.multilingual)
    assert old.position == new.position
    queries = [Query(title="Citation recommendation", abstract="We recommend papers to cite for a draft.", k=10),
               Query(context="Dense retrievers [CIT] encode queries and documents into one space.", k=10),
               Query(title="Graph neural networks", abstract="Message passing over citation graphs.",
                     exclude=[new.ids[0], new.ids[5]], year_min=2011, k=10)]
    encoder = small_recommender.encoder
    for query in queries:
        before = Recommender(old, encoder=encoder).recommend(query)
        after = Recommender(new, encoder=encoder).recommend(query)
        assert [(r.paper_id, r.score) for r in before.recommendations] == \
               [(r.paper_id, r.score) for r in after.recommendations]
        assert len(after.recommendations) >= 5


def test_an_unknown_format_is_refused_clearly(small_index, tmp_path):
    root = tmp_path / "future"
    shutil.copytree(small_index, root)
    version = versions.current_version(root)
    manifest = json.loads((version / versions.MANIFEST).read_text(encoding="utf-8"))
    manifest["format_version"] = 4
    (version / versions.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(versions.IndexDirectoryError, match="index format 4 is not one this version reads"):
        Index.load(root)


def test_a_new_build_has_the_papers_in_order(tmp_path):
    root = tmp_path / "idx"
    build_index(ODD_PAPERS, root, progress_bar=False)
    index = Index.load(root)
    assert "position" not in vars(index)  # the id table is built on the first lookup, not at load
    assert index.position == {"w1": 0, "w2": 1, "w3": 2, "w4": 3}
    assert [p.id for p in index.papers([3, 0])] == ["w4", "w1"] and index.authors[1] == []
    assert index.venues[1] == "" and index.years.tolist() == [2021, 0, 1999, 2020]
