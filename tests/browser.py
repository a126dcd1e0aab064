"""A real `streamlit run` server and Debian's Chromium driven by Playwright, for the browser tests."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
START_TIMEOUT_S = 60
HAS_CHROMIUM = shutil.which("chromium") is not None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(env: dict[str, str], log: Path, root: Path = ROOT, base_env: dict[str, str] | None = None):
    """`streamlit run app.py` in `root` on a free local port; yields the base URL once the server is healthy.

    The server sees `base_env` (default: this process's environment) updated with `env`.
    """
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]
    environment = {**(os.environ if base_env is None else base_env), **env}
    with open(log, "w") as out:
        server = subprocess.Popen(command, cwd=root, env=environment, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start:\n{log.read_text()}") from None
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


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
