"""A lab server in a real browser: with a password set, no page's address opens without it.

Streamlit takes a folder named pages/ for a legacy list of pages and, until app.py has run once in the
server process, runs a page's script directly when its address is opened; this test opens such an
address first, on a fresh server.
"""
from __future__ import annotations

import pytest

from browser import HAS_CHROMIUM, chromium, serve

PASSWORD = "a password for the lab"


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_a_fresh_server_asks_for_the_password_on_every_address(small_index, tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(f'[citrec]\npassword = "{PASSWORD}"\n', encoding="utf-8")
    env = {"CITREC_INDEX": str(small_index), "CITREC_CORPORA": str(tmp_path / "corpora"),
           "STREAMLIT_SECRETS_FILES": str(secrets)}
    with serve(env, tmp_path / "streamlit.log") as base, chromium() as browser:
        page = browser.new_page()
        for address in ("/corpus", "/reviewer_check", "/"):
            page.goto(base + address)
            page.get_by_role("button", name="Enter").wait_for(timeout=60_000)
            assert "Papers" not in page.inner_text("body")  # the Corpus page's statistics never appear
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.keyboard.press("Enter")
        page.get_by_text("Find citations for your draft").wait_for(timeout=60_000)
