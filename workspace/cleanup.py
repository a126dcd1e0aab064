"""The clean-up of private shelves: those whose session has ended, and those nobody has used for the idle limit.

Shelves and their removal are in `corpora`; this decides when. The app tells it which session uses which shelf
and how to ask whether a session is still connected.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from workspace import corpora, engine_caches

SWEEP_EVERY_S = 300
GRACE_S = 15 * 60  # a session whose connection dropped can come back for 2 minutes (Streamlit's default)
DEFAULT_IDLE_LIMIT_H = 24.0  # a shelf untouched this long goes even while its session seems connected


def idle_limit_s() -> float:
    """Seconds a private shelf may go untouched before it is removed even if its session lives on
    ($CITREC_PRIVATE_IDLE_HOURS, default 24 hours)."""
    return float(os.environ.get("CITREC_PRIVATE_IDLE_HOURS") or DEFAULT_IDLE_LIMIT_H) * 3600


class Sweeper:
    """Removes the shelves of ended sessions, at most once every SWEEP_EVERY_S, and frees their cached engines.

    It knows which session owns each shelf (`seen`) and asks `session_active(session id)` whether it is still
    connected, so that a shelf goes soon after its session ended; a shelf it has never seen (left by an earlier
    server process) goes after the grace period.
    """

    def __init__(self, session_active: Callable[[str], bool] = lambda session_id: False):
        self.session_active = session_active
        self.lock = threading.Lock()
        self.last = float("-inf")
        self.sessions: dict[str, str] = {}  # shelf owner -> session id

    def seen(self, shelf_owner: str, session_id: str) -> None:
        self.sessions[shelf_owner] = session_id

    def alive(self, shelf_owner: str) -> bool:
        """Whether the shelf's session is still connected to this server; a shelf of background builds counts as
        alive (it waits for its owner to come back until the idle limit)."""
        if (corpora.corpora_root() / corpora.PRIVATE_FOLDER / shelf_owner / corpora.JOBS_FOLDER).is_dir():
            return True
        session = self.sessions.get(shelf_owner)
        return session is not None and self.session_active(session)

    def maybe_sweep(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        if now - self.last < SWEEP_EVERY_S or not self.lock.acquire(blocking=False):
            return 0
        try:
            self.last = now
            removed = corpora.sweep_private_shelves(self.alive, GRACE_S, idle_limit_s(),
                                                    on_remove=engine_caches.release)
            for gone in [o for o in list(self.sessions) if not corpora.private_shelf(o).is_dir()]:
                self.sessions.pop(gone, None)
            return removed
        finally:
            self.lock.release()
