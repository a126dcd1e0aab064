"""Hostile uploads through the real app in a real browser (issue 25): `streamlit run` and Debian's Chromium.

One server for the module, over a copy of the small index on the shared shelf (so that Corpus › "Learn from
papers" accepts uploads). A canary file with a unique token lies on the server outside any upload; the token must
never reach a browser: neither in a page's HTML nor in any websocket message the server sends.
"""
from __future__ import annotations

import re
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest

from bench import hostile
from browser import HAS_CHROMIUM, chromium, serve, settle
from recommender.documents.project import OUTSIDE_NOTICE

pytestmark = pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")

DRAFT = "The draft or submission"
ANSWER_S = 30  # another visitor's answer while a hostile upload is being read (about 3 s when idle)
HOSTILE_S = 120  # the 1,000-citation review itself, with its 1,000 places drawn in the browser


@dataclass
class App:
    base: str
    browser: object
    secret: Path  # the canary: secret.tex and secret.bib, outside every upload
    token: str


@pytest.fixture(scope="module")
def app(small_index, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile_uploads")
    corpora = root / "corpora"
    shutil.copytree(small_index, corpora / "small")  # a corpus of one's own: Learn from papers is offered
    secret, token = hostile.canary(root / "server-secrets")
    env = {"CITREC_INDEX": str(corpora / "small"), "CITREC_CORPORA": str(corpora)}
    with serve(env, root / "streamlit.log") as base, chromium() as browser:
        yield App(base, browser, secret, token)


@contextmanager
def visitor(app: App):
    """A page in a browser context of its own (another visitor), and every websocket frame it receives."""
    context = app.browser.new_context(viewport={"width": 1360, "height": 1400})
    page = context.new_page()
    frames: list[bytes] = []
    page.on("websocket", lambda socket: socket.on(
        "framereceived", lambda payload: frames.append(payload if isinstance(payload, bytes) else payload.encode())))
    try:
        yield page, frames
    finally:
        context.close()


def upload(page, label: str, *paths: Path) -> None:
    uploader = page.get_by_test_id("stFileUploader").filter(has_text=label)
    uploader.locator("input[type=file]").set_input_files([str(p) for p in paths])
    for path in paths:  # a form sent while a file is still uploading goes without it
        uploader.get_by_test_id("stFileChipName").filter(has_text=path.name).first.wait_for(timeout=30_000)
    deadline = time.monotonic() + 30
    while uploader.get_by_test_id("stFileChipIconSpinner").count() and time.monotonic() < deadline:
        page.wait_for_timeout(100)


def shown(page, text: str, timeout_s: float) -> None:
    """Wait until `text` is on the page; on time-out, fail with what the page shows instead."""
    from playwright.sync_api import TimeoutError

    try:
        page.get_by_text(text).filter(visible=True).first.wait_for(timeout=timeout_s * 1000)
    except TimeoutError:
        pytest.fail(f"{text!r} not shown within {timeout_s} s; the page shows:\n{page.inner_text('body')[-3000:]}")


def assert_secret_kept(app: App, page, frames: list[bytes]) -> None:
    """Neither the canary's token nor its folder reaches the browser."""
    html = page.content()
    assert app.token not in html and "server's secret" not in html
    assert str(app.secret.parent) not in html  # no notice names the path, resolved or not
    sent = b"".join(frames)
    assert sent and app.token.encode() not in sent and b"server's secret" not in sent


def test_reviewer_check_ignores_includes_outside_the_project_and_ends_a_recursion_bomb(app, tmp_path):
    outside = hostile.outside_includes_zip(tmp_path / "outside", app.secret)  # absolute, ../ past the top
    bomb = hostile.recursion_bomb(tmp_path / "bomb")
    with visitor(app) as (page, frames):
        page.goto(f"{app.base}/reviewer_check")
        page.get_by_role("tab", name="Whole draft").click()
        upload(page, DRAFT, outside)
        page.get_by_role("button", name="Review the draft").click()
        shown(page, OUTSIDE_NOTICE, 120)
        settle(page)
        reviewed = page.inner_text("body")
        assert_secret_kept(app, page, frames)

        upload(page, DRAFT, bomb)
        started = time.monotonic()
        page.get_by_role("button", name="Review the draft").click()
        shown(page, "a.tex includes itself (through \\input); it was read once.", 30)
        bomb_s = time.monotonic() - started
        settle(page)
        exploded = page.inner_text("body")
        assert_secret_kept(app, page, frames)
    assert OUTSIDE_NOTICE in reviewed and reviewed.count(OUTSIDE_NOTICE) == 1  # one neutral notice
    assert re.search(r"Citation places\s+1\s", reviewed) and hostile.SENTENCE in reviewed  # the review itself is shown
    assert "Traceback" not in reviewed + exploded
    assert bomb_s < 30 and "Citation places" in exploded and OUTSIDE_NOTICE not in exploded


def test_learn_from_papers_never_reads_the_server_and_never_tells_whether_a_path_exists(app, tmp_path):
    """Two papers name files outside their folder the same ways: one names the canary, the other a path that does
    not exist. A leak would show in the table (a reference read from the secret .bib, a notice less or more), and
    a probe would show as two different rows."""
    leak = outside_paper(tmp_path, "leak.tex", app.secret, hostile.SENTENCE)
    probe = outside_paper(tmp_path, "probe.tex", app.secret.with_name("absent.tex"),
                          "Graph neural networks propagate relevance along the citation links of a corpus.")
    with visitor(app) as (page, frames):
        page.goto(f"{app.base}/corpus")
        upload(page, "Papers that cite this corpus", leak, probe)
        shown(page, "No citation contexts", 120)
        settle(page)
        table = page.get_by_test_id("stDataFrame").filter(has_text="probe.tex").locator("table").last
        rows = table.evaluate("t => [...t.querySelectorAll('tr')].map(r => [...r.children].map(c => c.textContent))")
        assert_secret_kept(app, page, frames)
    header, *papers = rows
    assert header == ["Paper", "References in this corpus", "Citation contexts", "Note"]
    assert [row[0] for row in papers] == ["leak.tex", "probe.tex"]
    assert papers[0][1:] == papers[1][1:]  # the canary's existence changes nothing
    note = papers[0][3]
    assert OUTSIDE_NOTICE in note and note.count(OUTSIDE_NOTICE) == 1
    assert papers[0][1] == "0 of 0"  # neither secret .bib was read


def outside_paper(folder: Path, name: str, target: Path, sentence: str) -> Path:
    """A .tex naming `target` (and its .bib) by absolute path and by `../` from anywhere (an upload is written to
    a fresh temporary folder on the server) through every command that includes a file."""
    absolute = str(target.resolve())
    up = "../" * 16 + absolute.lstrip("/")
    body = (f"{sentence} \\cite{{x}}\n\n\\input{{{absolute}}}\n\\input{{{up}}}\n\\include{{{up[:-4]}}}\n"
            f"\\subfile{{{absolute}}}\n")
    bibs = f"\\bibliography{{{absolute[:-4]},{up[:-4]}}}\n\\addbibresource{{{absolute[:-4]}.bib}}\n"
    path = folder / name
    path.write_text(hostile._latex(body, bibs).replace("A hostile draft", f"A paper named {name}"), encoding="utf-8")
    return path


def test_another_visitor_is_answered_while_a_hostile_upload_is_read(app, tmp_path):
    cites = hostile.many_citations(tmp_path / "cites")  # 1,000 citations in one paragraph, with their .bib
    link = f"{app.base}/?" + urlencode({"title": "Citation recommendation",
                                        "abstract": "We recommend references for a draft from its abstract."})
    with visitor(app) as (attacker, _), visitor(app) as (other, _):
        attacker.goto(f"{app.base}/reviewer_check")
        attacker.get_by_role("tab", name="Whole draft").click()
        upload(attacker, DRAFT, cites)
        upload(attacker, "Its BibTeX file", cites.with_name("refs.bib"))
        attacker.get_by_role("button", name="Review the draft").click()
        started = time.monotonic()
        other.goto(link)
        shown(other, "Neural citation recommendation from paper abstracts", ANSWER_S)
        answered_s = time.monotonic() - started
        shown(attacker, "References found", HOSTILE_S)
        hostile_s = time.monotonic() - started
        settle(attacker)
        reviewed = attacker.inner_text("body")
    assert answered_s < ANSWER_S and hostile_s < HOSTILE_S, (answered_s, hostile_s)
    assert "0 / 1000" in reviewed and re.search(r"Citation places\s+1000\s", reviewed) and "Traceback" not in reviewed
    assert "the first 300 (its placeholders first) were answered" in reviewed
