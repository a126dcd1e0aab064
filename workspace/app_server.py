"""The app as a server process: `streamlit run app.py` on a free local port, for the browser tests and
`bench.load`."""
from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from workspace import PROJECT_ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def app_server(log: Path, env: Mapping[str, str], root: Path = PROJECT_ROOT, start_timeout_s: float = 60,
               stop_timeout_s: float = 20) -> Iterator[tuple[str, int]]:
    """`streamlit run app.py` in checkout `root` with the environment `env` (the whole of it), its output in `log`;
    yields (base URL, process id) once the server answers its health check, and stops it at the end."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start:\n{log.read_text()}") from None
                time.sleep(0.3)
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(timeout=stop_timeout_s)
