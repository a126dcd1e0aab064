"""Where this session's corpora live: the person's workspace, named by a token in the page's address.

By default the corpora one imports or builds are private: they live on a workspace shelf
(`.sessions/<random token>/` under the corpora root, `workspace.personal`) whose token the app's address carries
(`?workspace=...`) from the first import or build on. A reload, a closed browser or a server restart loses
nothing: the same address opens the same workspace, with its corpora, builds and learned models, and the corpus
used last. Nobody without the address lists it; it is removed once nobody has used it for the idle limit (24
hours, `workspace.cleanup`). The operator shares imports between all sessions with CITREC_SHARED_CORPORA=1 or
`shared_corpora = true` in the `[citrec]` table of .streamlit/secrets.toml; shared corpora stay until someone
deletes their folder.
"""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from workspace import corpora, personal
from workspace.cleanup import Sweeper

PARAM = "workspace"
EARLIER_PARAM = "builds"  # the address of private builds before workspaces: still opens them


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
    """This session's workspace token: the one the address names when that workspace exists, else a new one
    (its shelf is created by the first import or build)."""
    token = st.session_state.get("workspace")
    if token is None:
        given = str(st.query_params.get(PARAM) or st.query_params.get(EARLIER_PARAM) or "")
        token = st.session_state["workspace"] = given if personal.shelf_of(given) else personal.new_token()
    return token


def shelf() -> Path:
    """The folder this session's imports and builds go to and its corpus list comes from."""
    return corpora.corpora_root() if shared() else corpora.private_shelf(owner())


def in_address() -> dict[str, str]:
    """The query parameter that names this session's workspace, once it exists ({} before, or when shared)."""
    return {PARAM: owner()} if not shared() and shelf().is_dir() else {}


@st.cache_resource(show_spinner=False)
def sweeper() -> Sweeper:
    return Sweeper()


def keep_in_address() -> None:
    """Mark this session's workspace as in use and keep its token in the address (a page switch drops it); a
    token of no workspace is taken out of the address."""
    if shared():
        return
    given = st.query_params.get(PARAM) or st.query_params.get(EARLIER_PARAM)
    if corpora.touch_shelf(shelf()):
        st.query_params.pop(EARLIER_PARAM, None)
        if st.query_params.get(PARAM) != owner():
            st.query_params[PARAM] = owner()
    elif given:
        st.query_params.pop(PARAM, None)
        st.query_params.pop(EARLIER_PARAM, None)
        st.toast("This address named a workspace that does not exist (any longer): what you import now goes to a "
                 "new one.", icon=":material/bookmark_remove:")


def keep_alive() -> None:
    """Once per run of the app: `keep_in_address`, and now and then sweep the shelves nobody uses."""
    keep_in_address()
    sweeper().maybe_sweep()
