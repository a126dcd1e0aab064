"""A recommended paper as a card: title, byline, closeness bar, explanation, links, abstract."""
from __future__ import annotations

import re
from urllib.parse import quote

import streamlit as st

from pages.ui.markdown import plain
from recommender.paper import Paper
from recommender.pipeline import confidence
from recommender.query import Recommendation


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
