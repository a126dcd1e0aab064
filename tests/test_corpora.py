"""User corpora: created beside, never inside, the index they extend; extended in place when they are ours."""
import os
import time

import pytest

from recommender.paper import Paper
from recommender.store import versions
from recommender.store.index import Index
from workspace import corpora

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
    version = versions.current_version(target)
    added = corpora.extend_corpus(target, [NEW[0], Paper(id="new2", title="Statute retrieval", year=2018)])
    assert added == 1 and versions.current_version(target) != version
    assert len(Index.load(target)) == 2


def test_a_failed_build_publishes_nothing(root):
    with pytest.raises(ValueError):
        corpora.create_corpus("empty", [])
    assert corpora.list_corpora() == {}


def test_a_private_shelf_is_listed_apart_from_the_shared_one(root):
    mine, theirs = corpora.private_shelf("a" * 32), corpora.private_shelf("b" * 32)
    target = corpora.create_corpus("Mine", NEW[:1], shelf=mine)
    assert target == root / ".sessions" / ("a" * 32) / "mine"
    assert corpora.list_corpora(mine) == {"mine": target}
    assert corpora.list_corpora(theirs) == {} and corpora.list_corpora() == {}  # nor on the shared shelf
    assert corpora.is_user_corpus(target, mine) and not corpora.is_user_corpus(target, theirs)
    assert not corpora.is_user_corpus(target) and corpora.on_a_shelf(target)
    with pytest.raises(ValueError, match="not a user corpus"):
        corpora.extend_corpus(target, NEW, shelf=theirs)
    with pytest.raises(ValueError, match="not a user corpus"):
        corpora.delete_corpus(target, theirs)
    corpora.delete_corpus(target, mine)
    assert not target.exists() and corpora.list_corpora(mine) == {}


@pytest.mark.parametrize("owner", ["", "short", "../../etc", "a" * 31 + "/", "test session id"])
def test_a_shelf_owner_cannot_name_a_path(root, owner):
    with pytest.raises(ValueError, match="not a valid shelf owner"):
        corpora.private_shelf(owner)


def test_sweep_removes_the_shelves_of_owners_that_are_gone(root):
    gone, alive, idle = (corpora.private_shelf(c * 16) for c in "abc")
    for shelf in (gone, alive, idle):  # the layout of a published corpus is all a sweep looks at
        (shelf / "corpus").mkdir(parents=True)
        (shelf / "corpus" / "CURRENT").write_text("v1")
    now = time.time()
    os.utime(gone, (now - 3600, now - 3600))
    os.utime(alive, (now - 3600, now - 3600))
    os.utime(idle, (now - 90_000, now - 90_000))
    removed = []
    count = corpora.sweep_private_shelves(lambda owner: owner != gone.name, grace_s=900, idle_limit_s=86_400,
                                          on_remove=removed.append, now=now)
    assert count == 2 and sorted(removed) == sorted([gone / "corpus", idle / "corpus"])
    assert not gone.exists() and not idle.exists() and (alive / "corpus" / "CURRENT").is_file()
    # within the grace period a shelf stays even when its owner is not known to be alive
    assert corpora.touch_shelf(alive) and not corpora.touch_shelf(gone)
    assert corpora.sweep_private_shelves(lambda owner: False, grace_s=900, idle_limit_s=86_400) == 0
    assert alive.exists()
