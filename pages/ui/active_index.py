"""The corpus this session works on: one it imported or chose on the Corpus page, else the one its workspace used
last (after a reload), else the default ($CITREC_INDEX, else the demo index, built on the first start)."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from pages.ui import progress, shelves
from workspace import corpora, personal
from workspace.demo import DemoIndex


@st.cache_resource(show_spinner=False)
def demo_index() -> DemoIndex:
    return DemoIndex()


def default_index_dir() -> str:
    """$CITREC_INDEX when set, else the demo index (built on first start, with a progress bar)."""
    if os.environ.get("CITREC_INDEX"):
        return os.environ["CITREC_INDEX"]
    demo = demo_index()
    if demo.directory is not None:
        return demo.directory
    with progress.bar("Indexing the demo corpus (first start only)") as report:
        return demo.ensure(report)


def active_index_dir() -> str:
    """This session's corpus: one it imported or chose on the Corpus page, else the one its workspace used last,
    else the default.

    A chosen corpus that has been deleted meanwhile (from another tab, or by the clean-up of unused workspaces)
    gives way to the default, with a notice.
    """
    if "corpus_dir" not in st.session_state and not shelves.shared():
        last = personal.last_used(shelves.shelf())
        if last is not None:
            st.session_state["corpus_dir"] = str(last)
    chosen = st.session_state.get("corpus_dir")
    if chosen and not (Path(chosen) / "CURRENT").is_file():
        set_active_index(default_index_dir())
        st.toast(f"The corpus {Path(chosen).name} no longer exists; you are back on the default corpus.")
        chosen = None
    if chosen and corpora.on_a_shelf(Path(chosen)):  # never the default corpus: the app does not modify it
        personal.mark_used(Path(chosen))
    return chosen or default_index_dir()


def set_active_index(directory: str | Path) -> None:
    """Switch this session to another corpus, and remember it in the workspace; results of the old one are
    dropped."""
    st.session_state["corpus_dir"] = str(directory)
    if not shelves.shared():
        personal.remember_choice(shelves.shelf(), Path(directory))
    for key in ("results", "review"):
        st.session_state.pop(key, None)


def corpus_name(directory: str) -> str:
    if corpora.on_a_shelf(Path(directory)):
        return Path(directory).name
    return "Demo corpus" if not os.environ.get("CITREC_INDEX") else Path(directory).name
