"""The citation graph around a recommended set, as an interactive plotly figure laid out by networkx."""
from __future__ import annotations

import html
from collections import Counter

import networkx as nx
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from recommender.authors import author_key
from recommender.index import Index
from recommender.query import Recommendation

MAX_NODES = 200
QUERY = "query"
KIND_STYLE = {  # legend label, marker symbol, base size
    "recommended": ("Recommended", "circle", 14),
    "shared": ("Shared by several recommendations", "diamond", 9),
    "neighbour": ("One-hop neighbour", "triangle-up", 8),
}
CLUSTER_COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d",
                   "#eeca3b", "#79706e"]
UNKNOWN_COLOUR = "#c7c7c7"
YEAR_SCALE = "Viridis"


def citation_graph(index: Index, recommendations: list[Recommendation], one_hop: bool = False,
                   max_nodes: int = MAX_NODES) -> nx.DiGraph:
    """Recommended papers, papers at least two of them cite or are cited by, and the query.

    Edges point from citing to cited paper; the query links to every recommendation. With
    `one_hop`, every reference and citer of a recommendation joins, most connected first,
    up to `max_nodes` papers in all.
    """
    graph = nx.DiGraph()
    graph.add_node(QUERY, kind=QUERY)
    top = max((r.score for r in recommendations), default=1.0) or 1.0
    rec_positions = []
    for rec in recommendations[:max_nodes]:
        pos = index.position[rec.paper_id]
        rec_positions.append(pos)
        graph.add_node(pos, kind="recommended", rank=rec.rank, score=rec.score, weight=max(rec.score, 0) / top)
        graph.add_edge(QUERY, pos, kind=QUERY)
    links: Counter[int] = Counter()
    edges = []
    for pos in rec_positions:
        for ref in index.graph.references_of(pos):
            edges.append((pos, int(ref)))
            links[int(ref)] += 1
        for citer in index.graph.citers_of(pos):
            edges.append((int(citer), pos))
            links[int(citer)] += 1
    room = max_nodes - len(rec_positions)
    extra = [p for p, n in links.most_common() if p not in graph and (one_hop or n >= 2)][:max(room, 0)]
    for pos in extra:
        graph.add_node(pos, kind="shared" if links[pos] >= 2 else "neighbour")
    graph.add_edges_from(((a, b) for a, b in edges if a in graph and b in graph), kind="cites")
    for pos in graph:
        if pos != QUERY:
            graph.nodes[pos].update(title=index.titles[pos], authors=index.authors[pos],
                                    year=int(index.years[pos]) or None, venue=index.venues[pos])
    return graph


def author_clusters(graph: nx.DiGraph) -> dict[int, int]:
    """Papers grouped by shared authors (connected components); groups of one paper are left out.

    Groups are numbered by size, largest first.
    """
    by_author: dict[str, list] = {}
    for node, data in graph.nodes(data=True):
        for key in {author_key(a) for a in data.get("authors", [])} - {""}:
            by_author.setdefault(key, []).append(node)
    shared = nx.Graph()
    for nodes in by_author.values():
        shared.add_edges_from(zip(nodes, nodes[1:]))
    groups = sorted((c for c in nx.connected_components(shared) if len(c) > 1), key=lambda c: (-len(c), min(c)))
    return {node: number for number, group in enumerate(groups) for node in group}


def layout(graph: nx.DiGraph, seed: int = 7) -> dict:
    """Spring layout with the query fixed at the centre; stronger recommendations sit closer to it."""
    undirected = nx.Graph()
    undirected.add_nodes_from(graph)
    for a, b, data in graph.edges(data=True):
        strength = 0.2 + 0.6 * graph.nodes[b].get("weight", 0.0) if data["kind"] == QUERY else 1.0
        undirected.add_edge(a, b, weight=strength)
    k = 2.0 / max(len(graph), 1) ** 0.5
    return nx.spring_layout(undirected, pos={QUERY: (0.0, 0.0)}, fixed=[QUERY], k=k, seed=seed, iterations=60)


def hover_text(data: dict) -> str:
    """Escaped title, authors and year for plotly's hover box (plotly renders a subset of HTML)."""
    authors = data.get("authors") or []
    names = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    lines = [f"<b>{html.escape(data.get('title') or '(untitled)')}</b>", html.escape(names or "unknown authors"),
             html.escape(" · ".join(str(x) for x in (data.get("year"), data.get("venue")) if x))]
    if "rank" in data:
        lines.append(f"rank {data['rank']} · score {data['score']:.2f}")
    return "<br>".join(line for line in lines if line)


def node_colours(graph: nx.DiGraph, color_by: str) -> tuple[dict, tuple[int, int] | None]:
    """A colour per paper node (grey when unknown), and the year range when colouring by year."""
    papers = [n for n in graph if n != QUERY]
    if color_by == "authors":
        clusters = author_clusters(graph)
        return {n: CLUSTER_COLOURS[clusters[n] % len(CLUSTER_COLOURS)] if n in clusters else UNKNOWN_COLOUR
                for n in papers}, None
    years = [graph.nodes[n]["year"] for n in papers if graph.nodes[n].get("year")]
    if not years:
        return {n: UNKNOWN_COLOUR for n in papers}, None
    low, high = min(years), max(years)
    colours = {}
    for n in papers:
        year = graph.nodes[n].get("year")
        colours[n] = sample_colorscale(YEAR_SCALE, (year - low) / max(high - low, 1))[0] if year else UNKNOWN_COLOUR
    return colours, (low, high)


def _edge_trace(graph: nx.DiGraph, pos: dict, kind: str, colour: str, dash: str) -> go.Scatter:
    xs, ys = [], []
    for a, b, edge_kind in graph.edges(data="kind"):
        if edge_kind == kind:
            xs += [pos[a][0], pos[b][0], None]
            ys += [pos[a][1], pos[b][1], None]
    return go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                      line=dict(color=colour, width=1.2, dash=dash))


def figure(graph: nx.DiGraph, color_by: str = "year", height: int = 620) -> go.Figure:
    """A plotly figure of `citation_graph`'s output; `color_by` is "year" or "authors"."""
    pos = layout(graph)
    colours, years = node_colours(graph, color_by)
    fig = go.Figure([_edge_trace(graph, pos, QUERY, "rgba(120,120,120,0.3)", "dot"),
                     _edge_trace(graph, pos, "cites", "rgba(80,80,80,0.55)", "solid")])
    for kind, (label, symbol, base) in KIND_STYLE.items():
        nodes = [n for n, node_kind in graph.nodes(data="kind") if node_kind == kind]
        data = [graph.nodes[n] for n in nodes]
        fig.add_trace(go.Scatter(
            x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], name=label,
            mode="markers+text" if kind == "recommended" else "markers",
            marker=dict(symbol=symbol, color=[colours[n] for n in nodes], line=dict(width=1, color="white"),
                        size=[base + 14 * d.get("weight", 0.0) for d in data]),
            text=[str(d.get("rank", "")) for d in data], textposition="middle center",
            textfont=dict(size=9, color="white"), hovertext=[hover_text(d) for d in data], hoverinfo="text"))
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers+text", name="Your query", text=["Your query"],
                             textposition="top center", hoverinfo="skip",
                             marker=dict(symbol="star", size=22, color="#222", line=dict(width=1, color="white"))))
    if years:  # an invisible trace that only draws the colour bar
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", showlegend=False, hoverinfo="skip",
                                 marker=dict(colorscale=YEAR_SCALE, cmin=years[0], cmax=years[1], color=[years[0]],
                                             showscale=True, colorbar=dict(title="Year", thickness=12))))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=10), hovermode="closest",
                      plot_bgcolor="white", legend=dict(orientation="h", y=-0.02),
                      xaxis=dict(visible=False), yaxis=dict(visible=False))
    return fig
