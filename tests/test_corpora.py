"""User corpora: created beside, never inside, the index they extend; extended in place when they are ours."""
import pytest

from recommender import corpora, index_files
from recommender.index import Index
from recommender.paper import Paper

NEW = [Paper(id="new1", title="Citation recommendation for legal documents", abstract="Court decisions cite "
             "precedents; we recommend them.", authors=["Ruth Law"], year=2016, venue="ICAIL"),
       Paper(id="cite0", title="A clash with an id the base already has")]


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("CITREC_CORPORA", str(tmp_path / "corpora"))
    return tmp_path / "corpora"


def test_slugify_and_listing(root):
    assert corpora.slugify(" Mes thèses (2024) ") == "mes-theses-2024"
    assert corpora.list_corpora() == {}


def test_new_corpus_holds_the_base_and_the_new_papers_and_leaves_the_base_alone(root, small_index):
    before = (small_index / "CURRENT").read_text()
    base = Index.load(small_index)
    target = corpora.create_corpus("Legal", NEW, base=base)
    assert target == root / "legal" and corpora.list_corpora() == {"legal": target}
    index = Index.load(target)
    assert len(index) == len(base) + 1 and "new1" in index.position
    assert index.titles[index.position["cite0"]] == base.titles[base.position["cite0"]]
    assert (small_index / "CURRENT").read_text() == before
    assert corpora.is_user_corpus(target) and not corpora.is_user_corpus(small_index)
    with pytest.raises(ValueError, match="already exists"):
        corpora.create_corpus("legal", NEW)
    with pytest.raises(ValueError, match="not a user corpus"):
        corpora.extend_corpus(small_index, NEW)


def test_user_corpus_is_extended_in_place(root):
    target = corpora.create_corpus("Mine", NEW[:1])
    version = index_files.current_version(target)
    added = corpora.extend_corpus(target, [NEW[0], Paper(id="new2", title="Statute retrieval", year=2018)])
    assert added == 1 and index_files.current_version(target) != version
    assert len(Index.load(target)) == 2


def test_a_failed_build_publishes_nothing(root):
    with pytest.raises(ValueError):
        corpora.create_corpus("empty", [])
    assert corpora.list_corpora() == {}
