"""Reviewer check, "Whole draft" mode: a draft or submission file in, its citation places answered inline,
uncited claims flagged, missing papers listed; accepted papers exported, a LaTeX draft's placeholders filled."""
from __future__ import annotations

import streamlit as st

from pages.ui import common
from recommender.documents.fill import fill_placeholders
from recommender.documents.read import read_document
from recommender.export import citation_keys
from recommender.paper import Paper
from recommender.review import DocumentReview, Place
from recommender.reviewer import parse_warnings

UPLOAD_TYPES = ["pdf", "tex", "zip", "gz", "tgz", "tar", "docx", "md", "txt"]
EXPORTS = ["BibTeX", "RIS", "CSL-JSON"]


def render(directory: str) -> None:
    with st.form("draft_form", border=False):
        upload = st.file_uploader("The draft or submission: PDF, LaTeX (.tex, a zipped project or arXiv's .tar.gz "
                                  "source), Word (.docx), Markdown or text", type=UPLOAD_TYPES, key="dr_upload")
        bib = st.file_uploader("Its BibTeX file (optional; for a .tex draft)", type=["bib"], key="dr_bib")
        st.text_area("…or paste the draft's text. Mark places that need a citation with [CIT].", key="dr_text",
                     height=150, persist_state="session")
        go = st.form_submit_button("Review the draft", type="primary", icon=":material/rate_review:")
    if go:
        run_review(directory, upload, bib)
    review = st.session_state.get("draft_review")
    if review and review["directory"] == directory:
        show(review["report"], directory)


def run_review(directory: str, upload, bib) -> None:
    pasted = st.session_state.get("dr_text", "")
    if upload is None and not pasted.strip():
        st.session_state.pop("draft_review", None)
        st.info("Upload a draft or paste its text, then press **Review the draft**.", icon="✍️")
        return
    try:
        bib_text = bib.getvalue().decode("utf-8", errors="replace") if bib is not None else None
        if upload is not None:
            document = read_document(upload.getvalue(), upload.name, bib=bib_text)
        else:
            document = read_document(pasted.encode("utf-8"), "draft.txt", bib=bib_text)
    except ValueError as exc:
        st.session_state.pop("draft_review", None)
        st.error(str(exc), icon="🚫")
        return
    with common.progress("Reviewing the draft…"):
        report = common.document_reviewer(directory).review(document)
    for key in [k for k in st.session_state if str(k).startswith("dr_accept_")]:
        del st.session_state[key]  # a new review starts with nothing accepted
    st.session_state["draft_review"] = {"directory": directory, "report": report}


def show(report: DocumentReview, directory: str) -> None:
    document = report.document
    for notice in report.notices:
        st.warning(notice, icon="⚠️")
    for warning in parse_warnings(document.references, [{pid} if pid else set() for pid in report.matches]):
        st.warning(warning, icon="⚠️")
    found = sum(1 for pid in report.matches if pid)
    a, b, c, d = st.columns(4)
    a.metric("References found", f"{found} / {len(document.references)}")
    b.metric("Citation places", len(report.places))
    c.metric("Uncited claims", len(report.uncited))
    d.metric("Likely missing", len(report.missing))
    if document.title:
        st.markdown(f"**{common.plain(document.title)}**")
    places, missing, references, export = st.tabs(["Document", "Likely missing", "References", "Export"])
    with places:
        show_document(report, directory)
    with missing:
        show_missing(report, directory)
    with references:
        show_references(report, directory)
    with export:
        show_export(report, directory)


def show_document(report: DocumentReview, directory: str) -> None:
    """Each passage with an answered citation place or an uncited claim, annotated, and the suggestions for its
    places."""
    claims, places = {}, {}
    for claim in report.uncited:
        claims.setdefault(id(claim.passage), []).append(claim)
    for i, place in enumerate(report.places):
        places.setdefault(id(place.passage), []).append((i, place))
    shown = 0
    for passage in report.document.passages:
        own = places.get(id(passage), [])
        if not any(place.suggestions for _, place in own) and id(passage) not in claims:
            continue  # past MAX_PLACES, places are left unanswered (the notices say so)
        shown += 1
        with st.container(border=True):
            where = passage.where
            st.caption(f"Page {where['page']}" if "page" in where else f"Line {where['line']}")
            st.markdown(annotated(passage.text, [place for _, place in own], claims.get(id(passage), [])))
            for i, place in own:
                place_suggestions(i, place, directory)
    if not shown:
        st.info("The draft has no citation places and no uncited claims were found.")
    st.caption("Places: :orange-background[to fill] · :blue-background[already cited] · "
               ":red-background[claim without a citation]")


def annotated(text: str, places: list[Place], claims: list) -> str:
    """The passage as Markdown, markers and uncited claims highlighted, everything else shown literally."""
    marks = [(p.marker.start, p.marker.end, "orange" if p.marker.placeholder else "blue") for p in places]
    for claim in claims:
        start = text.find(claim.sentence)
        if start >= 0:
            marks.append((start, start + len(claim.sentence), "red"))
    pieces, cursor = [], 0
    for start, end, colour in sorted(marks):
        if start < cursor:
            continue
        pieces.append(common.plain(text[cursor:start]))
        pieces.append(f" :{colour}-background[{common.plain(text[start:end])}] ")
        cursor = end
    pieces.append(common.plain(text[cursor:]))
    return "".join(pieces)


def place_suggestions(number: int, place: Place, directory: str) -> None:
    label = "Fill" if place.marker.placeholder else "Also consider"
    if not place.suggestions:
        return
    with st.expander(f"{label} at {place.marker.text}: {len(place.suggestions)} suggestions"):
        index = common.index(directory)
        for suggestion in place.suggestions:
            paper = index.papers([index.position[suggestion.paper_id]])[0]
            st.checkbox(f"{suggestion.title} — {common.byline(paper)}", key=f"dr_accept_p{number}_{suggestion.paper_id}",
                        help="Accept: export it, and (LaTeX) write it into this placeholder")


def show_missing(report: DocumentReview, directory: str) -> None:
    if not report.missing:
        st.success("Every relevant paper the corpus holds is already cited.")
        return
    index = common.index(directory)
    for rank, paper in enumerate(report.missing, start=1):
        record = index.papers([index.position[paper.paper_id]])[0]
        with st.container(border=True):
            st.checkbox(f"{rank}. {paper.title}", key=f"dr_accept_m_{paper.paper_id}", help="Accept for export")
            st.caption(common.plain(common.byline(record)))
            where = paper.passage.where if paper.passage else {}
            place = f"page {where['page']}" if "page" in where else (f"line {where['line']}" if where else "")
            st.markdown(f":small[{common.plain(paper.why)}" + (f" · belongs near {place}" if place else "") + "]")


def show_references(report: DocumentReview, directory: str) -> None:
    index = common.index(directory)
    for item, pid in zip(report.document.references, report.matches):
        found = f"✓ {index.titles[index.position[pid]]}" if pid else "not in the corpus"
        st.markdown(f":small[{common.plain(item.raw[:300])} — **{common.plain(found)}**]")
    if not report.document.references:
        st.caption("No reference list was found in the draft.")


def accepted(report: DocumentReview) -> tuple[list[str], list[list[str]]]:
    """Accepted paper ids (in order of appearance) and, per placeholder, the ids accepted for it."""
    state = st.session_state
    per_placeholder, chosen = [], []
    for i, place in enumerate(report.places):
        ids = [s.paper_id for s in place.suggestions if state.get(f"dr_accept_p{i}_{s.paper_id}")]
        chosen += ids
        if place.marker.placeholder:
            per_placeholder.append(ids)
    chosen += [m.paper_id for m in report.missing if state.get(f"dr_accept_m_{m.paper_id}")]
    return list(dict.fromkeys(chosen)), per_placeholder


def show_export(report: DocumentReview, directory: str) -> None:
    ids, per_placeholder = accepted(report)
    if not ids:
        st.caption("Tick the papers you accept (Document and Likely missing tabs) to export them.")
        return
    index = common.index(directory)
    papers: list[Paper] = index.papers([index.position[pid] for pid in ids])
    st.write(f"Accepted: {len(papers)} paper{'' if len(papers) == 1 else 's'}")
    common.export_panel(papers, None, key="dr_export", formats=EXPORTS)
    if report.document.kind == "latex" and report.document.source_text:
        keys = dict(zip(ids, citation_keys(papers)))
        try:
            filled = fill_placeholders(report.document.source_text,
                                       [[keys[pid] for pid in chosen] for chosen in per_placeholder])
        except ValueError as exc:
            st.warning(f"The .tex copy could not be written: {exc}.", icon="⚠️")
            return
        st.download_button("Download the .tex with accepted citations filled in", filled, file_name="draft-filled.tex",
                           mime="application/x-tex", icon=":material/download:", key="dr_tex")
        st.caption("Add the BibTeX above to your .bib: the keys match.")
