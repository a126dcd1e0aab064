"""Citation graph: the last recommendations, the papers around them and their citation links, filling most of the
window (larger still in presentation mode, for a projector); pick a paper to read it and to ask for more like it;
the recommendations' common prior and derivative works."""
from __future__ import annotations

import streamlit as st

from pages.ui import access, active_index, cards, engines, markdown
from recommender.config import DEFAULT_DIVERSITY
from recommender.paper import Paper
from recommender.store.index import Index
from workspace.graph_view import (MAX_CONTEXT, MAX_CONTEXT_LIMIT, NORMAL, PRESENTATION, citation_graph, common_works,
                                  figure, paper_label, picker_order)

COLOUR_LABELS = {"authors": "Author", "year": "Year"}
PLOT_HEIGHT = {False: "75vh", True: "86vh"}  # the least share of the window the plot fills, by presentation mode


def describe(graph, one_hop: bool) -> str:
    """What the figure shows and what it leaves out."""
    kinds = [kind for _, kind in graph.nodes(data="kind")]
    recommended, context = kinds.count("recommended"), len(kinds) - kinds.count("recommended")
    text = (f"{recommended} recommended papers (circles, numbered by rank) and {context} papers linked to them, "
            f"{graph.number_of_edges()} citation links. Years run left to right, to scale (// on the axis leaves "
            "out years without papers); arrows point from the citing paper to the paper it cites. Click a paper "
            "(or pick it below) to read it.")
    left_out = graph.graph["left_out"]
    if left_out:
        rule = "one recommendation or more" if one_hop else "two recommendations or more"
        text += (f" Left out: {left_out} less connected papers also linked to {rule}; raise “Context papers” "
                 "to draw them.")
    return text


def fill_window(share: str) -> None:
    """Let the plot take at least `share` of the window's height (CSS units): Streamlit sizes a chart to its
    figure's height, which the server sets without knowing the window."""
    st.html(f"<style>.st-key-g_plot [data-testid=stElementContainer], .st-key-g_plot [data-testid=stFullScreenFrame]"
            f" {{flex-basis: auto !important; height: auto !important}}"
            f" .st-key-g_plot [data-testid=stPlotlyChart] {{min-height: {share}}}</style>")


def picked_label(graph, index: Index, ranks: dict, position: int) -> str:
    """The picker's line for a paper: its rank when recommended, its label and its title."""
    label = graph.nodes[position]["label"] if position in graph else paper_label(index, position)
    return (f"{ranks[position]}. " if position in ranks else "") + f"{label} · {index.titles[position]}"


def chart_key() -> str:
    return f"g_chart_{st.session_state.get('g_chart', 0)}"


def take_click(graph) -> None:
    """A paper clicked in the chart becomes the selected paper; the chart then starts afresh (a new key), so
    that plotly keeps no selection of its own (it would fade the other papers)."""
    event = st.session_state.get(chart_key())
    points = event.selection.points if event else []
    clicked = [p["customdata"] for p in points if p.get("customdata") in graph]
    if clicked:
        st.session_state["g_paper"] = clicked[0]
        st.session_state["g_chart"] = st.session_state.get("g_chart", 0) + 1


def select(position: int) -> None:
    st.session_state["g_paper"] = position


def more_like_this(paper: Paper) -> None:
    """Make the paper the next query: the Recommend page's deep link, with this session's settings."""
    st.session_state.pop("deep_link_seen", None)  # the Recommend page reads the link once per visit
    st.switch_page("pages/recommend.py", query_params={
        "title": paper.title, "abstract": paper.abstract, "like": paper.id,
        "k": str(st.session_state.get("q_k", 10)),
        "diversity": str(st.session_state.get("q_diversity", DEFAULT_DIVERSITY))})


def role(graph, position: int, recommendations: int) -> str:
    data = graph.nodes[position] if position in graph else {}
    if data.get("kind") == "recommended":
        return f"Recommendation {data['rank']} (score {data['score']:.2f})."
    if data:
        return (f"Context paper: cited by {data['cited_by']} and citing {data['citing']} of the "
                f"{recommendations} recommendations.")
    return "Not drawn in the graph (too few links to the recommendations for the current settings)."


def paper_card(index: Index, graph, position: int, recommendations: int) -> None:
    paper = index.papers([position])[0]
    with st.container(border=True):
        st.markdown(f"**{markdown.plain(paper.title or '(untitled)')}**")
        st.caption(markdown.plain(cards.byline(paper)))
        st.markdown(f":small[{markdown.plain(role(graph, position, recommendations))} Cited by "
                    f"{int(index.graph.in_degree[position])} papers of this corpus.]")
        found = cards.links(paper)
        if found:
            st.markdown(":small[" + " · ".join(f"[{markdown.plain(label)}]({url})" for label, url in found) + "]")
        if paper.abstract:
            source = paper.extra.get("summary_source")
            with st.expander(f"Summary ({source}; not the published abstract)" if source else "Abstract"):
                st.markdown(markdown.plain(paper.abstract))
        if st.button("More like this", icon=":material/manage_search:", type="primary", key="g_more",
                     help="Search the corpus with this paper's title and abstract as your text."):
            more_like_this(paper)


def works_list(index: Index, works: list[tuple[int, int]], verb: str, total: int, key: str) -> None:
    if not works:
        st.caption(f"No paper here {verb} two or more of the recommendations.")
        return
    for position, count in works:
        st.button(f"{markdown.plain(paper_label(index, position))} · {markdown.plain(index.titles[position])} "
                  f"({verb} {count} of {total})", key=f"{key}:{position}", type="tertiary", wrap=True, on_click=select,
                  args=(position,))


access.require()
# the session's corpus first: one deleted meanwhile (by another session on the same builds address, or by the
# clean-up) gives way to the default and drops its results, which name a folder that is gone
directory = active_index.active_index_dir()
st.title("Citation graph")
results = st.session_state.get("results")
if not results or not results["recs"] or results["directory"] != directory:
    st.info("Run a query on the Recommend page first; this page draws its results.", icon="🕸️")
    st.page_link("pages/recommend.py", label="Go to Recommend", icon=":material/search:")
    st.stop()

recs = results["recs"]
index = engines.index(results["directory"])
colour_col, hop_col, present_col, size_col = st.columns([2, 2, 2, 3], vertical_alignment="bottom")
colour = colour_col.segmented_control("Colour by", list(COLOUR_LABELS), key="g_colour", default="authors",
                                      required=True, persist_state="session", format_func=COLOUR_LABELS.get)
one_hop = hop_col.toggle("Add one hop of neighbours", key="g_hop", persist_state="session",
                         help="Also draw papers that cite, or are cited by, only one recommendation.")
present = present_col.toggle("Presentation mode", key="g_present", persist_state="session",
                             help="Large labels, thick arrows and strong colours, for a projector.")
max_context = size_col.slider("Context papers", 0, MAX_CONTEXT_LIMIT, MAX_CONTEXT, step=10, key="g_context",
                              persist_state="session",
                              help="The most connected papers around the recommendations that are drawn.")
graph = citation_graph(index, recs, one_hop=one_hop, max_context=max_context)
prior, derivative = common_works(index, recs)
take_click(graph)
options = picker_order(index, recs, [*graph.nodes, *(p for p, _ in prior), *(p for p, _ in derivative)])
ranks = {index.position[r.paper_id]: r.rank for r in recs}
if st.session_state.get("g_paper") not in options:
    st.session_state["g_paper"] = None
st.caption(describe(graph, one_hop))
fill_window(PLOT_HEIGHT[present])
with st.container(key="g_plot"):
    st.plotly_chart(figure(graph, colour, selected=st.session_state["g_paper"],
                           style=PRESENTATION if present else NORMAL),
                    key=chart_key(), on_select="rerun", selection_mode="points",
                    config={"displaylogo": False, "scrollZoom": False})

paper_col, works_col = st.columns([3, 2], gap="large")
with paper_col:
    st.subheader("Selected paper")
    position = st.selectbox(
        "Paper", options, key="g_paper", placeholder="Click a paper in the graph, or pick one here",
        format_func=lambda p: picked_label(graph, index, ranks, p))
    if position is not None:
        paper_card(index, graph, position, len(recs))
with works_col:
    st.subheader("Prior works", help="Papers that several recommendations cite: often the field's foundations.")
    works_list(index, prior, "cited by", len(recs), "g_prior")
    st.subheader("Derivative works", help="Papers that cite several recommendations: later work building on them.")
    works_list(index, derivative, "cites", len(recs), "g_derivative")
