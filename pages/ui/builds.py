"""The Corpus page's "Build from a source": a form per source, and the builds running in the background.

A build runs `python -m recommender corpus ...` and then `python -m recommender index ...` in a process of its
own (`corpora.start_build`, `recommender.background`): it goes on when the browser is closed, and a new session
of the page with the workspace's address (a reload) sees it and its progress. When it is done, its corpus is
listed with the imported ones.

OpenAlex and Semantic Scholar are always offered. The arXiv snapshot, a Zotero library and a folder of PDFs are read from paths on
the server, which only its operator may allow (CITREC_ALLOW_SERVER_PATHS=1 or `allow_server_paths = true` under
`[citrec]` in .streamlit/secrets.toml): whoever uses the app could otherwise read the server's files into a
corpus. Set it only when the app runs on your own computer.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import streamlit as st

from pages.ui import active_index, markdown, shelves
from pages.ui.server_paths import without_paths
from recommender.background import Job, JobBusy
from recommender.corpus.sources.command import parse_years
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.openalex import OpenAlexQuery
from recommender.corpus.sources.semantic_scholar import seed_id
from workspace import cleanup, corpora

POLL_S = 2.0  # how often the page redraws the builds while one runs
SOURCES = {"openalex": "OpenAlex", "s2": "Semantic Scholar", "arxiv": "arXiv snapshot", "zotero": "Zotero library", "pdfs": "Folder of PDFs"}
SERVER_SOURCES = ("arxiv", "zotero", "pdfs")
EXPANSIONS = {"none": "No", "refs": "The works they cite", "cites": "The works citing them",
              "both": "Both: cited and citing works"}
STATE_TEXT = {"running": "running", "done": "done", "failed": "failed", "stopped": "stopped",
              "interrupted": "interrupted", "created": "not started", "starting": "starting"}
_SPLIT_RE = re.compile(r"[\s,;]+")
_KEPT_RE = re.compile(r";? ?what was downloaded is kept in \S+?:? run the same command again to continue")
_NETWORK_RE = re.compile(r"cannot reach|did not answer within|does not resolve|no network|connection (?:refused|"
                         r"was dropped)|network down", re.IGNORECASE)


def server_paths_allowed() -> bool:
    """Whether the operator lets users name files and folders on the server (the app runs on their computer)."""
    flag = os.environ.get("CITREC_ALLOW_SERVER_PATHS", "")
    return flag.strip().lower() in {"1", "true", "yes", "on"} or shelves.settings().get("allow_server_paths") is True


def builds() -> None:
    """The builds of this workspace (or of everyone's, with shared corpora): running, done or interrupted."""
    jobs_panel(shelves.shelf())


def form() -> None:
    """The form that starts a build."""
    build_form(shelves.shelf())


# --------------------------------------------------------------------------- the running and finished builds


def jobs_panel(shelf: Path) -> None:
    jobs = corpora.build_jobs(shelf)
    for slug, job in list(jobs.items()):  # a finished build whose corpus was deleted since has nothing to say
        if job.state() == "done" and not (shelf / slug / "CURRENT").is_file():
            job.remove()
            del jobs[slug]
    if not jobs:
        return
    st.subheader("Builds in the background")
    running = any(job.running() for job in jobs.values())
    st.fragment(show_jobs, run_every=POLL_S if running else None)(shelf)


def show_jobs(shelf: Path) -> None:
    """Each build with its state and progress; redrawn every POLL_S seconds while one runs."""
    if error := st.session_state.pop("build_error", None):
        st.error(markdown.plain(error))
    seen = st.session_state.setdefault("build_states", {})
    changed = False
    for slug, job in corpora.build_jobs(shelf).items():
        status = job.status()
        state = status.get("state", "created")
        changed |= seen.get(slug, state) != state
        seen[slug] = state
        with st.container(border=True, key=f"build_{slug}"):
            show_job(shelf, slug, job, status)
    if changed:  # the whole page: a new corpus joins the list, and polling starts or stops
        st.rerun()


def show_job(shelf: Path, slug: str, job: Job, status: dict) -> None:
    state = status.get("state", "created")
    name = markdown.plain(job.name)
    step, steps, label = status.get("step"), status.get("steps"), status.get("label") or ""
    where = f"step {step} of {steps}: {label.lower()}" if step and steps else ""
    st.markdown(f"**{name}** · {STATE_TEXT.get(state, state)}" + (f" · {where}" if where and state != "done" else ""))
    progress = status.get("progress") or {}
    if state == "running":
        text = markdown.plain(progress.get("text") or "starting…")
        fraction = progress.get("fraction")
        st.progress(fraction if isinstance(fraction, (int, float)) else 0.0, text=text)
        st.button("Stop", key=f"build_stop_{slug}", icon=":material/stop:", on_click=job.stop)
    elif state == "done":
        st.success(f"Built corpus {slug}{size_of(shelf / slug)}; choose it as the active corpus above, or here.")
        left, right, _ = st.columns([1, 1, 3])
        if left.button("Use it now", key=f"build_use_{slug}", icon=":material/check:", type="primary"):
            active_index.set_active_index(str(shelf / slug))
            job.remove()
            st.rerun()
        if right.button("Dismiss", key=f"build_dismiss_{slug}"):
            job.remove()
            st.rerun()
    else:
        message = status.get("message") or ""
        if state == "failed":
            st.error(failure_text(message))
        elif state in ("interrupted", "stopped"):
            why = "was stopped" if state == "stopped" else "ended before it was done (the server restarted?)"
            st.warning(f"The build {why}; what it downloaded is kept. Resume it to continue.")
        left, right, _ = st.columns([1, 1, 3])
        left.button("Resume", key=f"build_resume_{slug}", icon=":material/play_arrow:", on_click=resume, args=(job,))
        right.button("Remove", key=f"build_remove_{slug}", icon=":material/delete:", on_click=remove, args=(job,))
    log = job.log_tail(30)
    if log:
        with st.expander("Log"):
            st.code(without_paths(_KEPT_RE.sub("", log)), language=None)


def failure_text(message: str) -> str:
    """Why a build failed, for a web visitor: no server paths, no command to run; a network failure says to press
    Resume once the network is back (what was downloaded is kept)."""
    reason = without_paths(_KEPT_RE.sub("", message)).strip(" ;:")
    if _NETWORK_RE.search(reason):
        return (f"The build stopped: the network or the service could not be reached ({markdown.plain(reason)}). "
                "What was downloaded is kept: press **Resume** when the network is back.")
    return f"The build failed: {markdown.plain(reason)}."


def size_of(directory: Path) -> str:
    """" (1,234 papers, 5,678 citation links)" from the corpus's manifest, or "" when it cannot be read."""
    counts = corpora.corpus_counts(directory)
    return f" ({counts[0]:,} papers, {counts[1]:,} citation links)" if counts else ""


def resume(job: Job) -> None:
    try:
        corpora.resume_build(job)
    except (JobBusy, ValueError) as exc:
        st.session_state["build_error"] = str(exc)


def remove(job: Job) -> None:
    try:
        job.remove()
    except JobBusy as exc:
        st.session_state["build_error"] = str(exc)


# --------------------------------------------------------------------------- starting a build


def build_form(shelf: Path) -> None:
    if message := st.session_state.pop("build_message", None):
        st.success(message)
    allowed = server_paths_allowed()
    source = st.segmented_control("Source", list(SOURCES), format_func=SOURCES.get, default="openalex",
                                  key="src_kind", required=True)
    if source in SERVER_SOURCES and not allowed:
        st.info("Reading an arXiv snapshot, a Zotero library or a folder of PDFs means naming files on the server, "
                "which this server does not allow. When the app runs on your own computer, start it with "
                "CITREC_ALLOW_SERVER_PATHS=1; otherwise build the corpus on your computer with "
                "`python -m recommender corpus` and import the file above.")
        return
    with st.form("build_form", border=False):
        arguments = FORMS[source]()
        name = st.text_input("Name of the new corpus", key="src_name")
        multilingual = st.checkbox("Queries in other languages", key="src_multilingual",
                                   help="Also index with the multilingual encoder (the build takes about twice as "
                                        "long).")
        submitted = st.form_submit_button("Start the build", type="primary", icon=":material/play_arrow:")
    st.caption("The build runs on the server in the background: you may leave this page or close the browser. "
               + ("Builds are shared with everyone who uses this server." if shelves.shared() else
                  "Come back to your workspace's address to follow it; its corpus is kept for "
                  f"{cleanup.idle_limit_s() / 3600:g} hours after your last visit."))
    if not submitted:
        return
    try:
        corpora.start_build(name, arguments(), shelf, multilingual=multilingual, keep_fresh=not shelves.shared())
    except (SourceError, ValueError, JobBusy, OSError) as exc:  # paths only where the user may name them
        message = str(exc) if allowed else without_paths(str(exc))
        st.error(f"The build was not started: {markdown.plain(message)}")
        return
    st.session_state["build_message"] = (f"Started building {corpora.slugify(name)} in the background; its progress "
                                         "is shown above.")
    st.rerun()


def _ids(text: str) -> list[str]:
    return [part for part in _SPLIT_RE.split(text.strip()) if part]


def openalex_form():
    search = st.text_input("Search terms", key="oa_search", placeholder="citation recommendation",
                           help="Searched in titles, abstracts and full texts.")
    left, right = st.columns(2)
    years = left.text_input("Years", key="oa_years", placeholder="2015-2025", help="2015-2025, 2015, 2015- or -2020")
    limit = right.number_input("At most this many papers found by the search", min_value=1, max_value=2_000_000,
                               value=2000, step=500, key="oa_limit")
    venues = left.text_input("Venues (OpenAlex source ids, optional)", key="oa_venues", placeholder="S4306420609",
                             help="Find them at https://api.openalex.org/sources?search=...")
    concepts = right.text_input("Concepts or topics (OpenAlex ids, optional)", key="oa_concepts",
                                placeholder="C41008148 T10181", help="C… concept ids, T… topic ids")
    expand = left.selectbox("Add one hop along the citation graph", list(EXPANSIONS), format_func=EXPANSIONS.get,
                            key="oa_expand")
    expand_limit = right.number_input("At most this many papers added by the hop", min_value=1,
                                      max_value=5_000_000, value=5000, step=1000, key="oa_expand_limit")
    mailto = st.text_input("Your e-mail (OpenAlex's faster polite pool)", key="oa_mailto",
                           value=os.environ.get("OPENALEX_MAILTO", ""))

    def arguments() -> list[str]:
        topic_ids = [i for i in _ids(concepts) if i.rsplit("/", 1)[-1][:1] in "Tt"]  # T...: topics, else concepts
        concept_ids = [i for i in _ids(concepts) if i not in topic_ids]
        parse_years(years)
        OpenAlexQuery(search=search, concepts=tuple(concept_ids), topics=tuple(topic_ids), venues=tuple(_ids(venues)))
        argv = ["openalex", f"--search={search.strip()}", "--limit", str(int(limit)), "--expand", expand]
        if years.strip():
            argv.append(f"--years={years.strip()}")
        for flag, values in (("--venue", _ids(venues)), ("--concept", concept_ids), ("--topic", topic_ids)):
            if values:
                argv += [flag, *values]
        if expand != "none":
            argv += ["--expand-limit", str(int(expand_limit))]
        if mailto.strip():
            argv.append(f"--mailto={mailto.strip()}")
        return argv

    return arguments


def semantic_scholar_form():
    seeds = st.text_area("Seed papers, one a line", key="s2_seeds", height=120,
                         placeholder="10.18653/v1/D19-1410\narXiv:1908.10084\nCorpusId:201646309",
                         help="DOIs, arXiv ids, CorpusId:N or Semantic Scholar paper ids; the papers of your field "
                              "you know best. Text after # on a line is ignored.")
    left, right = st.columns(2)
    expand = left.selectbox("Add one hop along the citation graph", list(EXPANSIONS), format_func=EXPANSIONS.get,
                            index=list(EXPANSIONS).index("both"), key="s2_expand")
    expand_limit = right.number_input("At most this many papers added by the hop", min_value=1,
                                      max_value=1_000_000, value=5000, step=1000, key="s2_expand_limit")
    st.caption("Without an API key (S2_API_KEY set on the server) Semantic Scholar serves a shared, slow pool: "
               "a few thousand papers take minutes.")

    def arguments() -> list[str]:
        lines = [line.split("#", 1)[0].strip() for line in seeds.splitlines()]
        ids = [seed_id(line) for line in lines if line]
        if not ids:
            raise ValueError("Give at least one seed paper (a DOI, an arXiv id, CorpusId:N or a paper id).")
        argv = ["semantic-scholar", "--seed", *ids, "--expand", expand]
        if expand != "none":
            argv += ["--expand-limit", str(int(expand_limit))]
        return argv

    return arguments


def _server_path(text: str, what: str, folder: bool = False) -> str:
    path = Path(text.strip()).expanduser()
    if not text.strip():
        raise ValueError(f"Give the {what}.")
    if not path.is_absolute():
        raise ValueError(f"Give the full path of the {what} on the server (starting with /).")
    if folder and not path.is_dir():
        raise ValueError(f"{path}: no such folder on the server.")
    if not folder and not path.is_file():
        raise ValueError(f"{path}: no such file on the server.")
    return str(path.resolve())


def arxiv_form():
    path = st.text_input("Snapshot file on the server", key="ax_path",
                         placeholder="/data/arxiv-metadata-oai-snapshot.json",
                         help="Kaggle's arXiv metadata snapshot: one JSON object a line, gzipped or not.")
    left, right = st.columns(2)
    categories = left.text_input("Categories", key="ax_categories", placeholder="cs.CL cs.IR",
                                 help="Categories or their prefixes (cs = all of cs.*); empty: all.")
    years = right.text_input("Years", key="ax_years", placeholder="2018-2024")
    limit = left.number_input("At most this many papers (0: no limit)", min_value=0, value=0, step=1000,
                              key="ax_limit")

    def arguments() -> list[str]:
        parse_years(years)
        argv = ["arxiv", _server_path(path, "snapshot file")]
        if _ids(categories):
            argv += ["--category", *_ids(categories)]
        if years.strip():
            argv.append(f"--years={years.strip()}")
        if limit:
            argv += ["--limit", str(int(limit))]
        return argv

    return arguments


def zotero_form():
    path = st.text_input("Zotero library on the server", key="zo_path", placeholder="/home/you/Zotero/zotero.sqlite",
                         help="zotero.sqlite (read from a copy), or a CSL-JSON / BibTeX export.")
    collection = st.text_input("Collection (optional)", key="zo_collection")

    def arguments() -> list[str]:
        argv = ["zotero", _server_path(path, "Zotero library")]
        if collection.strip():
            argv.append(f"--collection={collection.strip()}")
        return argv

    return arguments


def pdfs_form():
    path = st.text_input("Folder of PDFs on the server", key="pdf_path", placeholder="/home/you/papers",
                         help="Subfolders are read too; scanned or encrypted PDFs are skipped and listed in the log.")

    def arguments() -> list[str]:
        return ["pdfs", _server_path(path, "folder of PDFs", folder=True)]

    return arguments


FORMS = {"openalex": openalex_form, "s2": semantic_scholar_form, "arxiv": arxiv_form, "zotero": zotero_form, "pdfs": pdfs_form}
