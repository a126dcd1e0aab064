"""Corpus page: a corpus of one's own learns how its field cites, from full papers that cite it. Each paragraph of
theirs that cites papers of the corpus (and each citing sentence) trains the passage reranker
(`training/document_contexts.py`, `training/local.py`), kept only when a test on papers it did not see shows it
ranking better (a 95% interval above zero, from at least `local.MIN_PAPERS` citing papers)."""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import streamlit as st

from pages.ui import engines, progress
from pages.ui.draft_review import UPLOAD_TYPES
from recommender.training.document_contexts import DocumentContexts, contexts_from_files, write_contexts
from recommender.training import local
from workspace import corpora, engine_caches

MAX_PAPERS = 500  # files read in one go (each within the limits of recommender/documents/limits.py)


def read_papers(directory: str, uploads) -> list[DocumentContexts]:
    """The contexts of uploaded papers, written to a folder under their own names first (a .tex finds its .bib);
    kept for this session while the same files are uploaded to the same corpus version."""
    if len(uploads) > MAX_PAPERS:
        raise ValueError(f"{len(uploads):,} files were uploaded; up to {MAX_PAPERS} are read at a time.")
    files: list[tuple[str, bytes]] = []
    for upload in uploads:  # two files of one name (from two folders) are both kept
        name, copy = Path(upload.name).name.strip(". ") or "paper", 1  # never ".." or the folder itself
        while any(name == taken for taken, _ in files):
            copy += 1
            name = f"{Path(upload.name).stem} ({copy}){Path(upload.name).suffix}"
        files.append((name, upload.getvalue()))
    digest = hashlib.sha256(f"{directory}\0{engines.version_of(directory)}".encode())
    for name, data in files:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    kept = st.session_state.get("learn_read")
    if kept and kept[0] == digest.hexdigest():
        return kept[1]
    with tempfile.TemporaryDirectory() as folder, progress.bar("Reading the papers") as report:
        for name, data in files:
            (Path(folder) / name).write_bytes(data)
        paths = [Path(folder) / name for name, _ in files if Path(name).suffix.lower() != ".bib"]
        if not paths:
            raise ValueError("Only BibTeX files were uploaded: add the papers themselves (a .bib is read with the "
                             ".tex that names it).")
        found = contexts_from_files(paths, engines.index(directory), progress=False,
                                    on_progress=lambda done, total: report("papers", done, total))
    st.session_state["learn_read"] = (digest.hexdigest(), found)
    return found


def papers_table(found: list[DocumentContexts]) -> None:
    st.dataframe({"Paper": [d.name for d in found],
                  "References in this corpus": ["—" if d.problem else f"{d.matched} of {d.references}" for d in found],
                  "Citation contexts": [len(d.rows) for d in found],
                  "Note": [d.problem or "; ".join(d.notices) for d in found]}, hide_index=True)


def outcome(info: dict) -> tuple[str, str]:
    """("success" or "warning", what the training did) for people: the tested gain with its interval and the
    number of papers."""
    trained = (f"Learned from {info['contexts']:,} citation contexts of {info['citing_papers']} papers and tested on "
               f"papers it did not learn from: {local.gain_text(info)}")
    if info["stored"]:
        return "success", trained + ". Passages are now ranked with it."
    return "warning", (trained + ". The interval reaches zero or below, so it may not rank other papers' citations "
                       "better, and the corpus keeps its ranking. More papers of your field give it more to learn "
                       "from and a narrower interval: add some and learn again.")


def train(directory: str, found: list[DocumentContexts]) -> None:
    """Train on the contexts found; the corpus is unchanged unless the model is stored."""
    rows = [row for d in found for row in d.rows]
    try:
        with progress.bar("Learning from the papers") as report, tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "contexts.jsonl"
            write_contexts(rows, path)
            contexts = local.read_contexts(path, engines.index(directory))
            reranker = local.train_local(engines.recommender(directory), contexts, progress=False,
                                         source=f"{sum(bool(d.rows) for d in found)} papers uploaded in the app",
                                         on_progress=lambda done, total: report("citation contexts", done, total))
    except Exception as exc:  # the model is written last and atomically: a failure leaves the corpus as it was
        st.error(f"Learning failed and the corpus is unchanged: {exc}")
        return
    engine_caches.release(directory)  # the engine reloads with the new model
    st.session_state["learn_message"] = outcome(reranker.info)
    st.rerun()


def section(directory: str) -> None:
    """Upload papers that cite the active corpus, see what was found in them, and train on it."""
    st.header("Learn from papers of your field")
    st.caption("Upload papers that cite this corpus: PDF, LaTeX (the .tex with its .bib, the project as .zip, or "
               "arXiv's .tar.gz source), Word, Markdown or text. Every paragraph that cites papers of this corpus "
               "through its reference list becomes an example of how your field cites, and a reranker for passages "
               "learns from them. It is kept only if it ranks those citations better, tested on papers it did not "
               "learn from.")
    if message := st.session_state.pop("learn_message", None):
        kind, text = message
        (st.success if kind == "success" else st.warning)(text)
    if not corpora.on_a_shelf(Path(directory)):
        st.info("Import or build a corpus of your own first (above): the default corpus is shared, and it is not "
                "changed here.")
        return
    uploads = st.file_uploader("Papers that cite this corpus", type=UPLOAD_TYPES + ["bib"],
                               accept_multiple_files=True, key="learn_files")
    if not uploads:
        return
    try:
        found = read_papers(directory, uploads)
    except ValueError as exc:
        st.error(str(exc))
        return
    papers_table(found)
    rows = [row for d in found for row in d.rows]
    citing = len({row["citing_id"] for row in rows})
    if not rows:
        st.error("No citation contexts: none of these papers cites a paper of this corpus through its reference "
                 "list (its entries are matched by DOI, arXiv id, or title with authors and year).")
        return
    if citing < local.MIN_PAPERS:
        st.warning(f"{len(rows):,} citation contexts from {citing} paper{'s' * (citing != 1)}: the reranker is "
                   f"tested on papers it did not learn from, and a test on fewer than {local.MIN_PAPERS} citing papers "
                   f"cannot tell a real gain from luck. Add papers that cite this corpus: at least "
                   f"{local.MIN_PAPERS - citing} more.")
        return
    st.caption(f"{len(rows):,} citation contexts from {citing} papers.")
    if st.button("Learn from these papers", type="primary", icon=":material/school:", key="learn_train"):
        train(directory, found)
