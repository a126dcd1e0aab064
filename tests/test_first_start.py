"""A newcomer's first start, in a real browser: a clean copy of the repository, no `.index/`, no CITREC_* settings.

`streamlit run app.py` must build the demo index, answer a query, and then serve every page of the sidebar
(opened and reloaded) without an error.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from browser import HAS_CHROMIUM, ROOT, chromium, serve, settle

FIRST_ANSWER_TIMEOUT_MS = 240_000  # builds the demo index and loads both encoders
PAGE_TIMEOUT_MS = 90_000
SIDEBAR_PAGES = {"Recommend": "Find citations for your draft", "Citation graph": "Citation graph",  # link: heading
                 "Reviewer check": "Reviewer check", "Corpus": "Corpus", "Evaluation": "Evaluation"}
ERROR_TEST_IDS = ["stException", "stAlertContentError"]


def clean_copy(target: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked and not ignored), without `.index/` or caches."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def newcomer_environment() -> dict[str, str]:
    """This process's environment without any of the app's own settings."""
    return {name: value for name, value in os.environ.items() if not name.startswith("CITREC_")}


def wait_for(page, locator, timeout_ms: int) -> None:
    """Wait until `locator` or an error box shows (a broken page fails at once, not after the timeout)."""
    errors = page.get_by_test_id(ERROR_TEST_IDS[0]).or_(page.get_by_test_id(ERROR_TEST_IDS[1]))
    locator.or_(errors).first.wait_for(timeout=timeout_ms)
    settle(page)


def errors_on(page) -> list[str]:
    """Texts of error boxes and exceptions Streamlit shows on the page."""
    found = []
    for test_id in ERROR_TEST_IDS:
        found += page.get_by_test_id(test_id).all_inner_texts()
    body = page.inner_text("body")
    found += [word for word in ("Traceback", "CacheReplayClosureError") if word in body]
    return found


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout to copy the tracked files from")
def test_first_start_in_a_real_browser(tmp_path):
    copy = clean_copy(tmp_path / "checkout")
    assert not (copy / ".index").exists()
    with serve({}, tmp_path / "streamlit.log", root=copy, base_env=newcomer_environment()) as base, \
            chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        page.goto(base)
        page.get_by_label("Title", exact=True).fill("Recommending citations for a paper draft",
                                                    timeout=FIRST_ANSWER_TIMEOUT_MS)
        page.get_by_label("Abstract or passage").fill(
            "Given the title and abstract of a manuscript, we retrieve candidate papers with BM25 and sentence "
            "embeddings, expand them through the citation graph and rerank them.")
        page.get_by_role("button", name="Recommend").click()
        wait_for(page, page.get_by_text("recommendations"), FIRST_ANSWER_TIMEOUT_MS)
        assert errors_on(page) == []
        assert "Content-Based Citation Recommendation" in page.inner_text("body")
        for title, heading in SIDEBAR_PAGES.items():
            page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
            wait_for(page, page.get_by_role("heading", name=heading), PAGE_TIMEOUT_MS)
            assert errors_on(page) == [], f"{title}: {errors_on(page)}"
            page.reload()
            wait_for(page, page.get_by_role("heading", name=heading), PAGE_TIMEOUT_MS)
            assert errors_on(page) == [], f"{title} after a reload: {errors_on(page)}"
    assert (copy / ".index" / "demo" / "CURRENT").is_file()
