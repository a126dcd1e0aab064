"""Where this session's imported corpora live, and their removal when the session is gone (`workspace.cleanup`).

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
from pathlib import Path

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from workspace import corpora
from workspace.cleanup import Sweeper


def settings() -> dict:
    """The `[citrec]` table of secrets.toml, or {} when there is none."""
    if not st.secrets.load_if_toml_exists():
        return {}
    return dict(st.secrets.get("citrec", {}))


def shared() -> bool:
    """Whether imported corpora are shared by all sessions (the operator's choice)."""
    flag = os.environ.get("CITREC_SHARED_CORPORA", "")
    return flag.strip().lower() in {"1", "true", "yes", "on"} or settings().get("shared_corpora") is True


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


def session_active(session_id: str) -> bool:
    """Whether a Streamlit session is still connected to this server."""
    return runtime.exists() and runtime.get_instance().is_active_session(session_id)


@st.cache_resource(show_spinner=False)
def sweeper() -> Sweeper:
    return Sweeper(session_active)


def seen(shelf_owner: str) -> None:
    """Tell the sweeper that this session uses the shelf of `shelf_owner`."""
    context = get_script_run_ctx()
    if context is not None:
        sweeper().seen(shelf_owner, context.session_id)


def keep_alive() -> None:
    """Once per run: mark this session's shelf as in use and, now and then, sweep the ended sessions' shelves."""
    if not shared() and corpora.touch_shelf(shelf()):
        seen(owner())
    if not shared() and "builds_owner" in st.session_state and corpora.touch_shelf(builds_shelf()):
        seen(st.session_state["builds_owner"])
    sweeper().maybe_sweep()
