"""A person's workspace in a real browser: a corpus imported through the Corpus page is still there, and still the
active one, after a reload, a query, a page switch, in a new browser with the same address and after a server
restart; a browser without the address sees nothing of it; deleting it from the list removes it from the disk."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from support.corpora import LAW_JSONL

from browser import HAS_CHROMIUM, chromium, serve, settle

TOKEN_RE = re.compile(r"[?&]workspace=([A-Za-z0-9_-]{32})(?:&|$)")
MINE = "Corpus: law-only · 2 papers"
DEFAULT = "Corpus: small · 24 papers"


def token_of(page) -> str:
    found = TOKEN_RE.search(page.url)
    assert found, page.url
    return found.group(1)


def import_law(page, path) -> None:
    """Upload the two law papers on the Corpus page and build them as a corpus of their own."""
    page.get_by_role("link", name="Corpus").first.click()
    page.get_by_text("Corpora you import or build here are private").wait_for(timeout=60_000)
    page.get_by_test_id("stFileUploader").first.locator("input[type=file]").set_input_files(str(path))
    page.get_by_text("Create a new corpus from this file").click()
    languages = page.get_by_role("checkbox", name="Queries in other languages").first
    page.get_by_text("Queries in other languages", exact=True).first.click()  # the label: the box itself is covered
    expect(languages).not_to_be_checked()
    page.get_by_role("textbox", name="Name of the new corpus").first.fill("Law only")
    page.get_by_role("button", name="Build index").click()
    page.get_by_text("Built corpus law-only").wait_for(timeout=120_000)
    settle(page)


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_an_imported_corpus_comes_back_through_the_workspace_address_only(small_index, tmp_path):
    corpora_dir, law = tmp_path / "corpora", tmp_path / "law.jsonl"
    law.write_bytes(LAW_JSONL)
    env = {"CITREC_INDEX": str(small_index), "CITREC_CORPORA": str(corpora_dir), "HF_HUB_OFFLINE": "1"}
    with serve(env, tmp_path / "streamlit.log") as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1100})
        page.goto(base)
        page.get_by_text(DEFAULT).wait_for(timeout=60_000)
        assert "workspace=" not in page.url  # no workspace until something is imported
        import_law(page, law)
        token = token_of(page)
        built = corpora_dir / ".sessions" / token / "law-only"
        assert (built / "CURRENT").is_file()
        page.reload()  # a new session of the same address
        page.get_by_text("law-only · in use").wait_for(timeout=60_000)
        settle(page)
        text = page.inner_text("body")
        assert "Your corpora" in text and "2 papers, 1 citation link" in text and "Bookmark this page" in text
        assert f"?workspace={token}" in text and str(tmp_path) not in text  # the address, never a server path
        page.screenshot(path=str(tmp_path / "your-corpora.png"))

        page.get_by_role("link", name="Recommend").first.click()
        page.get_by_text(MINE).wait_for(timeout=60_000)
        page.get_by_role("textbox", name="Abstract or passage").fill("Judges cite precedents [CIT] in decisions.")
        page.get_by_role("button", name="Recommend").click()
        page.wait_for_url(re.compile(r"[?&]context="), timeout=60_000)  # the query's link
        settle(page)
        assert token_of(page) == token  # keeps the workspace
        page.reload()  # the Recommend page comes back on the corpus used last
        page.get_by_text(MINE).wait_for(timeout=60_000)

        again = browser.new_context().new_page()  # another browser, given the address
        again.goto(page.url)
        again.get_by_text(MINE).wait_for(timeout=60_000)

        stranger = browser.new_context().new_page()  # another browser, without the address
        stranger.goto(base)
        stranger.get_by_text(DEFAULT).wait_for(timeout=60_000)
        stranger.get_by_role("link", name="Corpus").first.click()
        stranger.get_by_text("Corpora you import or build here are private").wait_for(timeout=60_000)
        settle(stranger)
        assert "law-only" not in stranger.inner_text("body") and "workspace=" not in stranger.url
        stranger.goto(f"{base}/corpus?workspace={token[:-1]}A")  # a token one letter off
        stranger.get_by_text("Corpora you import or build here are private").wait_for(timeout=60_000)
        settle(stranger)
        assert "law-only" not in stranger.inner_text("body") and "workspace=" not in stranger.url

    with serve(env, tmp_path / "restarted.log") as base, chromium() as browser:  # a server restart
        page = browser.new_page(viewport={"width": 1360, "height": 1100})
        page.goto(f"{base}/?workspace={token}")
        page.get_by_text(MINE).wait_for(timeout=60_000)
        page.get_by_role("link", name="Corpus").first.click()
        page.get_by_text("law-only · in use").wait_for(timeout=60_000)
        page.get_by_role("button", name="Delete").first.click()
        page.get_by_role("button", name="Delete law-only").click()
        page.get_by_text("Deleted corpus law-only").wait_for(timeout=60_000)
        settle(page)
        assert not built.exists() and "No corpus in your workspace now" in page.inner_text("body")
        page.reload()
        page.get_by_text("No corpus in your workspace now").wait_for(timeout=60_000)
        settle(page)
        assert "law-only" not in page.inner_text("body")
