"""Reviewer check: which relevant papers does a submission fail to cite? From its title, abstract and
reference list, or from the whole draft (`pages/ui/draft_review.py`)."""
from __future__ import annotations

import streamlit as st

from pages.ui import access, active_index, cards, draft_review, engines
from recommender.pipeline.user_input import MAX_TEXT_CHARS, MAX_TITLE_CHARS, clip
from recommender.references.run import summary
from recommender.references.text import decode_reference_bytes
from recommender.review.abstract import parse_references


def reference_text(upload, pasted: str) -> str:
    """The uploaded reference file's text, else the pasted text; ValueError for a binary upload."""
    if upload is not None:
        return decode_reference_bytes(upload.getvalue())
    return pasted


def run_check(directory: str, upload) -> None:
    notices: list[str] = []
    title = clip(st.session_state.get("rv_title", ""), MAX_TITLE_CHARS, "title", notices)
    abstract = clip(st.session_state.get("rv_abstract", ""), MAX_TEXT_CHARS, "abstract", notices)
    if not (title or abstract):
        st.session_state.pop("review", None)
        st.info("Paste the submission's title and abstract, add its reference list, then press **Check**.",
                icon="✍️")
        return
    try:
        references = parse_references(reference_text(upload, st.session_state.get("rv_refs", "")))
    except ValueError as exc:
        st.session_state.pop("review", None)
        st.error(str(exc), icon="🚫")
        return
    with st.spinner("Checking the references…"):
        report = engines.reviewer(directory).review(title, abstract, references, k=st.session_state["rv_k"])
        checks = engines.document_reviewer(directory).check_references(references)
    index = engines.index(directory)
    papers = index.papers([index.position[m.recommendation.paper_id] for m in report.missing])
    st.session_state["review"] = {"directory": directory, "report": report, "papers": papers, "notices": notices,
                                  "checks": checks}


def show_report(review: dict) -> None:
    for notice in review["notices"]:
        st.warning(notice, icon="✂️")
    report, index = review["report"], engines.index(review["directory"])
    for warning in report.warnings:
        st.warning(warning, icon="⚠️")
    found, total = sum(1 for ids in report.matches if ids), len(report.references)
    a, b, c = st.columns(3)
    a.metric("References read", total)
    b.metric("Found in the corpus (removed)", found)
    c.metric("Likely missing", len(report.missing))
    if not report.references:
        st.caption("No reference list was given, so nothing was removed.")
    with st.expander(f"Already cited: {len(report.cited)} corpus papers"):
        for pid in sorted(report.cited, key=lambda p: index.titles[index.position[p]]):
            st.text(index.titles[index.position[pid]])
    checks = review.get("checks") or []
    if checks:
        counts = summary(checks)
        flagged = sum(counts[v] for v in ("details differ", "not found", "retracted"))
        label = "Reference check: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        with st.expander(label, expanded=counts["retracted"] > 0, icon=":material/fact_check:" if not flagged
                         else ":material/flag:"):
            st.caption("Flags are leads to check, not verdicts. Whole drafts get a filter by verdict in the "
                       "Whole draft tab.")
            for number, (item, check) in enumerate(zip(report.references, checks), start=1):
                draft_review.reference_card(number, item, check)
    if report.unmatched:
        with st.expander(f"References not in the corpus: {len(report.unmatched)}"):
            for item in report.unmatched:
                st.text(item.raw if len(item.raw) < 300 else item.raw[:300] + "…")
    st.subheader("Likely missing citations")
    if not report.missing:
        st.success("Every relevant paper the corpus holds is already cited.")
    for missing, paper in zip(report.missing, review["papers"]):
        cards.result_card(missing.recommendation, paper, related=(missing.sentence_number, missing.sentence))


access.require()
directory = active_index.active_index_dir()
st.title("Reviewer check")
st.caption(f"Find papers of the corpus ({active_index.corpus_name(directory)}) that a submission does not cite.")
short, whole = st.tabs(["Title, abstract and references", "Whole draft"])
with short:
    with st.form("review_form", border=False):
        st.text_input("Submission title", key="rv_title", persist_state="session")
        st.text_area("Submission abstract", key="rv_abstract", height=150, persist_state="session")
        upload_tab, paste_tab = st.tabs(["Upload reference list", "Paste references"])
        upload = upload_tab.file_uploader("BibTeX (.bib) or a text file with the reference list",
                                          type=["bib", "bibtex", "txt"], key="rv_upload")
        paste_tab.text_area("The reference list as copied from the PDF (or BibTeX entries)", key="rv_refs",
                            height=150, persist_state="session")
        st.slider("Suggestions", 5, 50, 10, step=5, key="rv_k", persist_state="session")
        checked = st.form_submit_button("Check", type="primary", icon=":material/fact_check:")
    if checked:
        run_check(directory, upload)
    review = st.session_state.get("review")
    if review and review["directory"] == directory:
        show_report(review)
with whole:
    draft_review.render(directory)
