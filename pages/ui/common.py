"""UI helpers shared by the pages: the active index, cached engine objects, safe text, cards, export."""
from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import streamlit as st

from pages.ui import corpora
from pages.ui.demo import ensure_demo_index
from recommender.pipeline import confidence
from recommender.backends import BackendError
from recommender.corpus.export import export
from recommender.store.index import Index
from recommender.paper import Paper
from recommender.query import Query, Recommendation
from recommender.pipeline.recommender import Recommender
from recommender.review.document import DocumentReviewer
from recommender.review.abstract import Reviewer

EXPORT_FORMATS = {  # label: (exporter name, file name, MIME type, preview language)
    "BibTeX": ("bibtex", "citations.bib", "application/x-bibtex", "bibtex"),
    "RIS": ("ris", "citations.ris", "application/x-research-info-systems", None),
    "CSL-JSON": ("csl-json", "citations.json", "application/vnd.citationstyles.csl+json", "json"),
    "CSV": ("csv", "citations.csv", "text/csv", None),
}
_MARKDOWN_SPECIAL_RE = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_AUTOLINK_RE = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.)|(?=@)", re.IGNORECASE)  # where GFM starts a bare link
ZERO_WIDTH_SPACE = "\u200b"


def plain(text: object) -> str:
    """Text for st.markdown that shows literally: whitespace collapsed, all punctuation backslash-escaped,
    and bare URLs / e-mail addresses broken by a zero-width space so that they are not turned into links."""
    text = _AUTOLINK_RE.sub(ZERO_WIDTH_SPACE, " ".join(str(text).split()))
    return _MARKDOWN_SPECIAL_RE.sub(r"\\\1", text)


@contextmanager
def progress(label: str):
    """A progress callback `(stage, done, total)` that draws a bar on first use and removes it at the end."""
    slot = st.empty()

    def report(stage: str, done: int, total: int) -> None:
        slot.progress(min(done / total, 1.0) if total else 0.0, text=f"{label} — {stage} ({done:,}/{total:,})")

    try:
        yield report
    finally:
        slot.empty()


# --------------------------------------------------------------------------- the active index


class DemoIndex:
    """The demo index of this server process: checked (and built if needed) once, by the first session.

    The build runs outside any cached function, so the progress bar it draws belongs to the session that
    triggered it; sessions arriving meanwhile wait on the lock and then reuse the directory.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.directory: str | None = None

    def ensure(self, on_progress) -> str:
        with self.lock:
            if self.directory is None:
                self.directory = str(ensure_demo_index(on_progress))
            return self.directory


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
    with progress("Indexing the demo corpus (first start only)") as report:
        return demo.ensure(report)


def active_index_dir() -> str:
    """This session's corpus: one it imported or chose on the Corpus page, else the default.

    A chosen corpus that has been deleted meanwhile (by this session, or by the clean-up of ended sessions)
    gives way to the default, with a notice.
    """
    chosen = st.session_state.get("corpus_dir")
    if chosen and not (Path(chosen) / "CURRENT").is_file():
        set_active_index(default_index_dir())
        st.toast(f"The corpus {Path(chosen).name} no longer exists; you are back on the default corpus.")
        chosen = None
    return chosen or default_index_dir()


def set_active_index(directory: str | Path) -> None:
    """Switch this session to another corpus; results of the old one are dropped."""
    st.session_state["corpus_dir"] = str(directory)
    for key in ("results", "review"):
        st.session_state.pop(key, None)


def corpus_name(directory: str) -> str:
    if corpora.on_a_shelf(Path(directory)):
        return Path(directory).name
    return "Demo corpus" if not os.environ.get("CITREC_INDEX") else Path(directory).name


def version_of(directory: str) -> str:
    return (Path(directory) / "CURRENT").read_text(encoding="utf-8").strip()


@st.cache_resource(show_spinner=False, max_entries=8)
def _index(directory: str, version: str) -> Index:
    return Index.load(directory)


def backend_of(directory: str) -> str | None:
    """$CITREC_BACKEND (milvus:PATH.db, milvus://host:port) for the default corpus ($CITREC_INDEX, else the demo);
    None (search in process) for the corpora imported here."""
    backend = os.environ.get("CITREC_BACKEND")
    if not backend:
        return None
    default = os.environ.get("CITREC_INDEX") or demo_index().directory
    return backend if default and Path(directory).resolve() == Path(default).resolve() else None


@st.cache_resource(show_spinner="Loading the language model (first start only)…", max_entries=8)
def _recommender(directory: str, version: str) -> Recommender:
    recommender = Recommender.from_index(_index(directory, version), backend_of(directory))
    recommender.recommend(Query(title="warm-up"))  # first calls of the models are slow: pay them now
    if recommender.index.multilingual is not None:  # the multilingual encoder and the Chinese word segmenter
        recommender.recommend(Query(context="基于深度学习的引文推荐 [CIT]"))
    return recommender


@st.cache_resource(show_spinner=False, max_entries=8)
def _reviewer(directory: str, version: str) -> Reviewer:
    return Reviewer(_recommender(directory, version))


@st.cache_resource(show_spinner=False, max_entries=8)
def _document_reviewer(directory: str, version: str) -> DocumentReviewer:
    return DocumentReviewer(_recommender(directory, version), references=_reviewer(directory, version).references)


def release(directory: str | Path) -> None:
    """Forget the cached engine objects of every version of a corpus on disk (before it is deleted)."""
    versions = Path(directory) / "versions"
    for version in (versions.iterdir() if versions.is_dir() else []):
        for cached in (_document_reviewer, _reviewer, _recommender, _index):
            cached.clear(str(directory), version.name)


def index(directory: str | None = None) -> Index:
    directory = directory or active_index_dir()
    return _index(directory, version_of(directory))


def show_backend_fault(exc: BackendError) -> None:
    """What the page says when the search backend ($CITREC_BACKEND) is down, missing or built for another index."""
    st.error(f"The search backend cannot answer: {exc}", icon=":material/cloud_off:")


def _engine(make, directory: str | None):
    """An engine object of the corpus; when its search backend cannot serve it, the page says why and stops."""
    directory = directory or active_index_dir()
    try:
        return make(directory, version_of(directory))
    except BackendError as exc:
        show_backend_fault(exc)
        st.stop()


def recommender(directory: str | None = None) -> Recommender:
    return _engine(_recommender, directory)


def reviewer(directory: str | None = None) -> Reviewer:
    return _engine(_reviewer, directory)


def document_reviewer(directory: str | None = None) -> DocumentReviewer:
    return _engine(_document_reviewer, directory)


# --------------------------------------------------------------------------- result cards


def links(paper: Paper) -> list[tuple[str, str]]:
    """(label, URL) pairs for a paper: DOI, arXiv and its own http(s) URL."""
    found = []
    if paper.doi:
        found.append((f"DOI {paper.doi}", "https://doi.org/" + quote(paper.doi, safe="/:;")))
    arxiv = str(paper.extra.get("arxiv") or "")
    if arxiv:
        found.append((f"arXiv {arxiv}", "https://arxiv.org/abs/" + quote(arxiv, safe="/.")))
    url = str(paper.extra.get("url") or "")
    if re.match(r"https?://[^\s()<>]+$", url):
        found.append(("Web page", quote(url, safe=":/?&=#%+.,;~@!$*'")))
    return found


def byline(paper: Paper | Recommendation) -> str:
    authors = paper.authors[:6] + (["et al."] if len(paper.authors) > 6 else [])
    parts = [", ".join(authors) or "Unknown authors", str(paper.year or ""), paper.venue]
    return " · ".join(part for part in parts if part)


def result_card(rec: Recommendation, paper: Paper, match: confidence.Match | None = None,
                select_key: str | None = None, related: tuple[int, str] | None = None) -> None:
    """One recommendation: title, byline, closeness bar (with `match`, else the score), explanation, links; a
    checkbox when `select_key`.

    The bar is the query–paper cosine on an absolute scale (`recommender.pipeline.confidence`), the same for every
    query, so a nonsense query shows short bars; a weak result's explanation claims no match.
    """
    with st.container(border=True):
        if select_key:
            head, tick = st.columns([0.92, 0.08], vertical_alignment="top")
            tick.checkbox("Select", key=select_key, label_visibility="collapsed", persist_state="session",
                          help="Select for export")
        else:
            head = st.container()
        head.markdown(f"**{rec.rank}\\. {plain(rec.title or '(untitled)')}**")
        head.caption(plain(byline(rec)))
        explanation = rec.explanation
        if match is None:
            st.caption(f"Score {rec.score:.2f}")
        else:
            label = {"strong": "Close match", "fair": "Partial match", "weak": "Weak match"}[match.strength]
            st.progress(min(max(match.closeness, 0.0), 1.0),
                        text=f"{label} · closeness {match.closeness:.2f} · score {rec.score:.2f}")
            if match.strength == "weak":
                explanation = f"Weak match: not close in meaning to your text (cosine {match.closeness:.2f})."
        st.markdown(f":small[{plain(explanation)}]")
        if related:
            number, sentence = related
            where = "the title" if number == 0 else f"sentence {number} of the abstract"
            st.markdown(f":small[**Relates to {where}:** “{plain(sentence)}”]")
        found = links(paper)
        if found:
            st.markdown(":small[" + " · ".join(f"[{plain(label)}]({url})" for label, url in found) + "]")
        if paper.abstract:
            source = paper.extra.get("summary_source")
            with st.expander(f"Summary ({source}; not the published abstract)" if source else "Abstract"):
                st.markdown(plain(paper.abstract))


def export_panel(papers: list[Paper], selected: list[Paper] | None, key: str,
                 formats: list[str] | None = None) -> None:
    """Download the selected papers (or all) as BibTeX, RIS, CSL-JSON or CSV (or `formats`), with a preview;
    `selected=None` exports `papers` without asking."""
    st.subheader("Export")
    if not papers:
        st.caption("Nothing to export yet.")
        return
    chosen = papers
    if selected is not None:
        # no key: a new selection count makes a new widget, which defaults to the selection again
        scope = st.radio("Papers", [f"Selected ({len(selected)})", f"All results ({len(papers)})"],
                         index=0 if selected else 1)
        chosen = selected if scope.startswith("Selected") else papers
    label = st.segmented_control("Format", formats or list(EXPORT_FORMATS), default="BibTeX", key=f"{key}_format",
                                 required=True)
    if not chosen:
        st.caption("Tick the box of a result to select it.")
        return
    name, file_name, mime, language = EXPORT_FORMATS[label]
    text = export(chosen, name)
    st.download_button(f"Download {label}", text, file_name=file_name, mime=mime, type="primary",
                       icon=":material/download:", key=f"{key}_download", width="stretch")
    st.caption("BibTeX, RIS and CSL-JSON import into Zotero (File › Import).")
    with st.expander("Preview"):
        st.code(text, language=language, height=300)
