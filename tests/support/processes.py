"""Killing a child process at a chosen point, whatever the machine's speed.

The child says it got there by writing a marker file, then waits to be killed (it cannot run on and finish
first); the test waits for the marker, with a limit that only a hung child reaches, then kills it.

- In a child script: `pause_here(marker)` where it should be killed.
- For `python -m recommender ...`: `paused_cli(marker)` is the command line that runs it (the same
  `__main__`, in a process of its own) and pauses it once its first chunk of embeddings is saved to the
  embedding cache, i.e. mid-build, with the build lock held and the staging folder written.
- In the test: `wait_for_marker(marker, process, what)`, then `kill(process)`.

The child waits by reading its standard input, which the test opens as a pipe and never writes: a child
whose test ended without killing it (an error in between) reads the end of that input and exits.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
PROJECT = TESTS.parent
WAIT_S = 300  # only a hung child takes this long: a build loads the language model in a fresh process


def pause_here(marker: Path | str) -> None:
    """In the child: write `marker`, then wait to be killed (exit if the test is gone)."""
    Path(marker).write_text(str(os.getpid()), encoding="ascii")
    sys.stdin.read()  # never written to: blocks until killed, or until the test's end closes it
    os._exit(3)


def pause_after_first_saved_chunk(marker: Path | str) -> None:
    """In the child: `pause_here(marker)` as soon as the first chunk of embeddings is committed to the cache."""
    from recommender.embedding.cache import EmbeddingCache

    put_many = EmbeddingCache.put_many

    def put_many_then_pause(self, items):
        put_many(self, items)
        pause_here(marker)

    EmbeddingCache.put_many = put_many_then_pause


def paused_cli(marker: Path | str) -> list[str]:
    """The command line of `python -m recommender` (arguments to be appended) that pauses after its first
    chunk of embeddings is saved; run it with cwd=PROJECT and stdin=subprocess.PIPE."""
    script = (f"import runpy, sys; sys.path.insert(0, {str(TESTS)!r})\n"
              "from support.processes import pause_after_first_saved_chunk\n"
              f"pause_after_first_saved_chunk({str(marker)!r})\n"
              "runpy.run_module('recommender', run_name='__main__', alter_sys=True)\n")
    return [sys.executable, "-c", script]


def wait_for_marker(marker: Path, process: subprocess.Popen, what: str, timeout: float = WAIT_S) -> None:
    """Wait until `process` writes `marker`; fail if it ends without writing it, or hangs for `timeout` s."""
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if process.poll() is not None:
            pytest.fail(f"the process ended (exit code {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"the process did not get to {what} in {timeout:g} s")
        time.sleep(0.05)


def kill(process: subprocess.Popen) -> None:
    """SIGKILL (no chance to clean up, as the OOM killer or a power cut), then reap it and close its input."""
    process.kill()
    process.wait()
    if process.stdin:
        process.stdin.close()
