"""The export panel: the selected papers (or all) as BibTeX, RIS, CSL-JSON or CSV, to download, with a preview."""
from __future__ import annotations

import streamlit as st

from recommender.corpus.export import export
from recommender.paper import Paper

EXPORT_FORMATS = {  # label: (exporter name, file name, MIME type, preview language)
    "BibTeX": ("bibtex", "citations.bib", "application/x-bibtex", "bibtex"),
    "RIS": ("ris", "citations.ris", "application/x-research-info-systems", None),
    "CSL-JSON": ("csl-json", "citations.json", "application/vnd.citationstyles.csl+json", "json"),
    "CSV": ("csv", "citations.csv", "text/csv", None),
}


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
