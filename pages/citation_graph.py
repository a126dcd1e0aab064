"""Citation graph: the last recommendations, their citation links and the papers they share."""
from __future__ import annotations

import streamlit as st

from pages.ui import access, common
from pages.ui.graph_view import citation_graph, figure

access.require()
st.title("Citation graph")
results = st.session_state.get("results")
if not results or not results["recs"]:
    st.info("Run a query on the Recommend page first; this page draws its results.", icon="🕸️")
    st.page_link("pages/recommend.py", label="Go to Recommend", icon=":material/search:")
    st.stop()

colour_col, hop_col = st.columns([2, 1], vertical_alignment="bottom")
colour = colour_col.segmented_control("Colour by", ["year", "authors"], key="g_colour", default="year",
                                      required=True, persist_state="session",
                                      format_func={"year": "Year", "authors": "Author cluster"}.get)
one_hop = hop_col.toggle("Add one hop of neighbours", key="g_hop", persist_state="session",
                         help="Also draw every paper the recommendations cite or are cited by (up to 200 papers).")
graph = citation_graph(common.index(results["directory"]), results["recs"], one_hop=one_hop)
papers = graph.number_of_nodes() - 1
links = sum(1 for *_, kind in graph.edges(data="kind") if kind == "cites")
st.caption(f"{papers} papers, {links} citation links. Node size: score; numbers: rank in the list. "
           "Hover a node for its title, authors and year; drag to zoom, double-click to reset.")
st.plotly_chart(figure(graph, colour), key="graph", config={"displaylogo": False})
