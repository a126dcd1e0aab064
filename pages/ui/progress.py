"""A progress bar for long steps of a page (indexing, reading papers, learning)."""
from __future__ import annotations

from contextlib import contextmanager

import streamlit as st


@contextmanager
def bar(label: str):
    """A progress callback `(stage, done, total)` that draws a bar on first use and removes it at the end."""
    slot = st.empty()

    def report(stage: str, done: int, total: int) -> None:
        count = f"{done:,}/{total:,}" if total else f"{done:,}"  # total 0: not known yet
        slot.progress(min(done / total, 1.0) if total else 0.0, text=f"{label} — {stage} ({count})")

    try:
        yield report
    finally:
        slot.empty()
