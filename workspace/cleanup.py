"""The clean-up of private shelves (workspaces): those nobody has used for the idle limit, and empty ones.

Shelves and their removal are in `corpora`; this decides when. A workspace is kept while it is used (each run of
the app touches it) and for the idle limit after, so that its address still opens it after a closed browser or a
server restart; one holding nothing (no corpus, none being built) goes after a short grace period.
"""
from __future__ import annotations

import os
import threading
import time

from workspace import corpora, engine_caches

SWEEP_EVERY_S = 300
GRACE_S = 15 * 60  # an empty shelf goes after this long untouched
DEFAULT_IDLE_LIMIT_H = 24.0  # a shelf untouched this long goes, whatever it holds


def idle_limit_s() -> float:
    """Seconds a private shelf may go untouched before it is removed ($CITREC_PRIVATE_IDLE_HOURS, default 24
    hours)."""
    return float(os.environ.get("CITREC_PRIVATE_IDLE_HOURS") or DEFAULT_IDLE_LIMIT_H) * 3600


class Sweeper:
    """Removes unused shelves, at most once every SWEEP_EVERY_S, and frees their cached engines."""

    def __init__(self):
        self.lock = threading.Lock()
        self.last = float("-inf")

    @staticmethod
    def alive(shelf_owner: str) -> bool:
        """Whether the shelf holds something to come back to: a corpus (or one being imported) or builds; such a
        shelf waits for its owner until the idle limit."""
        shelf = corpora.corpora_root() / corpora.PRIVATE_FOLDER / shelf_owner  # as the sweep found it
        try:
            return any(entry.is_dir() for entry in shelf.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return False

    def maybe_sweep(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        if now - self.last < SWEEP_EVERY_S or not self.lock.acquire(blocking=False):
            return 0
        try:
            self.last = now
            return corpora.sweep_private_shelves(self.alive, GRACE_S, idle_limit_s(), on_remove=engine_caches.release)
        finally:
            self.lock.release()
