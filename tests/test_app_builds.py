"""The Corpus page's "Build from a source": paths on the server only when the operator allows them, input refused
before anything starts, builds listed (and stopped, removed) from any session that may see them, and in a real
browser a build that goes on across a reload and ends in a new corpus."""
from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
from support.app_helpers import open_app
from browser import HAS_CHROMIUM, chromium, serve, settle

from support.fixture_server import FixtureServer
from recommender.background import Job, Step
from workspace import corpora

PAGE = "pages/corpus.py"
START = "FormSubmitter:build_form-Start the build"
SNAPSHOT = Path(__file__).resolve().parent / "fixtures" / "arxiv" / "snapshot.jsonl"


def build_from(at, source: str, name: str = "", **fields):
    at.segmented_control(key="src_kind").set_value(source).run()
    for key, value in fields.items():
        (at.text_area if key == "s2_seeds" else at.text_input)(key=key).input(value)
    if name:
        at.text_input(key="src_name").input(name)
    at.button(key=START).click().run()
    assert not at.exception, at.exception
    return at


def jobs_under(root: Path) -> list[Path]:
    return sorted(root.rglob(f"{corpora.JOBS_FOLDER}/*/job.json"))


def test_paths_on_the_server_are_offered_only_when_the_operator_allows_them(app_env, monkeypatch):
    at = open_app(PAGE)
    assert at.segmented_control(key="src_kind").value == "openalex" and at.text_input(key="oa_search")
    for source in ("pdfs", "arxiv", "zotero"):
        at.segmented_control(key="src_kind").set_value(source).run()
        assert any("CITREC_ALLOW_SERVER_PATHS=1" in i.value for i in at.info)
        assert not [t for t in at.text_input if t.key in ("pdf_path", "ax_path", "zo_path")]
    monkeypatch.setenv("CITREC_ALLOW_SERVER_PATHS", "1")
    at = open_app(PAGE)
    at.segmented_control(key="src_kind").set_value("pdfs").run()
    assert at.text_input(key="pdf_path") and not [i for i in at.info if "CITREC_ALLOW_SERVER_PATHS" in i.value]


def test_bad_input_is_refused_before_a_build_starts(app_env, monkeypatch, tmp_path):
    monkeypatch.setenv("CITREC_ALLOW_SERVER_PATHS", "1")
    at = open_app(PAGE)
    cases = [("pdfs", {"pdf_path": "papers/"}, "Give the full path of the folder of PDFs on the server"),
             ("pdfs", {"pdf_path": str(tmp_path / "nowhere")}, "no such folder on the server"),
             ("arxiv", {"ax_path": str(SNAPSHOT), "ax_years": "2020-2015"}, "the first year is after the last"),
             ("openalex", {"oa_search": "citation recommendation", "oa_venues": "X123"},
              "is not an OpenAlex source (venue) id"),
             ("openalex", {"oa_search": "", "oa_venues": ""}, "give at least one of --search"),
             ("arxiv", {"ax_path": str(SNAPSHOT)}, "at least one letter or digit"),
             ("s2", {"s2_seeds": "# my seeds\n\n"}, "Give at least one seed paper"),
             ("s2", {"s2_seeds": "10.18653/v1/D19-1410\nNeural citation recommendation"},
              "is not a paper id Semantic Scholar knows")]
    for source, fields, message in cases:
        build_from(at, source, **fields)
        shown = [e.value.replace("\\", "") for e in at.error]  # the message is escaped for Markdown
        assert any(message in text for text in shown), (source, fields, shown)
        assert any("The build was not started" in e.value for e in at.error)
    assert not jobs_under(app_env)


def test_a_semantic_scholar_build_starts_from_pasted_seed_ids(app_env):
    """Seeds as users paste them (a DOI link, an arXiv id with its prefix, a corpus id, comments) become the
    Graph API's id forms in the build's command; the build is then stopped and removed from the page."""
    seeds = ("https://doi.org/10.18653/v1/D19-1410   # Sentence-BERT\n"
             "arXiv:1810.04805v2\n\nCorpusId:201646309\n")
    at = build_from(open_app(PAGE), "s2", name="Seeded field", s2_seeds=seeds)
    assert not at.error, [e.value for e in at.error]
    [spec] = jobs_under(app_env)
    job = Job(spec.parent)
    command = job.steps()[0].argv
    assert command[:7] == ["corpus", "semantic-scholar", "--seed", "DOI:10.18653/v1/d19-1410", "ARXIV:1810.04805v2",
                           "CorpusId:201646309", "--expand"]
    assert command[7:10] == ["both", "--expand-limit", "5000"]
    job.stop()
    deadline = time.monotonic() + 120
    while job.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    job.remove()


def test_a_build_is_seen_stopped_and_removed_from_another_session(app_env, monkeypatch):
    """Shared corpora: a build one person started is listed for everyone; stopping it keeps what it fetched."""
    monkeypatch.setenv("CITREC_SHARED_CORPORA", "1")
    release = threading.Event()

    def slow(request):  # OpenAlex answers slowly: the build is running while the page looks at it
        release.wait(120)
        return 500, {"error": "down"}, {}

    with FixtureServer(slow) as server:
        job = corpora.start_build("Slow field", ["openalex", "--search=x", "--api-url", server.url, "--retries", "0"],
                                  corpora.corpora_root())
        at = open_app(PAGE)
        assert any("Builds in the background" in s.value for s in at.subheader)
        assert any("Slow field" in m.value and "running" in m.value for m in at.markdown)
        at.button(key="build_stop_slow-field").click().run()
        deadline = time.monotonic() + 120
        while job.running() and time.monotonic() < deadline:
            time.sleep(0.05)
        release.set()
    at.run()
    assert not at.exception, at.exception
    assert any("The build was stopped" in w.value for w in at.warning)
    assert at.button(key="build_resume_slow-field")
    at.button(key="build_remove_slow-field").click().run()
    at.run()
    assert not job.folder.exists() and not at.subheader


def test_a_build_that_cannot_reach_its_source_says_so_without_server_paths(app_env, monkeypatch, tmp_path):
    """A web visitor reads why and what to do (press Resume), never a path on the server or a command to run."""
    monkeypatch.setenv("CITREC_SHARED_CORPORA", "1")
    with FixtureServer(lambda request: (200, {}, {})) as server:
        closed = server.url  # the server is gone once the block ends: nothing listens at its address
    job = corpora.start_build("Offline field", ["openalex", "--search=x", "--api-url", closed, "--retries", "0"],
                              corpora.corpora_root())
    deadline = time.monotonic() + 120
    while job.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.status()["state"] == "failed" and "run the same command" in job.status()["message"]
    at = open_app(PAGE)
    assert not at.exception, at.exception
    shown = " ".join([e.value for e in at.error] + [c.value for c in at.code] + [m.value for m in at.markdown])
    assert "press **Resume** when the network is back" in shown and "could not be reached" in shown
    root = str(corpora.corpora_root())
    assert "run the same command" not in shown, shown
    assert root not in shown, [piece for piece in shown.split("\n") if root in piece]
    assert at.button(key="build_resume_offline-field")


def test_private_builds_are_found_again_through_the_workspaces_address(app_env):
    mine = open_app(PAGE)
    token = mine.session_state["workspace"]
    shelf = corpora.private_shelf(token)
    Job.create(shelf / corpora.JOBS_FOLDER / "field", "Field", [Step("Collecting the papers", ["corpus"])])
    mine.run()
    assert mine.query_params["workspace"] == token  # the address now names the workspace
    for again in (open_app(PAGE, workspace=token), open_app(PAGE, builds=token)):  # a reload; an earlier address
        assert again.session_state["workspace"] == token and again.query_params["workspace"] == token
        assert "builds" not in again.query_params
        assert any("Field" in m.value for m in again.markdown) and again.button(key="build_resume_field")
    for other in (open_app(PAGE), open_app(PAGE, workspace="0" * 32), open_app(PAGE, builds="../../etc")):
        assert other.session_state["workspace"] != token and not other.subheader


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_a_build_goes_on_across_a_reload_and_ends_in_a_new_corpus(small_index, tmp_path):
    env = {"CITREC_INDEX": str(small_index), "CITREC_CORPORA": str(tmp_path / "corpora"),
           "CITREC_ALLOW_SERVER_PATHS": "1", "HF_HUB_OFFLINE": "1"}
    with serve(env, tmp_path / "streamlit.log") as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1100})
        page.goto(base)
        page.get_by_role("link", name="Corpus").first.click()
        page.get_by_role("tab", name="Build from a source").click()
        page.get_by_text("arXiv snapshot", exact=True).click()
        page.get_by_role("textbox", name="Snapshot file on the server").fill(str(SNAPSHOT))
        page.get_by_role("textbox", name="Categories").fill("cs")
        page.get_by_role("textbox", name="Name of the new corpus").fill("Fixture arXiv")
        page.get_by_role("button", name="Start the build").click()
        page.get_by_text("Fixture arXiv · running").first.wait_for(timeout=60_000)
        assert re.search(r"[?&]workspace=[A-Za-z0-9_-]{32}(?:&|$)", page.url)  # a token may end in "-" or "_"
        settle(page)
        page.screenshot(path=str(tmp_path / "running.png"))

        page.reload()  # a new session of the same address: the build is there, still going or done
        page.get_by_text("Built corpus fixture-arxiv (4 papers").first.wait_for(timeout=240_000)
        settle(page)
        page.screenshot(path=str(tmp_path / "done.png"))
        page.get_by_role("button", name="Use it now").click()
        page.get_by_text("Fixture arXiv · done").first.wait_for(state="detached", timeout=60_000)
        settle(page)
        text = page.inner_text("body")
    assert "fixture-arxiv" in text and "Papers\n\n4" in text.replace("\r", "")


def test_no_server_path_survives_a_failure_message(monkeypatch, tmp_path):
    """Folders with spaces or brackets, file:// addresses and the bare corpora folder are cut too; web addresses
    stay."""
    from pages.ui.builds import failure_text
    from pages.ui.server_paths import without_paths
    root = tmp_path / "Jane Doe" / "corpora (lab)"
    monkeypatch.setenv("CITREC_CORPORA", str(root))
    cases = {f"[Errno 28] No space left on device: '{root}/.sessions/{'a' * 32}/.jobs/x/corpus.jsonl.gz'":
             "'…/corpus.jsonl.gz'",
             f"cannot write {root}": "cannot write /…",
             "cannot open file:///srv/data/snapshot.json": "cannot open …/snapshot.json",
             f"{Path.home()}/Zotero/zotero.sqlite is locked": "…/zotero.sqlite is locked"}
    for message, cut in cases.items():
        shown = without_paths(message)
        assert cut in shown and "Jane" not in shown and "/srv" not in shown and ".sessions" not in shown, shown
        assert "Jane" not in failure_text(message) and "…" in failure_text(message)
    assert without_paths("see https://api.openalex.org/works/W1") == "see https://api.openalex.org/works/W1"
