"""User corpora: created beside, never inside, the index they extend; extended in place when they are ours; a
person's workspace opened only by its token, remembering the corpus used last, kept until the idle limit."""
import os
import time

import pytest

from recommender.paper import Paper
from recommender.store import versions
from recommender.store.index import Index
from workspace import corpora, personal
from workspace.cleanup import Sweeper

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


@pytest.mark.parametrize("token", ["", "a" * 31, "a" * 65, "../" * 11, "a" * 31 + "/", "a" * 31 + ".", "é" * 32])
def test_an_address_names_no_workspace_but_an_existing_one_by_a_token(root, token):
    (root / corpora.PRIVATE_FOLDER / ("a" * 31)).mkdir(parents=True)  # a folder, but not named by a full token
    assert personal.shelf_of(token) is None
    mine = personal.new_token()
    assert len(mine) == 32 and personal.TOKEN_RE.fullmatch(mine) and personal.shelf_of(mine) is None  # not made yet
    corpora.create_corpus("Mine", NEW[:1], shelf=corpora.private_shelf(mine))
    assert personal.shelf_of(mine) == root / ".sessions" / mine and personal.shelf_of(personal.new_token()) is None


def test_a_workspace_remembers_the_corpus_used_last_while_it_exists(root, small_index):
    shelf = corpora.private_shelf("w" * 32)
    personal.remember_choice(shelf, small_index)
    assert not shelf.exists()  # the default corpus chosen: no workspace is created for that
    mine, other = (corpora.create_corpus(name, NEW[:1], shelf=shelf) for name in ("Mine", "Other"))
    assert personal.last_used(shelf) is None
    personal.remember_choice(shelf, mine)
    assert personal.last_used(shelf) == mine
    personal.remember_choice(shelf, corpora.create_corpus("Theirs", NEW[:1], shelf=corpora.private_shelf("t" * 32)))
    assert personal.last_used(shelf) is None  # another workspace's corpus is never remembered here
    personal.remember_choice(shelf, other)
    corpora.delete_corpus(other, shelf)
    assert personal.last_used(shelf) is None
    (shelf / personal.LAST_USED).write_text("../" + "t" * 32 + "/theirs")
    assert personal.last_used(shelf) is None


def test_your_corpora_have_their_size_and_dates(root):
    shelf = corpora.private_shelf("w" * 32)
    target = corpora.create_corpus("Mine", NEW[:1], shelf=shelf)
    os.utime(target, (1_000_000_000, 1_000_000_000))
    [listed] = personal.your_corpora(shelf)
    assert (listed.name, listed.directory, listed.papers, listed.links) == ("mine", target, 1, 0)
    assert listed.disk_bytes == sum(p.stat().st_size for p in target.rglob("*") if p.is_file()) > 10_000
    assert listed.used == listed.changed == (target / "CURRENT").stat().st_mtime  # never before its last change
    personal.mark_used(target)
    assert personal.your_corpora(shelf)[0].used >= time.time() - 5
    assert personal.your_corpora(corpora.private_shelf("t" * 32)) == []


def test_a_workspace_holding_a_corpus_outlives_its_session_until_the_idle_limit(root):
    kept, empty = corpora.private_shelf("k" * 32), corpora.private_shelf("e" * 32)
    corpora.create_corpus("Mine", NEW[:1], shelf=kept)
    empty.mkdir(parents=True)
    (empty / personal.LAST_USED).write_text("")  # a file alone is nothing to come back to
    now = time.time()
    for shelf in (kept, empty):
        os.utime(shelf, (now - 3600, now - 3600))  # untouched for an hour: past the grace period
    assert Sweeper.alive(kept.name) and not Sweeper.alive(empty.name) and not Sweeper.alive("n" * 32)
    assert corpora.sweep_private_shelves(Sweeper.alive, grace_s=900, idle_limit_s=86_400, now=now) == 1
    assert kept.is_dir() and not empty.exists()
    assert corpora.sweep_private_shelves(Sweeper.alive, grace_s=900, idle_limit_s=86_400, now=now + 86_400) == 1
    assert not kept.exists()


def test_a_token_that_names_a_file_or_a_link_opens_no_workspace(root, tmp_path):
    shelves = root / corpora.PRIVATE_FOLDER
    shelves.mkdir(parents=True)
    (shelves / ("f" * 32)).write_text("not a folder")
    assert personal.shelf_of("f" * 32) is None and personal.shelf_of("f" * 32 + "\n") is None
    outside = tmp_path / "outside"
    (outside / "corpus").mkdir(parents=True)
    (outside / "corpus" / "CURRENT").write_text("v1")
    (shelves / ("l" * 32)).symlink_to(outside)  # only the server's own user could make one
    os.utime(shelves / ("l" * 32), (0, 0), follow_symlinks=False)
    corpora.sweep_private_shelves(lambda owner: False, grace_s=0, idle_limit_s=0)
    assert (outside / "corpus" / "CURRENT").is_file()  # the sweep never follows a link out of the shelves


def test_workspaces_and_their_corpora_are_bounded(root, monkeypatch):
    """Anyone may start a workspace: the server keeps at most $CITREC_MAX_WORKSPACES, each with at most
    MAX_CORPORA_PER_SHELF corpora (with builds); the refusal says which limit was reached."""
    monkeypatch.setenv("CITREC_MAX_WORKSPACES", "2")
    first, second, third = (corpora.private_shelf(c * 32) for c in "abc")
    for shelf in (first, second):
        shelf.mkdir(parents=True)
    corpora.check_new_shelf(first)  # existing ones go on
    with pytest.raises(ValueError, match="keeps 2 workspaces already"):
        corpora.create_corpus("Mine", NEW[:1], shelf=third)
    with pytest.raises(ValueError, match="keeps 2 workspaces already"):
        corpora.start_build("Mine", ["openalex", "--search=x"], third)
    assert not third.exists()
    monkeypatch.setattr(corpora, "MAX_CORPORA_PER_SHELF", 2)
    for name in ("one", "two"):
        (first / name).mkdir()
        (first / name / "CURRENT").write_text("v1")
    with pytest.raises(ValueError, match="holds 2 corpora"):
        corpora.start_build("Three", ["openalex", "--search=x"], first)
    with pytest.raises(ValueError, match="holds 2 corpora"):
        corpora.create_corpus("Three", NEW[:1], shelf=first)
    assert sorted(p.name for p in first.iterdir()) == ["one", "two"]
    corpora.check_room_for_corpus(root, "three")  # the shared shelf is the operator's


def test_builds_running_at_once_are_bounded_per_workspace_and_on_the_server(root, monkeypatch):
    import fcntl

    from recommender.background import Job, Step
    mine, theirs = corpora.private_shelf("a" * 32), corpora.private_shelf("b" * 32)
    held = []
    for name in ("one", "two"):
        job = Job.create(mine / corpora.JOBS_FOLDER / name, name, [Step("Collecting the papers", ["corpus"])])
        held.append(os.open(job.lock_path, os.O_RDWR | os.O_CREAT, 0o600))
        fcntl.flock(held[-1], fcntl.LOCK_EX)  # as its running process holds it
    stopped = Job.create(mine / corpora.JOBS_FOLDER / "three", "three", [])
    try:
        with pytest.raises(ValueError, match="2 builds of this workspace run already"):
            corpora.start_build("Four", ["openalex", "--search=x"], mine)
        with pytest.raises(ValueError, match="2 builds of this workspace run already"):
            corpora.resume_build(stopped)
        monkeypatch.setattr(corpora, "MAX_BUILDS_RUNNING", 2)
        with pytest.raises(ValueError, match="2 builds run on this server already"):
            corpora.start_build("Four", ["openalex", "--search=x"], theirs)
    finally:
        for fd in held:
            os.close(fd)
    assert not theirs.exists() and not (mine / corpora.JOBS_FOLDER / "four").exists()
