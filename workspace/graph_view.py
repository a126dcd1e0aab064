"""The citation graph around a recommended set: which papers it holds, and a plotly figure in which years run
left to right, every paper carries a short label, and arrows point from the citing to the cited paper."""
from __future__ import annotations

import html
import math
from collections import Counter
from dataclasses import dataclass
from string import ascii_lowercase

import networkx as nx
import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from recommender.corpus.authors import author_key
from recommender.query import Recommendation
from recommender.store.index import Index
from workspace.contrast import text_colour
from workspace.graph_layout import PLOT_WIDTH, RIGHT, Item, Placement, label_width, place, year_ticks

MAX_CONTEXT = 40  # context papers drawn unless the page asks for another number
MAX_CONTEXT_LIMIT = 150  # the most it may ask for: with 50 recommendations, 200 papers
KIND_STYLE = {  # legend label, marker symbol
    "recommended": ("Recommended (number = rank)", "circle"),
    "shared": ("Linked to several recommendations", "diamond"),
    "neighbour": ("Linked to one recommendation", "triangle-up"),
}
CLUSTER_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d",
                   "#eeca3b", "#17becf")
HIGH_CONTRAST_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442")
UNKNOWN_COLOUR = "#c7c7c7"
YEAR_SCALE = "Viridis"
BACKGROUND = "#ffffff"
SELECTED_RING = "#e4002b"
COLUMN_LINE = "#ececec"
BREAK_LINE = "#9e9e9e"
OUTLINE = "#111111"  # the ring that marks a recommended paper
MAX_SURNAME = 16
MAX_TITLE_LABEL = 22
SURNAME_PARTICLES = {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "le", "la", "dos", "ten"}
NAME_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}
TALL_ROWS = 20  # a graph with more rows repeats the years above it


@dataclass(frozen=True)
class Style:
    """Sizes (pixels) and colours of the figure: the page's view, or `PRESENTATION` for a projector."""

    label_font: float  # recommended papers' labels are bold
    rank_font: float
    font: float  # axis, legends, colour bar
    recommended_size: tuple[float, float]  # marker diameter, weakest to strongest score
    context_size: tuple[float, float]  # by the number of recommendations a context paper is linked to
    row_height: float
    edge_colour: str
    edge_width: float
    arrow_size: float
    palette: tuple[str, ...]
    unknown_colour: str
    label_colour: str
    outline_width: float  # of every context paper; recommended papers get twice as much, in `OUTLINE`
    margin: dict  # top: the shape legend; bottom: year axis and its title
    legend_row: float  # pixels per row of the colour legend below the axis
    legend_entry: float  # pixels per entry of the colour legend, its swatch included

    @property
    def label_gap(self) -> float:
        """Between a marker's edge and its label: room for an arrowhead arriving there."""
        return self.arrow_size + 2


NORMAL = Style(label_font=14, rank_font=12, font=13, recommended_size=(20.0, 28.0), context_size=(13.0, 19.0),
               row_height=32, edge_colour="rgba(60,60,60,0.5)", edge_width=1.4, arrow_size=11,
               palette=CLUSTER_COLOURS, unknown_colour=UNKNOWN_COLOUR, label_colour="#1a1a1a", outline_width=1,
               margin=dict(l=10, r=10, t=46, b=66), legend_row=22, legend_entry=200)
PRESENTATION = Style(label_font=20, rank_font=16, font=18, recommended_size=(30.0, 38.0), context_size=(20.0, 26.0),
                     row_height=46, edge_colour="rgba(0,0,0,0.8)", edge_width=2.6, arrow_size=18,
                     palette=HIGH_CONTRAST_COLOURS, unknown_colour="#9e9e9e", label_colour="#000000",
                     outline_width=1.5, margin=dict(l=10, r=10, t=60, b=84), legend_row=30, legend_entry=270)


# --------------------------------------------------------------------------- which papers


def citation_graph(index: Index, recommendations: list[Recommendation], one_hop: bool = False,
                   max_context: int = MAX_CONTEXT) -> nx.DiGraph:
    """Recommended papers, the context papers most linked to them, and every citation link among all of these.

    Context papers cite or are cited by at least two recommendations (one, with `one_hop`); the
    `max_context` most linked are kept (ties: the most cited in the corpus first) and `graph.graph["left_out"]`
    counts the others. Edges point from the citing to the cited paper.
    """
    recommended = [index.position[r.paper_id] for r in recommendations]
    cited_by = index.graph.times_cited_by(recommended)  # how many recommendations cite each paper
    citing = index.graph.times_citing(recommended)  # how many recommendations each paper cites
    links = cited_by + citing
    links[recommended] = 0
    qualified = np.flatnonzero(links >= (1 if one_hop else 2))
    ordered = sorted(qualified.tolist(), key=lambda p: (-links[p], -index.graph.in_degree[p], p))
    context = ordered[:max(max_context, 0)]
    graph = index.graph.subgraph(recommended + context)
    graph.graph["left_out"] = len(ordered) - len(context)
    top = max((r.score for r in recommendations), default=1.0) or 1.0
    for rec, pos in zip(recommendations, recommended):
        graph.nodes[pos].update(kind="recommended", rank=rec.rank, score=rec.score, weight=max(rec.score, 0) / top)
    for pos in context:
        graph.nodes[pos].update(kind="shared" if links[pos] >= 2 else "neighbour", links=int(links[pos]),
                                cited_by=int(cited_by[pos]), citing=int(citing[pos]))
    for pos in graph:
        graph.nodes[pos].update(title=index.titles[pos], authors=index.authors[pos],
                                year=int(index.years[pos]) or None, venue=index.venues[pos])
    label_nodes(graph)
    return graph


def common_works(index: Index, recommendations: list[Recommendation], top: int = 8,
                 minimum: int = 2) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Prior works (cited by at least `minimum` recommendations) and derivative works (citing at least
    `minimum`), as (position, how many) pairs, most shared first.

    Ties go to the paper the corpus cites most (prior) or to the newest (derivative).
    """
    recommended = [index.position[r.paper_id] for r in recommendations]
    cited_by, citing = index.graph.times_cited_by(recommended), index.graph.times_citing(recommended)
    prior = sorted(np.flatnonzero(cited_by >= minimum).tolist(),
                   key=lambda p: (-cited_by[p], -index.graph.in_degree[p], p))
    derivative = sorted(np.flatnonzero(citing >= minimum).tolist(),
                        key=lambda p: (-citing[p], -int(index.years[p]), p))
    return ([(p, int(cited_by[p])) for p in prior[:top]], [(p, int(citing[p])) for p in derivative[:top]])


# --------------------------------------------------------------------------- labels and colours


def surname(name: str) -> str:
    """The family name of "First Last", "Last, First" or "Ludwig van Beethoven Jr." ("van Beethoven")."""
    name = " ".join(name.split())
    if "," in name:
        return name.split(",")[0].strip()
    parts = [p for p in name.split() if p.lower() not in NAME_SUFFIXES] or name.split()
    if not parts:
        return ""
    start = len(parts) - 1
    while start > 0 and parts[start - 1].lower() in SURNAME_PARTICLES:
        start -= 1
    return " ".join(parts[start:])


def short_name(name: str) -> str:
    """First initial and surname ("T. Mikolov"), at most `MAX_SURNAME` + 3 characters."""
    family = surname(name)
    given = name.split(",", 1)[1] if "," in name else name[:max(name.rfind(family), 0)]
    initial = next((c for c in given if c.isalpha()), "")
    return shorten(f"{initial}. {family}" if initial else family, MAX_SURNAME + 3)


def shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters, with an ellipsis when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0] if " " in text[:limit - 1] else text[:limit - 1]
    return cut.rstrip(" ,;:-") + "…"


def short_label(data: dict) -> str:
    """First author's surname and year ("Bhagavatula 2018"); a shortened title when there are no authors."""
    name = surname(data["authors"][0]) if data.get("authors") else ""
    head = shorten(name, MAX_SURNAME) if name else shorten(data.get("title") or "Untitled", MAX_TITLE_LABEL)
    return f"{head} {data['year']}" if data.get("year") else head


def paper_label(index: Index, position: int) -> str:
    """`short_label` of a paper of the index."""
    return short_label({"authors": index.authors[position], "title": index.titles[position],
                        "year": int(index.years[position]) or None})


def label_nodes(graph: nx.DiGraph) -> None:
    """Set each node's `label`; equal labels get letters in drawing order ("Mikolov 2013a", "Mikolov 2013b")."""
    labels = {n: short_label(graph.nodes[n]) for n in drawing_order(graph)}
    counts = Counter(labels.values())
    seen: Counter[str] = Counter()
    for node, label in labels.items():
        if counts[label] > 1:
            number = seen[label]
            seen[label] += 1
            label += ascii_lowercase[number % 26] if graph.nodes[node].get("year") else f" ({number + 1})"
        graph.nodes[node]["label"] = label


def drawing_order(graph: nx.DiGraph) -> list:
    """Recommended papers by rank, then context papers by how many recommendations they are linked to."""
    def key(node):
        data = graph.nodes[node]
        return (0, data["rank"], 0) if data.get("kind") == "recommended" else (1, -data.get("links", 0), node)
    return sorted(graph, key=key)


def author_clusters(graph: nx.DiGraph) -> tuple[dict, list[str]]:
    """Papers grouped under the author with the most papers here: that author's papers form the first group,
    the author with the most of the remaining papers the next, and so on while a group has two papers or more.

    Returns each grouped node's group number and each group's author (as written on its first paper).
    """
    papers_of: dict[str, set] = {}
    names: dict[str, str] = {}
    for node, authors in graph.nodes(data="authors"):
        for author in authors or []:
            key = author_key(author)
            if key:
                papers_of.setdefault(key, set()).add(node)
                names.setdefault(key, author)
    group_of: dict = {}
    authors: list[str] = []
    while True:
        key, papers = max(((k, p.difference(group_of)) for k, p in papers_of.items()),
                          key=lambda kp: (len(kp[1]), kp[0]), default=("", set()))
        if len(papers) < 2:
            return group_of, authors
        group_of.update((node, len(authors)) for node in papers)
        authors.append(names[key])


def year_colour_range(graph: nx.DiGraph) -> tuple[float, float] | None:
    """The colour scale's ends: the years' range, widened by half a year on each side when it is one year."""
    years = [y for _, y in graph.nodes(data="year") if y]
    if not years:
        return None
    low, high = min(years), max(years)
    return (low - 0.5, high + 0.5) if low == high else (float(low), float(high))


def node_colours(graph: nx.DiGraph, color_by: str, style: Style = NORMAL) -> tuple[dict, list[tuple[str, str]]]:
    """A fill per node, and the colour legend's entries (name, colour); grey means no year / no shared author."""
    grey = style.unknown_colour
    if color_by == "authors":
        group_of, authors = author_clusters(graph)
        sizes = Counter(group_of.values())
        coloured = range(min(len(authors), len(style.palette)))
        colours = {n: style.palette[group_of[n]] if group_of.get(n, len(style.palette)) in coloured else grey
                   for n in graph}
        legend = [(f"{short_name(authors[g])} ({sizes[g]})", style.palette[g]) for g in coloured]
        if grey in colours.values():
            legend.append(("other papers", grey))
        return colours, legend
    scale = year_colour_range(graph)
    colours = {}
    for node, year in graph.nodes(data="year"):
        colours[node] = (sample_colorscale(YEAR_SCALE, (year - scale[0]) / (scale[1] - scale[0]))[0]
                         if year and scale else grey)
    return colours, ([("no year", grey)] if grey in colours.values() else [])


def integer_ticks(low: float, high: float, most: int = 8) -> list[int]:
    """Whole years between `low` and `high`, evenly spaced, at most `most` of them."""
    first, last = math.ceil(low), math.floor(high)
    step = max(1, math.ceil((last - first + 1) / most))
    return list(range(first, last + 1, step))


def hover_text(data: dict) -> str:
    """Escaped title, authors, year and role for plotly's hover box (plotly renders a subset of HTML)."""
    authors = data.get("authors") or []
    names = ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")
    lines = [f"<b>{html.escape(data.get('title') or '(untitled)')}</b>", html.escape(names or "unknown authors"),
             html.escape(" · ".join(str(x) for x in (data.get("year"), data.get("venue")) if x))]
    if "rank" in data:
        lines.append(f"recommendation {data['rank']} · score {data['score']:.2f}")
    elif "links" in data:
        lines.append(f"cited by {data['cited_by']}, cites {data['citing']} of the recommendations")
    return "<br>".join(line for line in lines if line)


def picker_order(index: Index, recommendations: list[Recommendation], positions) -> list[int]:
    """`positions` once each: the recommended papers by rank, then the others oldest first (no year last)."""
    rank = {index.position[r.paper_id]: r.rank for r in recommendations}
    return sorted(dict.fromkeys(positions), key=lambda p: (rank.get(p, math.inf), int(index.years[p]) or math.inf,
                                                           index.titles[p], p))


# --------------------------------------------------------------------------- the figure


def node_size(data: dict, style: Style = NORMAL) -> float:
    if data.get("kind") == "recommended":
        low, high = style.recommended_size
        return low + (high - low) * min(max(data.get("weight", 0.0), 0.0), 1.0)
    low, high = style.context_size
    return min(low + 2 * (data.get("links", 1) - 1), high)


def label_font(data: dict, style: Style = NORMAL) -> float:
    """The font size that estimates a label's width: recommended papers' bold labels run about 8% wider."""
    return style.label_font * (1.08 if data.get("kind") == "recommended" else 1.0)


def placement(graph: nx.DiGraph, style: Style = NORMAL) -> Placement:
    undirected = graph.to_undirected(as_view=True)
    items = [Item(node=n, year=graph.nodes[n].get("year"), size=node_size(graph.nodes[n], style),
                  label_width=label_width(graph.nodes[n]["label"], label_font(graph.nodes[n], style)),
                  label_height=style.label_font, gap=style.label_gap, neighbours=tuple(undirected.neighbors(n)))
             for n in drawing_order(graph)]
    return place(items, PLOT_WIDTH, style.row_height)


def edge_trace(graph: nx.DiGraph, where: Placement, sizes: dict, style: Style) -> go.Scatter:
    """All citation links as one trace: a line per link and an arrowhead touching the cited paper."""
    xs, ys, marker_sizes, standoffs = [], [], [], []
    for a, b in graph.edges():
        xs += [where.x[a], where.x[b], None]
        ys += [where.y[a], where.y[b], None]
        marker_sizes += [0, style.arrow_size, 0]
        standoffs += [0, sizes[b] / 2 + 1, 0]
    return go.Scatter(x=xs, y=ys, mode="lines+markers", hoverinfo="skip", showlegend=False, name="citations",
                      line=dict(color=style.edge_colour, width=style.edge_width),
                      marker=dict(symbol="arrow", angleref="previous", size=marker_sizes, standoff=standoffs,
                                  color=style.edge_colour, opacity=1, line=dict(width=0)),
                      unselected=dict(marker=dict(opacity=1)))


def text_trace(xs, ys, texts, colour, size, position, bold=False, name="") -> go.Scatter:
    """Text that never dims when a point is selected (plotly fades unselected text otherwise)."""
    font = dict(color=colour, size=size, weight="bold" if bold else "normal")
    halo = "none" if position == "middle center" else "auto"  # a contrasting outline keeps lines off the letters
    return go.Scatter(x=xs, y=ys, text=texts, mode="text", textposition=position, hoverinfo="skip",
                      showlegend=False, name=name, textfont=dict(font, shadow=halo),
                      selected=dict(textfont=dict(color=colour)), unselected=dict(textfont=dict(color=colour)))


def legend_entry(name: str, symbol: str, colour: str, legend: str, line_colour: str = BACKGROUND,
                 line_width: float = 1) -> go.Scatter:
    """A legend line with no points in the plot."""
    return go.Scatter(x=[None], y=[None], mode="markers", name=name, legend=legend, hoverinfo="skip",
                      marker=dict(symbol=symbol, size=12, color=colour, line=dict(color=line_colour, width=line_width)))


def colour_legend_rows(entries: list[tuple[str, str]], style: Style = NORMAL) -> int:
    """Rows the colour legend takes: entries are `legend_entry` pixels wide, after a title as wide as one."""
    return math.ceil(len(entries) / max(int(PLOT_WIDTH // style.legend_entry) - 1, 1)) if entries else 0


def node_traces(graph: nx.DiGraph, where: Placement, sizes: dict, colours: dict, style: Style) -> list[go.Scatter]:
    """One marker trace per kind of paper (its shape), carrying each node in `customdata` for selection."""
    order = drawing_order(graph)
    traces = []
    for kind, (_, symbol) in KIND_STYLE.items():
        nodes = [n for n in order if graph.nodes[n].get("kind") == kind]
        recommended = kind == "recommended"
        outline = (dict(color=OUTLINE, width=2.5 * style.outline_width) if recommended else
                   dict(color=OUTLINE if style.outline_width > 1 else BACKGROUND, width=style.outline_width))
        traces.append(go.Scatter(
            x=[where.x[n] for n in nodes], y=[where.y[n] for n in nodes], mode="markers", name=kind,
            showlegend=False, customdata=nodes, hovertext=[hover_text(graph.nodes[n]) for n in nodes],
            hoverinfo="text",
            marker=dict(symbol=symbol, size=[sizes[n] for n in nodes], color=[colours[n] for n in nodes],
                        opacity=1, line=outline),
            selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=1))))
    return traces


def text_traces(graph: nx.DiGraph, where: Placement, sizes: dict, colours: dict, style: Style) -> list[go.Scatter]:
    """Ranks inside the recommended papers (dark or white, whichever reads better on the fill) and every
    paper's label beside it, on the side the layout chose, over the white background."""
    order = drawing_order(graph)
    ranked = [n for n in order if graph.nodes[n].get("kind") == "recommended"]
    traces = []
    for colour in sorted({text_colour(colours[n]) for n in ranked}):
        nodes = [n for n in ranked if text_colour(colours[n]) == colour]
        traces.append(text_trace([where.x[n] for n in nodes], [where.y[n] for n in nodes],
                                 [str(graph.nodes[n]["rank"]) for n in nodes], colour, style.rank_font,
                                 "middle center", bold=True, name="ranks"))
    for bold in (True, False):
        for side, position in ((RIGHT, "middle right"), (-RIGHT, "middle left")):
            nodes = [n for n in order if (graph.nodes[n].get("kind") == "recommended") == bold
                     and where.side[n] == side]
            if nodes:
                traces.append(text_trace([where.x[n] + side * (sizes[n] / 2 + style.label_gap) for n in nodes],
                                         [where.y[n] for n in nodes], [graph.nodes[n]["label"] for n in nodes],
                                         style.label_colour, style.label_font, position, bold=bold, name="labels"))
    return traces


def legend_traces(graph: nx.DiGraph, colour_legend: list[tuple[str, str]],
                  year_scale: tuple[float, float] | None, style: Style) -> list[go.Scatter]:
    """The shapes (top legend), what the colours mean (bottom legend), or the year's colour bar."""
    text = dict(color=style.label_colour, size=style.font)  # set everywhere: Streamlit's theme sets its own
    present = {kind for _, kind in graph.nodes(data="kind")}
    traces = [legend_entry(label, symbol, "#9e9e9e", "legend", OUTLINE if kind == "recommended" else BACKGROUND,
                           2 if kind == "recommended" else 1)
              for kind, (label, symbol) in KIND_STYLE.items() if kind in present]
    traces += [legend_entry(name, "square", colour, "legend2") for name, colour in colour_legend]
    if year_scale:  # an invisible trace that only draws the colour bar
        traces.append(go.Scatter(
            x=[None], y=[None], mode="markers", showlegend=False, hoverinfo="skip",
            marker=dict(colorscale=YEAR_SCALE, cmin=year_scale[0], cmax=year_scale[1], color=[year_scale[0]],
                        showscale=True,
                        colorbar=dict(title=dict(text="Colour: year", side="right", font=text),
                                      tickfont=text, orientation="h",
                                      thickness=10, len=0.35, x=1, xanchor="right", y=0, yref="container",
                                      yanchor="bottom", tickvals=integer_ticks(*year_scale), tickformat="d"))))
    return traces


def break_marks(where: Placement, style: Style) -> tuple[list[dict], list[dict]]:
    """Where years are cut out of the scale: a dashed line through the plot and "//" across the year axis, whose
    hover text names the years left out."""
    lines, marks = [], []
    for centre, first, last in where.scale.breaks:
        lines.append(dict(type="line", xref="x", yref="paper", x0=centre, x1=centre, y0=0, y1=1, layer="below",
                          line=dict(color=BREAK_LINE, width=1, dash="dot")))
        told = "papers without a year are on the left" if first is None else f"{first}–{last}: no papers here"
        marks.append(dict(x=centre, xref="x", y=0, yref="paper", yanchor="middle", text="//", showarrow=False,
                          bgcolor=BACKGROUND, font=dict(color=style.label_colour, size=style.font), hovertext=told))
    return lines, marks


def figure(graph: nx.DiGraph, color_by: str = "authors", selected=None, style: Style = NORMAL) -> go.Figure:
    """A plotly figure of `citation_graph`'s output; `color_by` is "authors" or "year"; `selected` is ringed."""
    where = placement(graph, style)
    sizes = {n: node_size(graph.nodes[n], style) for n in graph}
    colours, colour_legend = node_colours(graph, color_by, style)
    year_scale = year_colour_range(graph) if color_by == "year" else None
    traces = [edge_trace(graph, where, sizes, style), *node_traces(graph, where, sizes, colours, style),
              *text_traces(graph, where, sizes, colours, style)]
    if selected in where.x:
        traces.append(go.Scatter(x=[where.x[selected]], y=[where.y[selected]], mode="markers", hoverinfo="skip",
                                 showlegend=False, name="selected",
                                 marker=dict(symbol="circle-open", size=sizes[selected] + 12, color=SELECTED_RING,
                                             line=dict(color=SELECTED_RING, width=3))))
    if where.rows > TALL_ROWS:  # plotly draws an axis only for a trace on it
        traces.append(go.Scatter(x=[None], y=[None], xaxis="x2", showlegend=False, hoverinfo="skip", name="axis"))
    fig = go.Figure(traces + legend_traces(graph, colour_legend, year_scale, style))
    bottom = style.margin["b"] + style.legend_row * (2 if year_scale else colour_legend_rows(colour_legend, style))
    top = style.margin["t"] + (2 * style.font if where.rows > TALL_ROWS else 0)
    low, high = where.y_range
    ticks, texts = year_ticks(where.scale)
    text = dict(color=style.label_colour, size=style.font)  # set everywhere: Streamlit's theme sets its own
    axis = dict(tickvals=ticks, ticktext=texts, showgrid=True, gridcolor=COLUMN_LINE, zeroline=False, tickfont=text)
    lines, marks = break_marks(where, style)
    cut = " (// leaves out years without papers)" if where.scale.breaks else ""
    fig.update_layout(
        height=int((high - low) * style.row_height) + top + bottom,
        margin=dict(style.margin, t=top, b=bottom), hovermode="closest", plot_bgcolor=BACKGROUND,
        paper_bgcolor=BACKGROUND, font=text, dragmode="pan",
        legend=dict(orientation="h", x=0, xanchor="left", y=1, yref="container", yanchor="top", font=text,
                    title=dict(text="Shape:", font=text)),
        legend2=dict(orientation="h", x=0, xanchor="left", y=0, yref="container", yanchor="bottom", font=text,
                     entrywidth=style.legend_entry - 40, entrywidthmode="pixels",
                     title=dict(text="Colour: author (papers)" if color_by == "authors" else "", font=text)),
        xaxis=dict(axis, range=list(where.x_range), showline=True, linecolor=BREAK_LINE,
                   title=dict(standoff=6, font=text,
                              text=f"Year{cut} · arrows point from the citing paper to the paper it cites")),
        yaxis=dict(range=[high, low], visible=False),  # row 0 at the top
        xaxis2=dict(axis, overlaying="x", matches="x", side="top"),  # years above a tall graph too
        shapes=lines, annotations=marks)
    return fig
