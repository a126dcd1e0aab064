"""The citation graph around a recommended set, as an interactive plotly figure laid out by networkx."""
from __future__ import annotations

import html
from collections import Counter

import networkx as nx
import plotly.graph_objects as go

from .index import Index
from .query import Recommendation
from .selection import author_key

MAX_NODES = 200
QUERY = "query"
KIND_STYLE = {  # legend label, marker symbol, base size
    "recommended": ("Recommended", "circle", 14),
    "shared": ("Shared by several recommendations", "diamond", 9),
    "neighbour": ("One-hop neighbour", "circle-open", 7),
}
CLUSTER_COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d",
                   "#eeca3b", "#79706e"]
NO_CLUSTER = "#c7c7c7"


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
        strength = 0.5 + graph.nodes[b].get("weight", 0.0) if data["kind"] == QUERY else 1.0
        undirected.add_edge(a, b, weight=strength)
    k = 1.5 / max(len(graph), 1) ** 0.5
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


def figure(graph: nx.DiGraph, color_by: str = "year", height: int = 620) -> go.Figure:
    """A plotly figure of `citation_graph`'s output; `color_by` is "year" or "authors"."""
    pos = layout(graph)
    fig = go.Figure()
    for kind, colour, width, dash in ((QUERY, "rgba(120,120,120,0.25)", 1, "dot"), ("cites", "rgba(90,90,90,0.55)", 1.2, "solid")):
        xs, ys = [], []
        for a, b, data in graph.edges(data=True):
            if data["kind"] == kind:
                xs += [pos[a][0], pos[b][0], None]
                ys += [pos[a][1], pos[b][1], None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line=dict(color=colour, width=width, dash=dash)))
    clusters = author_clusters(graph) if color_by == "authors" else {}
    years = [d["year"] for _, d in graph.nodes(data=True) if d.get("year")]
    for kind, (label, symbol, base) in KIND_STYLE.items():
        nodes = [n for n, d in graph.nodes(data=True) if d["kind"] == kind]
        if not nodes:
            continue
        data = [graph.nodes[n] for n in nodes]
        marker = dict(symbol=symbol, size=[base + 22 * d.get("weight", 0.0) for d in data],
                      line=dict(width=1, color="white" if kind != "neighbour" else None))
        if color_by == "authors":
            marker["color"] = [CLUSTER_COLOURS[clusters[n] % len(CLUSTER_COLOURS)] if n in clusters else NO_CLUSTER
                               for n in nodes]
        else:
            marker.update(color=[d.get("year") or None for d in data], colorscale="Viridis",
                          cmin=min(years, default=0), cmax=max(years, default=1),
                          showscale=kind == "recommended", colorbar=dict(title="Year", thickness=12))
        fig.add_trace(go.Scatter(
            x=[pos[n][0] for n in nodes], y=[pos[n][1] for n in nodes], mode="markers+text" if kind == "recommended" else "markers",
            name=label, marker=marker, text=[str(d.get("rank", "")) for d in data], textposition="middle center",
            textfont=dict(size=9, color="white"), hovertext=[hover_text(d) for d in data], hoverinfo="text"))
    fig.add_trace(go.Scatter(x=[0], y=[0], mode="markers+text", name="Your query", text=["Your query"],
                             textposition="top center", hoverinfo="skip",
                             marker=dict(symbol="star", size=22, color="#222", line=dict(width=1, color="white"))))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=10), hovermode="closest",
                      plot_bgcolor="white", legend=dict(orientation="h", y=-0.02),
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"))
    return fig
