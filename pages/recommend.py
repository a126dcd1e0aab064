"""Recommend: paste a draft (title + abstract) or a passage with [CIT]; get citations to add."""
from __future__ import annotations

import time
from collections import Counter

import numpy as np
import streamlit as st

from pages.ui import access, active_index, cards, engines, shelves
from pages.ui.export_panel import export_panel
from pages.ui.markdown import plain
from recommender.config import DEFAULT_DIVERSITY
from recommender.pipeline import confidence
from recommender.pipeline.language import corpus_languages
from recommender.pipeline.user_input import MODES, prepare, split_authors
from recommender.query import Query

MODE_LABELS = {"auto": "Detect", "draft": "Draft", "passage": "Passage [CIT]"}
MAX_VENUES = 300
GLOSS_WORDS_SHOWN = 30  # of a non-English query's English reading, in the language note
DEFAULT_K = 10
DRAFT_KEYS = ("q_title", "q_text", "q_mode")  # the form's text, as "More like this" replaces it


def apply_deep_link() -> bool:
    """Fill the form from ?title=&abstract= or ?context= (and optional k=, diversity=, like=) once per session.

    `like=ID` says the text is that corpus paper's ("More like this"): the paper itself is left out of the results
    while the title is unchanged. True when a query came in.
    """
    if st.session_state.get("deep_link_seen"):
        return False
    st.session_state["deep_link_seen"] = True
    params = st.query_params
    if not any(params.get(name) for name in ("title", "abstract", "context")):
        return False
    if params.get("like") and not st.session_state.get("q_like") and \
            (st.session_state.get("q_title") or st.session_state.get("q_text")):
        st.session_state["q_draft"] = {key: st.session_state.get(key) for key in DRAFT_KEYS}  # for the way back
    st.session_state["q_title"] = params.get("title", "")
    st.session_state["q_text"] = params.get("context") or params.get("abstract", "")
    st.session_state["q_mode"] = "passage" if params.get("context") else "auto"
    st.session_state["q_like"] = {"id": params["like"], "title": st.session_state["q_title"]} if params.get("like") \
        else None
    try:
        if "k" in params:
            st.session_state["q_k"] = min(max(5 * round(int(params["k"]) / 5), 5), 50)
        if "diversity" in params:
            st.session_state["q_diversity"] = min(max(round(float(params["diversity"]), 1), 0.0), 2.0)
    except ValueError:
        st.warning("The link's k or diversity is not a number; the defaults are used.")
    return True


def share_link(query) -> None:
    """Put the query in the URL so that it can be shared; the workspace's token stays (a reload keeps it)."""
    fields = {"title": query.title, "context": query.context} if query.is_local else \
        {"title": query.title, "abstract": query.abstract}
    fields.update(k=str(query.k), diversity=str(query.diversity), like=",".join(sorted(query.exclude)))
    st.query_params.from_dict({**{k: v for k, v in fields.items() if v}, **shelves.in_address()})


def drop_stale_filters(years: list[int], venues: list[str]) -> None:
    """Forget filter values the corpus cannot offer (after a switch of corpus), before the widgets exist."""
    chosen = st.session_state.get("q_years")
    if chosen and not (len(years) > 1 and years[0] <= chosen[0] <= chosen[1] <= years[-1]):
        del st.session_state["q_years"]
    if any(v not in venues for v in st.session_state.get("q_venues") or []):
        st.session_state["q_venues"] = [v for v in st.session_state["q_venues"] if v in venues]


@st.cache_data(show_spinner=False, max_entries=8)
def filter_choices(directory: str, version: str) -> tuple[list[int], list[str]]:
    """The corpus's years and its most frequent venues, for the filter widgets."""
    index = engines.index(directory)
    venues = [v for v, _ in Counter(v for v in index.venues if v).most_common(MAX_VENUES)]
    return [int(y) for y in np.unique(index.years[index.years > 0])], venues


def query_form(directory: str) -> bool:
    """The form; True when it was submitted."""
    years, venues = filter_choices(directory, engines.version_of(directory))
    drop_stale_filters(years, venues)
    with st.form("query_form", border=False):
        st.text_input("Title", key="q_title", persist_state="session",
                      placeholder="Title of your draft (optional in passage mode)")
        st.text_area("Abstract or passage", key="q_text", height=150, persist_state="session",
                     placeholder="Paste your abstract, or a passage with [CIT] where a citation belongs.")
        st.text_input("Your authors (optional)", key="q_authors", persist_state="session",
                      placeholder="Ada Lovelace; A. Turing",
                      help="Names separated by ';'. Your earlier papers in the corpus become candidates, "
                           "and sharing an author counts as evidence.")
        st.session_state.setdefault("q_mode", "auto")
        st.segmented_control("Mode", MODES, format_func=MODE_LABELS.get, key="q_mode", required=True,
                             persist_state="session",
                             help="Detect: passage mode when the text contains [CIT], else title + abstract.")
        # defaults through the session state, not the widgets: a deep link sets both (a widget given a default
        # and a value set in the session state makes Streamlit log a warning with a stack trace)
        st.session_state.setdefault("q_k", DEFAULT_K)
        st.session_state.setdefault("q_diversity", DEFAULT_DIVERSITY)
        st.slider("Results", 5, 50, step=5, key="q_k", persist_state="session")
        if len(years) > 1:
            st.slider("Years", years[0], years[-1], (years[0], years[-1]), key="q_years", persist_state="session")
        st.multiselect("Venues", venues, key="q_venues", persist_state="session", placeholder="All venues")
        st.toggle("Show retracted papers", key="q_retracted", persist_state="session",
                  help="Retracted papers (flagged in the corpus, or by the imported Retraction Watch data) are left "
                       "out by default; shown, each is marked.")
        submitted = st.form_submit_button("Recommend", type="primary", icon=":material/search:")
    st.slider("Author diversity", 0.0, 2.0, step=0.1, key="q_diversity", persist_state="session", on_change=requery,
              help="Applies at once. 0 = plain ranking (the default); higher values spread the results over more "
                   "authors, at a cost: on ACM-CR dev, 0.1 lowered nDCG@10 by 1% on passages and 2% on drafts, "
                   "0.3 by 1.8–2.8%.")
    return submitted


def requery() -> None:
    """Ask again with the form as it is (a setting changed after a query), without pressing Recommend."""
    if st.session_state.get("results"):
        st.session_state["requery"] = True


def back_to_draft() -> None:
    """Put back the draft that "More like this" replaced, and ask it again."""
    draft = st.session_state.pop("q_draft", None) or {}
    for key, value in draft.items():
        st.session_state[key] = value if value is not None else ""
    st.session_state.pop("q_like", None)
    st.session_state["requery"] = True


def liked_label(directory: str) -> str:
    """"Lovelace 2010": the first author's surname and the year of the paper "More like this" asks about."""
    from workspace.graph_view import paper_label  # the graph's labels; plotly and networkx load only when asked

    index = engines.index(directory)
    position = index.position.get(st.session_state["q_like"]["id"])
    return "this paper" if position is None else paper_label(index, position)


@st.cache_data(show_spinner=False, max_entries=8)
def english_share(directory: str, version: str) -> float:
    return corpus_languages(engines.index(directory).titles).get("en", 0.0)


def language_note(route, directory: str) -> str:
    """For a text that is not English: how it was matched, and how English the corpus is."""
    if route.language.is_english:
        return ""
    how = ("through the multilingual index" if route.field == "multilingual"
           else "by the English pipeline only: this corpus has no multilingual index")
    share = english_share(directory, engines.version_of(directory))
    words = route.gloss.split()
    gloss = (f" Key words read in English as: “{' '.join(words[:GLOSS_WORDS_SHOWN])}"
             f"{' …' if len(words) > GLOSS_WORDS_SHOWN else ''}”." if words else "")
    return (f"Your text looks {route.language.name}; it was matched {how}.{gloss} "
            f"{share:.0%} of this corpus's titles are English.")


def run_query(directory: str) -> None:
    """Prepare the query from the form, run it, and keep the results in the session."""
    low, high = st.session_state.get("q_years") or (None, None)
    years, _ = filter_choices(directory, engines.version_of(directory))
    prepared = prepare(st.session_state.get("q_title", ""), st.session_state.get("q_text", ""),
                       st.session_state.get("q_mode") or "auto", k=st.session_state.get("q_k", DEFAULT_K),
                       diversity=st.session_state.get("q_diversity", DEFAULT_DIVERSITY),
                       venues=list(st.session_state.get("q_venues") or []),
                       authors=split_authors(st.session_state.get("q_authors", "")),
                       year_min=low if low is not None and low > years[0] else None,
                       year_max=high if high is not None and high < years[-1] else None,
                       exclude=liked_paper())
    if not prepared.query.main_text:
        st.session_state.pop("results", None)
        return
    started = time.perf_counter()
    show_retracted = bool(st.session_state.get("q_retracted"))
    recs, papers, language, matches, left_out = answer(directory, engines.version_of(directory), prepared.query,
                                                       engines.recommender(directory), show_retracted)
    st.session_state["results"] = {"directory": directory, "mode": prepared.mode, "notices": prepared.notices,
                                   "language": language, "recs": recs, "papers": papers, "matches": matches,
                                   "seconds": time.perf_counter() - started, "left_out": left_out}
    share_link(prepared.query)


def liked_paper() -> set[str]:
    """The corpus paper whose text the form holds after "More like this", while its title is left as it came."""
    like = st.session_state.get("q_like")
    if like and " ".join(st.session_state.get("q_title", "").split()) == " ".join(like["title"].split()):
        return {like["id"]}
    return set()


@st.cache_data(show_spinner=False, max_entries=64, ttl="1h")
def answer(directory: str, version: str, query: Query, _engine,
           show_retracted: bool = False) -> tuple[list, list, str, confidence.MatchReport, list[str]]:
    """Recommendations, their papers, the language note, how close each paper is, and the titles of retracted
    papers left out, for a query on one version of a corpus.

    Sessions asking the same (a link sent round the lab) share one computation; each gets its own copy.
    """
    result = _engine.recommend(query, show_retracted=show_retracted)
    index = _engine.index
    left_out = [index.titles[index.position[pid]] for pid in result.left_out]
    return (result.recommendations, result.papers, language_note(result.route, directory),
            confidence.assess(_engine, query, result), left_out)


def retracted_notice(titles: list[str]) -> str:
    """What the page says of the retracted papers it left out."""
    shown = "; ".join(f"“{plain(title)}”" for title in titles[:3]) + (" …" if len(titles) > 3 else "")
    return (f"{len(titles)} retracted paper{' was' if len(titles) == 1 else 's were'} left out of these results: "
            f"{shown}. Turn on **Show retracted papers** to see {'it' if len(titles) == 1 else 'them'}, marked.")


def weak_match_notice(matches: confidence.MatchReport) -> str:
    """What the page says when no result is close to the query's text."""
    best, cut = matches.best, confidence.WEAK_MATCH_COSINE[matches.scale]
    return (f"**Nothing in this corpus is close to your text.** The closest paper has a cosine of {best:.2f} to it; "
            f"texts on this corpus's topics reach {cut:.2f} or more. The papers below are only the nearest ones: "
            "check that the text is what you meant to paste, or import a corpus on your topic (Corpus page).")


def show_results(results: dict) -> None:
    for notice in results["notices"]:
        st.warning(notice, icon="✂️")
    if results["language"]:
        st.info(results["language"], icon="🌐")
    recs, papers = results["recs"], results["papers"]
    mode = "passage with [CIT]" if results["mode"] == "passage" else "title + abstract"
    if not recs:
        st.info("No paper matches this text and these filters. Try fewer filters or other words.")
        return
    if liked_paper():
        st.markdown(f"**More like {plain(liked_label(results['directory']))}**: its title and abstract are the "
                    "text asked; the paper itself is left out.")
        if st.session_state.get("q_draft"):
            st.button("Back to your draft", icon=":material/undo:", on_click=back_to_draft, key="q_back")
    matches = results["matches"]
    if matches.weak:
        st.warning(weak_match_notice(matches), icon=":material/search_off:")
    st.subheader(f"{len(recs)} nearest papers (weak match)" if matches.weak else f"{len(recs)} recommendations")
    share = ("share this query by copying the page URL without its workspace=… part (it opens your corpora)"
             if shelves.in_address() else "share this query by copying the page URL")
    st.caption(f"Mode: {mode} · {results['seconds']:.2f} s · {share}")
    st.page_link("pages/citation_graph.py", label="See them as a citation graph", icon=":material/hub:")
    if results.get("left_out"):
        st.info(retracted_notice(results["left_out"]), icon=":material/block:")
    for rec, paper, match in zip(recs, papers, matches.matches):
        if rec.retraction:
            st.error(f"**Retracted** · {plain(rec.retraction)}", icon=":material/block:")
        cards.result_card(rec, paper, match, select_key=f"sel:{rec.paper_id}")
    with st.sidebar:
        selected = [p for p in papers if st.session_state.get(f"sel:{p.id}")]
        export_panel(papers, selected, key="rec_export")


access.require()
directory = active_index.active_index_dir()
deep_linked = apply_deep_link()
st.title("Find citations for your draft")
st.caption(f"Corpus: {active_index.corpus_name(directory)} · {len(engines.index(directory)):,} papers")
form_col, results_col = st.columns([2, 3], gap="large")
with form_col:
    submitted = query_form(directory)
with results_col:
    if submitted or deep_linked or st.session_state.pop("requery", False):
        run_query(directory)
    results = st.session_state.get("results")
    if results and results["directory"] == directory:
        show_results(results)
    else:
        st.info("Paste a title and abstract, or a passage with [CIT], then press **Recommend**.", icon="✍️")
        engines.recommender(directory)  # load the model while the user types, so the first query is fast
