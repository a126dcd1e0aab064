"""Where this session's imported corpora live, and their removal when the session is gone.

By default a corpus imported in a browser session is private to it: it lives on the session's own shelf
(`.sessions/<random token of the session>/` under the corpora root), no other session lists it, and it is
deleted a while after the session ends. The operator shares imports between all sessions with CITREC_SHARED_CORPORA=1 or
`shared_corpora = true` in the `[citrec]` table of .streamlit/secrets.toml; shared corpora stay until
someone deletes their folder.

Corpora built from a source in the background (`builds_shelf`) outlive the session that started them: in
private mode they go to a shelf of their own whose random token the Corpus page's address carries
(`?builds=...`), so that a reload, or the same address opened again after the browser was closed, finds the
builds and their corpora; the shelf is removed once no session has used it for the idle limit (24 hours).
"""
from __future__ import annotations

import os
import secrets
import threading
import time
from pathlib import Path

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from pages.ui import common, corpora

SWEEP_EVERY_S = 300
GRACE_S = 15 * 60  # a session whose connection dropped can come back for 2 minutes (Streamlit's default)
DEFAULT_IDLE_LIMIT_H = 24.0  # a shelf untouched this long goes even while its session seems connected


def settings() -> dict:
    """The `[citrec]` table of secrets.toml, or {} when there is none."""
    if not st.secrets.load_if_toml_exists():
        return {}
    return dict(st.secrets.get("citrec", {}))


def shared() -> bool:
    """Whether imported corpora are shared by all sessions (the operator's choice)."""
    flag = os.environ.get("CITREC_SHARED_CORPORA", "")
    return flag.strip().lower() in {"1", "true", "yes", "on"} or settings().get("shared_corpora") is True


def idle_limit_s() -> float:
    """Seconds a private shelf may go untouched before it is removed even if its session lives on
    ($CITREC_PRIVATE_IDLE_HOURS, default 24 hours)."""
    return float(os.environ.get("CITREC_PRIVATE_IDLE_HOURS") or DEFAULT_IDLE_LIMIT_H) * 3600


def owner() -> str:
    """This session's private shelf name: a random token kept in the session state."""
    return st.session_state.setdefault("shelf_owner", secrets.token_hex(16))


def shelf() -> Path:
    """The folder this session's imports go to and its corpus list comes from."""
    return corpora.corpora_root() if shared() else corpora.private_shelf(owner())


BUILDS_PARAM = "builds"


def builds_shelf() -> Path:
    """The folder this session's background builds go to: the shared shelf, or the private shelf named by the
    page's address (?builds=TOKEN) when it exists, else a new one (created by the first build)."""
    if shared():
        return corpora.corpora_root()
    token = st.session_state.get("builds_owner")
    if token is None:
        given = str(st.query_params.get(BUILDS_PARAM, ""))
        known = corpora.OWNER_RE.fullmatch(given) and corpora.private_shelf(given).is_dir()
        token = st.session_state["builds_owner"] = given if known else secrets.token_hex(16)
    return corpora.private_shelf(token)


class Sweeper:
    """Removes the shelves of ended sessions, at most once every SWEEP_EVERY_S, and frees their cached engines.

    It knows which Streamlit session owns each shelf (`seen`), so that a shelf goes soon after its session
    ended; a shelf it has never seen (left by an earlier server process) goes after the grace period.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.last = float("-inf")
        self.sessions: dict[str, str] = {}  # shelf owner -> Streamlit session id

    def seen(self, shelf_owner: str) -> None:
        context = get_script_run_ctx()
        if context is not None:
            self.sessions[shelf_owner] = context.session_id

    def alive(self, shelf_owner: str) -> bool:
        """Whether the shelf's session is still connected to this server; a shelf of background builds counts as
        alive (it waits for its owner to come back until the idle limit)."""
        if (corpora.corpora_root() / corpora.PRIVATE_FOLDER / shelf_owner / corpora.JOBS_FOLDER).is_dir():
            return True
        session = self.sessions.get(shelf_owner)
        return session is not None and runtime.exists() and runtime.get_instance().is_active_session(session)

    def maybe_sweep(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        if now - self.last < SWEEP_EVERY_S or not self.lock.acquire(blocking=False):
            return 0
        try:
            self.last = now
            removed = corpora.sweep_private_shelves(self.alive, GRACE_S, idle_limit_s(), on_remove=common.release)
            for gone in [o for o in list(self.sessions) if not corpora.private_shelf(o).is_dir()]:
                self.sessions.pop(gone, None)
            return removed
        finally:
            self.lock.release()


@st.cache_resource(show_spinner=False)
def sweeper() -> Sweeper:
    return Sweeper()


def keep_alive() -> None:
    """Once per run: mark this session's shelf as in use and, now and then, sweep the ended sessions' shelves."""
    if not shared() and corpora.touch_shelf(shelf()):
        sweeper().seen(owner())
    if not shared() and "builds_owner" in st.session_state and corpora.touch_shelf(builds_shelf()):
        sweeper().seen(st.session_state["builds_owner"])
    sweeper().maybe_sweep()
