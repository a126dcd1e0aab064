"""Reviewer check, "Whole draft" mode: a draft or submission file in, its citation places answered inline,
uncited claims flagged with their suggestions, missing papers listed with their evidence; accepted papers exported,
a LaTeX draft's placeholders filled and its accepted claims cited after their sentences."""
from __future__ import annotations

import os

import streamlit as st

from pages.ui import access, cards, engines, markdown, progress
from pages.ui.export_panel import export_panel
from pages.ui.shelves import settings
from recommender.corpus.export import citation_keys
from recommender.documents.fill import cite_after_sentences, fill_placeholders
from recommender.documents.read import read_document
from recommender.paper import Paper
from recommender.query import CITATION_MARK
from recommender.review.abstract import parse_warnings
from recommender.references.check import VERDICTS
from recommender.references.run import ONLINE_ENV, sources
from recommender.review.document import DocumentReview, MissingPaper, Place, Suggestion, UncitedClaim

UPLOAD_TYPES = ["pdf", "tex", "zip", "gz", "tgz", "tar", "docx", "md", "txt"]
EXPORTS = ["BibTeX", "RIS", "CSL-JSON"]
QUOTE_CHARS = 80  # a sentence quoted in a label


def render(directory: str) -> None:
    with st.form("draft_form", border=False):
        upload = st.file_uploader("The draft or submission: PDF, LaTeX (.tex, a zipped project or arXiv's .tar.gz "
                                  "source), Word (.docx), Markdown or text", type=UPLOAD_TYPES, key="dr_upload")
        bib = st.file_uploader("Its BibTeX file (optional; for a .tex draft)", type=["bib"], key="dr_bib")
        st.text_area("…or paste the draft's text. Mark places that need a citation with [CIT].", key="dr_text",
                     height=150, persist_state="session")
        if online_allowed():
            st.toggle("Also check the references online (OpenAlex, Crossref)", key="dr_online",
                      persist_state="session", help="The references the corpus cannot settle are looked up in "
                      "OpenAlex and Crossref (their titles, DOIs and arXiv ids leave this machine; answers are "
                      "cached). Off: only the corpus and the imported Retraction Watch data are asked. An OpenAlex "
                      "API key (free; OPENALEX_API_KEY in the server's environment) raises its daily allowance.")
        go = st.form_submit_button("Review the draft", type="primary", icon=":material/rate_review:")
    if go:
        run_review(directory, upload, bib)
    review = st.session_state.get("draft_review")
    if review and review["directory"] == directory:
        show(review["report"], directory)


def online_allowed() -> bool:
    """Whether the page offers the online reference check: on one's own machine (an open app) yes; on a lab
    server (a login) only when its operator turns it on (`[citrec] reference_check_online = true` in
    .streamlit/secrets.toml, or CITREC_REFERENCE_CHECK_ONLINE=1)."""
    if os.environ.get(ONLINE_ENV) == "1" or settings().get("reference_check_online"):
        return True
    return access.method() == "open"


def online_sources() -> list:
    """OpenAlex and Crossref for one review, with the e-mail the operator set (`[citrec] mailto`)."""
    return sources(online=True, mailto=settings().get("mailto") or None)


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
    online = online_allowed() and bool(st.session_state.get("dr_online"))
    with progress.bar("Reviewing the draft…"):
        report = engines.document_reviewer(directory).review(document, online=online_sources() if online else [])
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
        st.markdown(f"**{markdown.plain(document.title)}**")
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
    """Each passage with an answered citation place or an uncited claim, annotated, and below it the suggestions
    for its places and claims, in the order they come in the passage."""
    claims, places = {}, {}
    for j, claim in enumerate(report.uncited):
        claims.setdefault(id(claim.passage), []).append((j, claim))
    for i, place in enumerate(report.places):
        places.setdefault(id(place.passage), []).append((i, place))
    shown = 0
    for passage in report.document.passages:
        own, flagged = places.get(id(passage), []), claims.get(id(passage), [])
        if not any(place.suggestions for _, place in own) and not flagged:
            continue  # past MAX_PLACES, places are left unanswered (the notices say so)
        shown += 1
        with st.container(border=True):
            where = passage.where
            st.caption(f"Page {where['page']}" if "page" in where else f"Line {where['line']}")
            st.markdown(annotated(passage.text, [place for _, place in own], [claim for _, claim in flagged]))
            spots = [(place.marker.start, place_suggestions, i, place) for i, place in own]
            spots += [(max(passage.text.find(claim.sentence), 0), claim_suggestions, j, claim) for j, claim in flagged]
            for _, show_spot, number, spot in sorted(spots, key=lambda spot: spot[0]):
                show_spot(number, spot, directory)
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
        pieces.append(markdown.plain(text[cursor:start]))
        pieces.append(f" :{colour}-background[{markdown.plain(text[start:end])}] ")
        cursor = end
    pieces.append(markdown.plain(text[cursor:]))
    return "".join(pieces)


def quoted(sentence: str, focus: str | None = None, limit: int = QUOTE_CHARS) -> str:
    """“The sentence…”, cut to about `limit` characters at a word; past `limit`, the part ending at `focus` (the
    [CIT] of a place's context) when it lies further on."""
    text = " ".join(sentence.split())
    if len(text) <= limit:
        return f"“{text}”"
    at = text.find(focus) if focus else -1
    if at >= 0 and at + len(focus) > limit - 1:
        end = at + len(focus)
        start = end - limit + 1
        part = text[start:end]
        cut = part.find(" ")
        if text[start - 1] != " " and 0 <= cut < 20:
            part = part[cut + 1:]  # not from the middle of a word
        tail = text[end:]
        return f"“…{part}{tail}”" if len(tail) <= 2 else f"“…{part}…”"
    part = text[: limit - 1]
    return f"“{part.rsplit(' ', 1)[0] if ' ' in part else part}…”"


def suggestion_cards(suggestions: list[Suggestion], directory: str, key: str, hint: str) -> None:
    """A checkbox per suggestion (title and byline), keyed `{key}_{paper id}`: ticked, the paper is accepted."""
    index = engines.index(directory)
    papers = index.papers([index.position[suggestion.paper_id] for suggestion in suggestions])
    for suggestion, paper in zip(suggestions, papers):
        st.checkbox(f"{suggestion.title} — {cards.byline(paper)}", key=f"{key}_{suggestion.paper_id}", help=hint)


def count(suggestions: list[Suggestion]) -> str:
    return f"{len(suggestions)} suggestion{'' if len(suggestions) == 1 else 's'}"


def place_suggestions(number: int, place: Place, directory: str) -> None:
    if not place.suggestions:
        return
    if place.marker.placeholder:
        label = f"Fill: {markdown.plain(quoted(place.context, CITATION_MARK))}"
        hint = "Accept: export it, and (LaTeX) write it into this placeholder"
    else:
        label = f"Also consider at {place.marker.text}"
        hint = "Accept: export it"
    with st.expander(f"{label}: {count(place.suggestions)}"):
        suggestion_cards(place.suggestions, directory, f"dr_accept_p{number}", hint)


def claim_suggestions(number: int, claim: UncitedClaim, directory: str) -> None:
    """The suggestions for an uncited claim, accept-able like a place's (keys `dr_accept_c{number}_{paper id}`)."""
    if not claim.suggestions:
        return
    with st.expander(f"Uncited claim: {markdown.plain(quoted(claim.sentence))}: {count(claim.suggestions)}"):
        if not claim.asked:
            st.caption("The papers nearest in meaning to this sentence (only the likeliest claims are asked in full).")
        suggestion_cards(claim.suggestions, directory, f"dr_accept_c{number}",
                         "Accept: export it, and (LaTeX) cite it after this sentence")


def show_missing(report: DocumentReview, directory: str) -> None:
    if not report.missing:
        st.success("Every relevant paper the corpus holds is already cited.")
        return
    index = engines.index(directory)
    for rank, paper in enumerate(report.missing, start=1):
        record = index.papers([index.position[paper.paper_id]])[0]
        with st.container(border=True):
            st.checkbox(f"{rank}. {paper.title}", key=f"dr_accept_m_{paper.paper_id}", help="Accept for export")
            st.caption(markdown.plain(cards.byline(record)))
            st.markdown(f":small[{evidence_line(paper)}]")


def evidence_line(paper: MissingPaper) -> str:
    """What points to a missing paper, as Markdown: its sentence (or the document's topic), the sentence's
    closeness to it, how many places agree, and where it belongs."""
    evidence = paper.evidence
    where = paper.passage.where if paper.passage else {}
    near = f"page {where['page']}" if "page" in where else (f"line {where['line']}" if where else "")
    if evidence.sentence:
        agree = f"{evidence.places} places agree" if evidence.places > 1 else "1 place suggests it"
        parts = [f"Suggested for {markdown.plain(quoted(evidence.sentence, CITATION_MARK))}",
                 f"closeness {evidence.closeness:.2f}", agree]
    else:
        parts = ["Close to the topic of the whole document"]
    return " · ".join(parts + ([f"near {near}"] if near else []))


VERDICT_LOOKS = {  # verdict -> (badge colour, icon)
    "verified": ("green", ":material/check_circle:"), "details differ": ("orange", ":material/difference:"),
    "not found": ("violet", ":material/search_off:"), "retracted": ("red", ":material/block:"),
    "not checked": ("gray", ":material/help:"),
}


def show_references(report: DocumentReview, directory: str) -> None:
    """Each reference with the reference check's verdict and its evidence (the fields that differ with the record's
    values, the record, what was searched), filtered by verdict."""
    references, checks = report.document.references, report.checks
    if not references:
        st.caption("No reference list was found in the draft.")
        return
    if not checks:  # a review made before the check existed: the corpus match only
        index = engines.index(directory)
        for item, pid in zip(references, report.matches):
            found = f"✓ {index.titles[index.position[pid]]}" if pid else "not in the corpus"
            st.markdown(f":small[{markdown.plain(item.raw[:300])} — **{markdown.plain(found)}**]")
        return
    counts = {verdict: sum(check.verdict == verdict for check in checks) for verdict in VERDICTS}
    st.caption("Each reference checked against " + ", ".join(dict.fromkeys(
        name for check in checks for name in check.searched)) + ". Flags are leads to check, not verdicts: a "
        "reference that differs or was not found is usually a slip, or a work these sources do not hold.")
    present = [verdict for verdict in VERDICTS if counts[verdict]]
    shown = st.pills("Show", present, selection_mode="multi", default=present, key="dr_verdicts",
                     format_func=lambda verdict: f"{verdict} ({counts[verdict]})")
    for number, (item, check) in enumerate(zip(references, checks), start=1):
        if check.verdict in (shown or []):
            reference_card(number, item, check)


def reference_card(number: int, item, check) -> None:
    colour, icon = VERDICT_LOOKS[check.verdict]
    with st.container(border=True):
        label = item.key or str(item.number or number)
        st.markdown(f":{colour}-badge[{icon} {check.verdict}] :small[[{markdown.plain(label)}] "
                    f"{markdown.plain(item.raw[:400])}]")
        if check.differences:
            rows = "".join(f"| {markdown.plain(name)} | {markdown.plain(cited)} | {markdown.plain(found)} |\n"
                           for name, (cited, found) in check.differences.items())
            st.markdown("| field | the reference says | the record says |\n| --- | --- | --- |\n" + rows)
        record = check.record
        if record is not None and check.verdict != "verified":
            link = f" · [{markdown.plain(record.url)}]({record.url})" if record.url.startswith("https://") else ""
            st.caption(markdown.plain(f"Record ({record.source}): {record.title} — {', '.join(record.authors[:4])}"
                                      f"{' et al.' if len(record.authors) > 4 else ''} ({record.year or 'n.d.'}) "
                                      f"{record.venue}") + link)
        st.caption(markdown.plain(check.note))


def accepted(report: DocumentReview) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """Accepted paper ids (places, claims, then missing papers) and, per placeholder and per uncited claim, the
    ids accepted for it."""
    state = st.session_state
    per_placeholder, per_claim, chosen = [], [], []
    for i, place in enumerate(report.places):
        ids = [s.paper_id for s in place.suggestions if state.get(f"dr_accept_p{i}_{s.paper_id}")]
        chosen += ids
        if place.marker.placeholder:
            per_placeholder.append(ids)
    for j, claim in enumerate(report.uncited):
        ids = [s.paper_id for s in claim.suggestions if state.get(f"dr_accept_c{j}_{s.paper_id}")]
        chosen += ids
        per_claim.append(ids)
    chosen += [m.paper_id for m in report.missing if state.get(f"dr_accept_m_{m.paper_id}")]
    return list(dict.fromkeys(chosen)), per_placeholder, per_claim


def show_export(report: DocumentReview, directory: str) -> None:
    ids, per_placeholder, per_claim = accepted(report)
    if not ids:
        st.caption("Tick the papers you accept (Document and Likely missing tabs) to export them.")
        return
    index = engines.index(directory)
    positions = [index.position[pid] for pid in ids]
    papers: list[Paper] = engines.recommender(directory).retracted.mark(index.papers(positions), positions)
    st.write(f"Accepted: {len(papers)} paper{'' if len(papers) == 1 else 's'}")
    export_panel(papers, None, key="dr_export", formats=EXPORTS)
    if report.document.kind == "latex" and report.document.source_text:
        keys = dict(zip(ids, citation_keys(papers)))
        try:
            filled = filled_latex(report, [[keys[pid] for pid in chosen] for chosen in per_placeholder],
                                  [[keys[pid] for pid in chosen] for chosen in per_claim])
        except ValueError as exc:
            st.warning(f"The .tex copy could not be written: {exc}.", icon="⚠️")
            return
        st.download_button("Download the .tex with accepted citations filled in", filled, file_name="draft-filled.tex",
                           mime="application/x-tex", icon=":material/download:", key="dr_tex")
        st.caption("Add the BibTeX above to your .bib: the keys match.")


def filled_latex(report: DocumentReview, per_placeholder: list[list[str]], per_claim: list[list[str]]) -> str:
    """The LaTeX source with each accepted claim cited after its sentence and the placeholders filled; a claim
    whose sentence is not found in the source is said on the page and left out."""
    claims = report.uncited
    source, lost = cite_after_sentences(report.document.source_text, [claim.sentence for claim in claims],
                                        per_claim, [claim.passage.line for claim in claims])
    if lost:
        st.warning(f"{len(lost)} accepted claim{' was' if len(lost) == 1 else 's were'} not found in the .tex "
                   "source and left without its citation (cite by hand): "
                   + "; ".join(markdown.plain(quoted(sentence)) for sentence in lost[:5])
                   + (" …" if len(lost) > 5 else ""), icon="⚠️")
    return fill_placeholders(source, per_placeholder)
