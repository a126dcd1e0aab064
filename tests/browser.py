"""A real `streamlit run` server and Debian's Chromium driven by Playwright, for the browser tests."""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from workspace.app_server import app_server

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
HAS_CHROMIUM = shutil.which("chromium") is not None


@contextmanager
def serve(env: dict[str, str], log: Path, root: Path = ROOT, base_env: dict[str, str] | None = None):
    """`streamlit run app.py` in `root` on a free local port; yields the base URL once the server is healthy.

    The server sees `base_env` (default: this process's environment) updated with `env`.
    """
    with app_server(log, {**(os.environ if base_env is None else base_env), **env}, root) as (url, _):
        yield url


@contextmanager
def chromium():
    """A headless Chromium (Debian's) under Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def settle(page, quiet_ms: int = 1000, step_ms: int = 250) -> None:
    """Wait until Streamlit has drawn everything: no loading skeleton or running indicator for `quiet_ms`."""
    quiet = 0
    while quiet < quiet_ms:
        busy = page.get_by_test_id("stSkeleton").count() or page.get_by_test_id("stStatusWidget").count()
        quiet = 0 if busy else quiet + step_ms
        page.wait_for_timeout(step_ms)
