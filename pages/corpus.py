"""Corpus: statistics of the active corpus, switching corpora, importing a corpus file, building one from a
source (OpenAlex, an arXiv snapshot, Zotero, a folder of PDFs) in the background, and learning from papers that
cite it."""
from __future__ import annotations

import gzip
import io
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from pages.ui import access, active_index, builds, engines, field_training, markdown, progress, shelves
from pages.ui.server_paths import without_paths
from recommender.corpus.loaders import CorpusError, LoadResult, load_corpus
from recommender.pipeline.learned import describe_learned
from workspace import cleanup, corpora, engine_caches, personal

PREVIEW_ROWS = 50
MAX_UNPACKED_BYTES = 512 * 2**20  # a gzipped upload, unpacked (the loader holds a .json or .bib file whole)
SHOWN_PROBLEMS = 200


def choose_corpus(directory: str) -> None:
    """Switch this session between the default corpus and those of its workspace (or the shared ones)."""
    default = active_index.default_index_dir()
    options = {active_index.corpus_name(default): default}
    for name, path in corpora.list_corpora(shelves.shelf()).items():
        options[name if name not in options else f"{name} (yours)"] = str(path)
    names = list(options)
    current = next((n for n, d in options.items() if Path(d) == Path(directory)), names[0])
    choice = st.selectbox("Active corpus", names, index=names.index(current),
                          help="Only this browser session switches; other users keep their corpus.")
    if options[choice] != directory:
        active_index.set_active_index(options[choice])
        st.rerun()


def workspace_panel(directory: str) -> None:
    """Who sees the corpora imported here; in private mode the workspace's address and its corpora, each with its
    size, dates and a delete button."""
    if shelves.shared():
        st.caption("Corpora imported here are shared with everyone who uses this server.")
        return
    shelves.keep_in_address()  # also when the page runs without app.py (opened by address on a fresh server)
    if not shelves.shelf().is_dir():
        st.caption("Corpora you import or build here are private: they go to a workspace of your own, which this "
                   "page's address opens from then on.")
        return
    st.subheader("Your corpora")
    hours = f"{cleanup.idle_limit_s() / 3600:g}"
    st.info("**Bookmark this page.** Its address opens your workspace: your corpora, your builds and what they "
            "learned, after a reload, a closed browser or a server restart. Whoever has the address sees them and "
            f"nobody else; they are deleted from the server {hours} hours after the address was last used.",
            icon=":material/bookmark:")
    st.code(workspace_address(), language=None)
    mine = personal.your_corpora(shelves.shelf())
    if not mine:
        st.caption("No corpus in your workspace now.")
    for corpus in mine:
        corpus_row(corpus, Path(directory) == corpus.directory)


def workspace_address() -> str:
    """This page's address with the workspace's token (relative when the browser's address is not known)."""
    return f"{st.context.url or ''}?{shelves.PARAM}={shelves.owner()}"


def corpus_row(corpus: personal.CorpusInfo, active: bool) -> None:
    """One corpus of the workspace: its name, size and dates, a button to use it and one to delete it."""
    counts = "" if corpus.papers is None else \
        f"{count(corpus.papers, 'paper')}, {count(corpus.links, 'citation link')} · "
    with st.container(border=True, key=f"yours_{corpus.name}"):
        about, use, delete = st.columns([5, 1, 1.4], vertical_alignment="center")
        about.markdown(f"**{corpus.name}**" + (" · in use" if active else "") + "  \n"
                       f"{counts}{corpus.disk_bytes / 1e6:,.1f} MB on the server  \n"
                       f"changed {when(corpus.changed)} · last used {when(corpus.used)}")
        if use.button("Use", key=f"use_{corpus.name}", disabled=active):
            active_index.set_active_index(corpus.directory)
            st.rerun()
        with delete.popover("Delete", icon=":material/delete:"):
            st.markdown(f"Delete **{corpus.name}** and what it learned from the server? This cannot be undone.")
            if st.button(f"Delete {corpus.name}", key=f"delete_{corpus.name}", type="primary"):
                delete_corpus(corpus.directory, active)


def when(seconds: float) -> str:
    """"28 Nov 2026 09:41" (the server's time zone), never broken across lines."""
    return time.strftime("%d %b %Y %H:%M", time.localtime(seconds)).replace(" ", "\u00a0")


def delete_corpus(directory: Path, active: bool) -> None:
    """Delete a corpus of the workspace, with what it learned; the default corpus takes over if it was in use."""
    engine_caches.release(directory)
    corpora.delete_corpus(directory, shelves.shelf())
    if active:
        active_index.set_active_index(active_index.default_index_dir())
    st.session_state["corpus_message"] = f"Deleted corpus {directory.name}."
    st.rerun()


def statistics(index) -> None:
    years = index.years[index.years > 0]
    citations = index.graph.in_degree
    a, b, c, d = st.columns(4)
    a.metric("Papers", f"{len(index):,}")
    b.metric("Citation links", f"{index.graph.edge_count:,}")
    c.metric("Years", f"{years.min()}–{years.max()}" if len(years) else "—")
    d.metric("Venues", f"{len({v for v in index.venues if v}):,}")
    st.caption(describe_learned(index.root))
    st.caption(describe_languages(index))
    left, right = st.columns(2)
    if len(years):
        counts = Counter(years.tolist())
        left.plotly_chart(chart(go.Bar(x=list(counts), y=list(counts.values()), marker_color="#4c78a8"),
                                "Papers per year", "year", "papers"), key="years")
    venues = Counter(v for v in index.venues if v).most_common(12)[::-1]
    if venues:
        right.plotly_chart(chart(go.Bar(x=[n for _, n in venues], y=[v[:50] for v, _ in venues], orientation="h",
                                        marker_color="#f58518"), "Top venues", "papers", None), key="venues")
    left, right = st.columns(2)
    bins = Counter(np.minimum(citations, 20).tolist())
    left.plotly_chart(chart(go.Bar(x=[str(k) if k < 20 else "20+" for k in sorted(bins)],
                                   y=[bins[k] for k in sorted(bins)], marker_color="#54a24b"),
                            "Citations received within the corpus", "citations", "papers"), key="citations")
    top = np.argsort(-citations, kind="stable")[:10]
    right.markdown("**Most cited in this corpus**")
    right.dataframe({"Title": [index.titles[i] for i in top], "Year": [int(index.years[i]) or None for i in top],
                     "Cited by": [int(citations[i]) for i in top]}, hide_index=True)


def describe_languages(index) -> str:
    """Whether queries in other languages get the multilingual index, for people."""
    if index.multilingual is None:
        return ("Queries in other languages get the English pipeline only: this corpus was indexed without the "
                "multilingual encoder (tick “Queries in other languages” when you import papers).")
    glossary = f", and are read into English through {len(index.glossary.words):,} of its words" if index.glossary else ""
    return f"Queries in other languages are matched through the multilingual index{glossary}."


def chart(trace, title: str, x_title: str | None, y_title: str | None) -> go.Figure:
    fig = go.Figure(trace)
    fig.update_layout(title=title, height=320, margin=dict(l=10, r=10, t=40, b=10),
                      xaxis_title=x_title, yaxis_title=y_title)
    return fig


@st.cache_data(show_spinner="Reading and validating the file…", max_entries=4, ttl="10m")
def read_upload(name: str, data: bytes) -> LoadResult:
    """Validate an uploaded corpus file with the loader (it needs a path, so the bytes go to a temp file)."""
    check_unpacked_size(name, data)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(name).name
        path.write_bytes(data)
        try:
            result = load_corpus(path)
        except CorpusError as exc:  # its message names the file by the server's temporary path: name the upload
            raise CorpusError(str(exc).replace(str(path), Path(name).name)) from None
    result.path = Path(name).name
    return result


def check_unpacked_size(name: str, data: bytes) -> None:
    """CorpusError when a gzipped upload unpacks to more than MAX_UNPACKED_BYTES (counted while unpacking, a
    megabyte at a time); a damaged one is left to the loader, which says what is wrong with it."""
    if data[:2] != b"\x1f\x8b":
        return
    unpacked = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
            while chunk := handle.read(2**20):
                unpacked += len(chunk)
                if unpacked > MAX_UNPACKED_BYTES:
                    raise CorpusError(f"{Path(name).name} unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MB; "
                                      f"compressed files of up to {MAX_UNPACKED_BYTES // 2**20} MB unpacked are "
                                      "read: split it into several files.")
    except (OSError, EOFError, zlib.error):
        return


def count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def validation_report(result: LoadResult) -> None:
    st.markdown(f"**{markdown.plain(result.path)}** ({result.format}): read {result.read:,} records, "
                f"kept {result.kept:,}, skipped {result.skipped:,}; "
                f"{count(len(result.errors), 'error')}, {count(len(result.warnings), 'warning')}.")
    if result.problems:
        shown = result.problems[:SHOWN_PROBLEMS]
        st.dataframe({"Where": [p.location for p in shown], "Severity": [p.severity for p in shown],
                      "Problem": [p.message for p in shown]}, hide_index=True, height=200)
        if len(result.problems) > SHOWN_PROBLEMS:
            st.caption(f"The first {SHOWN_PROBLEMS} of {len(result.problems):,} problems are shown.")
    if result.papers:
        st.markdown(f"**Preview** (first {min(PREVIEW_ROWS, result.kept)} papers)")
        rows = result.papers[:PREVIEW_ROWS]
        st.dataframe({"ID": [p.id for p in rows], "Title": [p.title for p in rows],
                      "Authors": ["; ".join(p.authors) for p in rows], "Year": [p.year for p in rows],
                      "Venue": [p.venue for p in rows], "References": [len(p.references) for p in rows]},
                     hide_index=True, height=260)


def build(result: LoadResult, directory: str) -> None:
    """Create or extend a corpus from the validated papers; on failure the active corpus stays as it was."""
    shelf = shelves.shelf()
    user_corpus = corpora.is_user_corpus(Path(directory), shelf)
    actions = ["Create a new corpus from this file",
               "Add to the active corpus" if user_corpus else "New corpus: the active corpus plus this file"]
    action = st.radio("What to build", actions, key="imp_action")
    extend_in_place = action == actions[1] and user_corpus
    name = st.text_input("Name of the new corpus", value=Path(result.path).name.split(".")[0], key="imp_name",
                         disabled=extend_in_place)
    active = engines.index(directory)
    multilingual = st.checkbox("Queries in other languages", key="imp_multilingual",
                               value=active.multilingual is not None, disabled=extend_in_place,
                               help="Also index with the multilingual encoder, so that passages in Chinese, "
                                    "German, Japanese and other languages find these papers; the build takes "
                                    "about twice as long. Adding to a corpus keeps its setting.")
    if not st.button("Build index", type="primary", icon=":material/build:", key="imp_build"):
        return
    st.caption("Leaving the page or pressing Stop cancels the build; the active corpus is then unchanged.")
    try:
        with progress.bar("Building the index") as report:
            if extend_in_place:
                added = corpora.extend_corpus(Path(directory), result.papers, on_progress=report, shelf=shelf)
                target, message = directory, f"Added {added:,} new papers to {Path(directory).name}."
            else:
                base = active if action == actions[1] else None
                target = str(corpora.create_corpus(name, result.papers, base=base, on_progress=report,
                                                   multilingual=multilingual, shelf=shelf))
                message = f"Built corpus {Path(target).name}; it is now your active corpus."
    except Exception as exc:  # any failure must leave the active corpus in place and say why
        reason = markdown.plain(without_paths(str(exc)))
        st.error(f"The import failed and the active corpus is unchanged: {reason}")
        return
    active_index.set_active_index(target)
    st.session_state["corpus_message"] = message
    st.rerun()


def import_section(directory: str) -> None:
    """Upload a corpus file, see what was read from it, and build an index of it."""
    st.caption("JSONL (one paper per line), BibTeX or CSL-JSON, optionally gzipped.")
    upload = st.file_uploader("Corpus file", type=["jsonl", "ndjson", "json", "bib", "bibtex", "gz"], key="imp_file")
    if upload is None:
        return
    try:
        loaded = read_upload(upload.name, upload.getvalue())
    except CorpusError as exc:
        st.error(str(exc))
        return
    validation_report(loaded)
    if not loaded.papers:
        st.error("No usable paper in this file; fix the problems above and upload it again.")
        return
    build(loaded, directory)


access.require()
directory = active_index.active_index_dir()
st.title("Corpus")
choose_corpus(directory)
workspace_panel(directory)
if message := st.session_state.pop("corpus_message", None):
    st.success(message)
builds.builds()
statistics(engines.index(directory))

st.header("Add papers")
from_file, from_source = st.tabs(["Import a file", "Build from a source"])
with from_file:
    import_section(directory)
with from_source:
    builds.form()

field_training.section(directory)
