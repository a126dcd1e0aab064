"""The citation-graph view without a browser: which papers and links it draws, labels, colours, year ticks,
the layout (no label over another paper, years left to right), arrows, caps, and a figure of 200 papers."""
import itertools
import re

import networkx as nx
import numpy as np
import pytest
from plotly.colors import sample_colorscale

from recommender.query import Query
from workspace.contrast import contrast, luminance, text_colour
from workspace.graph_layout import LABEL_GAP, SPACING, Item, label_width, place, year_ticks
from workspace.graph_view import (CLUSTER_COLOURS, MAX_CONTEXT_LIMIT, SELECTED_RING, UNKNOWN_COLOUR, YEAR_SCALE,
                                  author_clusters, citation_graph, common_works, figure, hover_text, label_font,
                                  label_nodes, node_colours, node_size, placement, short_label, short_name, surname)


@pytest.fixture(scope="module")
def recs(small_recommender):
    return small_recommender.recommend(Query(title="Citation recommendation", abstract="Recommend references.", k=4))


def links_to(index, recommended: set[int]) -> dict[int, int]:
    """How many of the recommended papers each other paper cites or is cited by, counted directly."""
    links: dict[int, int] = {}
    for p in recommended:
        for other in [*index.graph.references_of(p).tolist(), *index.graph.citers_of(p).tolist()]:
            if other not in recommended:
                links[other] = links.get(other, 0) + 1
    return links


def test_graph_holds_the_recommendations_and_every_citation_link_among_its_papers(small_recommender, recs):
    index = small_recommender.index
    graph = citation_graph(index, recs)
    recommended = {index.position[r.paper_id] for r in recs}
    assert {n for n, kind in graph.nodes(data="kind") if kind == "recommended"} == recommended
    assert {graph.nodes[index.position[r.paper_id]]["rank"] for r in recs} == {r.rank for r in recs}
    for a, b in itertools.permutations(graph, 2):
        assert graph.has_edge(a, b) == (b in index.graph.references_of(a).tolist())
    assert all(graph.nodes[n]["title"] == index.titles[n] for n in graph)


def test_context_papers_are_the_most_linked_and_the_cap_says_what_it_left_out(small_recommender, recs):
    index = small_recommender.index
    recommended = {index.position[r.paper_id] for r in recs}
    links = links_to(index, recommended)
    graph = citation_graph(index, recs)
    shared = {n for n, kind in graph.nodes(data="kind") if kind == "shared"}
    assert shared == {p for p, n in links.items() if n >= 2}
    assert graph.graph["left_out"] == 0
    wider = citation_graph(index, recs, one_hop=True)
    assert set(wider) == recommended | set(links)
    assert {n for n, kind in wider.nodes(data="kind") if kind == "neighbour"} == {p for p, n in links.items() if n == 1}
    capped = citation_graph(index, recs, one_hop=True, max_context=1)
    (kept,) = set(capped) - recommended
    assert links[kept] == max(links.values())
    assert capped.graph["left_out"] == len(links) - 1
    assert set(citation_graph(index, recs, one_hop=True, max_context=0)) == recommended


def test_prior_and_derivative_works_are_counted_over_the_recommendations(small_recommender, recs):
    index = small_recommender.index
    recommended = [index.position[r.paper_id] for r in recs]
    cited = {p: sum(p in index.graph.references_of(r).tolist() for r in recommended) for p in range(len(index))}
    citing = {p: sum(r in index.graph.references_of(p).tolist() for r in recommended) for p in range(len(index))}
    assert index.graph.times_cited_by(recommended).tolist() == [cited[p] for p in range(len(index))]
    assert index.graph.times_citing(recommended).tolist() == [citing[p] for p in range(len(index))]
    prior, derivative = common_works(index, recs, minimum=1)
    assert prior and derivative
    assert all(cited[p] == n >= 1 for p, n in prior) and all(citing[p] == n >= 1 for p, n in derivative)
    assert [n for _, n in prior] == sorted((n for _, n in prior), reverse=True)
    assert {p for p, _ in common_works(index, recs, top=100)[0]} == {p for p, n in cited.items() if n >= 2}


def test_labels_are_first_author_and_year_or_a_short_title():
    assert surname("Chandra Bhagavatula") == "Bhagavatula"
    assert surname("Mikolov, Tomáš") == "Mikolov"
    assert surname("Laurens van der Maaten") == "van der Maaten"
    assert surname("Martin Luther King Jr.") == "King"
    assert short_name("Tomáš Mikolov") == "T. Mikolov"
    assert short_label({"authors": ["Chandra Bhagavatula"], "year": 2018, "title": "x"}) == "Bhagavatula 2018"
    untitled = short_label({"authors": [], "year": None, "title": "A very long title about citation graphs"})
    assert untitled.endswith("…") and len(untitled) <= 22 and untitled.startswith("A very long")
    graph = nx.DiGraph()
    for node, (kind, rank) in enumerate([("recommended", 1), ("shared", None), ("recommended", 2)]):
        graph.add_node(node, kind=kind, links=2, authors=["Tomas Mikolov"], year=2013, title="t",
                       **({"rank": rank} if rank else {}))
    label_nodes(graph)
    assert [graph.nodes[n]["label"] for n in (0, 2, 1)] == ["Mikolov 2013a", "Mikolov 2013b", "Mikolov 2013c"]


def test_author_groups_follow_the_author_with_most_papers():
    graph = nx.DiGraph()
    graph.add_node(1, authors=["Ada Lovelace", "Alan Turing"])
    graph.add_node(2, authors=["A. Lovelace"])
    graph.add_node(3, authors=["Alan Turing", "Kurt Goedel"])
    graph.add_node(4, authors=["Alan Turing"])
    graph.add_node(5, authors=["Grace Hopper"])
    groups, authors = author_clusters(graph)
    assert authors == ["Alan Turing"] and groups == {1: 0, 3: 0, 4: 0}  # Lovelace's other paper is alone
    colours, legend = node_colours(graph, "authors")
    assert colours[1] == CLUSTER_COLOURS[0] and colours[5] == UNKNOWN_COLOUR
    assert legend == [("A. Turing (3)", CLUSTER_COLOURS[0]), ("other papers", UNKNOWN_COLOUR)]


def test_text_on_any_node_colour_has_wcag_contrast():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic grey that just fails
    assert luminance("rgb(255, 255, 255)") == pytest.approx(1)
    fills = [*CLUSTER_COLOURS, UNKNOWN_COLOUR, *sample_colorscale(YEAR_SCALE, np.linspace(0, 1, 41).tolist()),
             *(f"#{v:02x}{v:02x}{v:02x}" for v in range(256))]
    assert min(contrast(text_colour(fill), fill) for fill in fills) >= 4.5


def test_hover_text_is_escaped_and_unknown_years_are_grey():
    data = {"title": "<b>Bold</b> & <script>x</script>", "authors": ["Eve <i>E</i>"], "year": None, "venue": ""}
    text = hover_text(data)
    assert "<script>" not in text and "&lt;script&gt;" in text and "&lt;i&gt;" in text
    graph = nx.DiGraph()
    graph.add_node(1, kind="recommended", year=None)
    graph.add_node(2, kind="recommended", year=2001)
    colours, legend = node_colours(graph, "year")
    assert colours[1] == UNKNOWN_COLOUR and colours[2] != UNKNOWN_COLOUR and legend == [("no year", UNKNOWN_COLOUR)]


NAMES = [a + b for a, b in itertools.product(["Ander", "Berg", "Carl", "Dahl", "Ek", "Falk"],
                                             ["son", "man", "ström", "qvist", "lund", "berg", "ling"])]


def synthetic_graph(n: int, years=lambda i: 1990 + i % 30) -> nx.DiGraph:
    """A graph shaped like `citation_graph`'s output with n papers: 50 recommended, the rest context."""
    graph = nx.DiGraph()
    for i in range(n):
        recommended = i < 50
        graph.add_node(i, kind="recommended" if recommended else "neighbour", title=f"Paper {i}",
                       authors=[f"Ann {NAMES[i % 37]}", f"Bob {NAMES[i % 11]}"], year=years(i), venue="Venue",
                       **({"rank": i + 1, "score": 1 - i / 100, "weight": 1 - i / 50} if recommended
                          else {"links": 1, "cited_by": 1, "citing": 0}))
        for j in (i * 7 % n, i * 13 % n):
            if j != i:
                graph.add_edge(i, j)
    label_nodes(graph)
    return graph


def numbers_in(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"[\d,]+(?:\.\d+)?", text)]


def test_a_one_year_corpus_gets_whole_year_ticks():
    graph = synthetic_graph(60, years=lambda i: 2020)
    fig = figure(graph, "year")
    bar = next(t.marker.colorbar for t in fig.data if t.marker and t.marker.showscale)
    assert list(bar.tickvals) == [2020] and bar.tickformat == "d"
    assert list(fig.layout.xaxis.ticktext) == ["2020"]
    spread = figure(synthetic_graph(60), "year")
    bar = next(t.marker.colorbar for t in spread.data if t.marker and t.marker.showscale)
    assert all(float(v).is_integer() for v in bar.tickvals) and len(bar.tickvals) <= 8
    assert all(text.isdigit() for text in spread.layout.xaxis.ticktext)


@pytest.mark.parametrize("years", [lambda i: 1990 + i % 30, lambda i: 2020, lambda i: None if i % 9 == 0 else 2000])
def test_layout_keeps_labels_off_other_papers_and_years_in_order(years):
    graph = synthetic_graph(200, years)
    where = placement(graph)
    spans = {}
    for node, data in graph.nodes(data=True):
        left = where.x[node] - node_size(data) / 2
        spans[node] = (left, left + node_size(data) + LABEL_GAP + label_width(data["label"], label_font(data)))
    for a, b in itertools.combinations(graph, 2):
        if where.y[a] == where.y[b]:  # the same row: neither the nodes nor their labels overlap
            assert spans[a][1] + SPACING <= spans[b][0] or spans[b][1] + SPACING <= spans[a][0], (a, b)
    order = {year: n for n, year in enumerate(where.years)}
    for a, b in itertools.combinations(graph, 2):
        ya, yb = graph.nodes[a]["year"], graph.nodes[b]["year"]
        if order[ya] < order[yb]:
            assert where.x[a] < where.x[b]
    ticks, texts = year_ticks(where)
    assert texts and all(t2 - t1 >= 40 for t1, t2 in zip(ticks, ticks[1:]))
    assert max(right for _, right in spans.values()) <= where.x_range[1]


def test_place_never_puts_two_spans_over_each_other():
    items = [Item(node=i, year=2000 + i % 4, size=20, label_width=60 + i % 7 * 10, neighbours=(i - 1,))
             for i in range(120)]
    where = place(items)
    for a, b in itertools.combinations(items, 2):
        if where.y[a.node] == where.y[b.node]:
            a0, b0 = where.x[a.node] - a.size / 2, where.x[b.node] - b.size / 2
            assert a0 + a.footprint + SPACING <= b0 or b0 + b.footprint + SPACING <= a0
    assert min(where.y.values()) == 0


@pytest.mark.parametrize("color_by", ["year", "authors"])
def test_figure_of_200_papers_has_every_label_rank_hover_and_arrow(color_by):
    graph = synthetic_graph(MAX_CONTEXT_LIMIT + 50)
    fig = figure(graph, color_by, selected=3)
    fig.to_json()
    nodes = [t for t in fig.data if t.customdata is not None]
    assert sorted(n for t in nodes for n in t.customdata) == sorted(graph)
    assert all(text for t in nodes for text in t.hovertext)
    labels = [text for t in fig.data if t.name == "labels" for text in t.text]
    assert sorted(labels) == sorted(d["label"] for _, d in graph.nodes(data=True))
    ranks = [text for t in fig.data if t.name == "ranks" for text in t.text]
    assert sorted(ranks, key=int) == [str(r) for r in range(1, 51)]
    (edges,) = [t for t in fig.data if t.name == "citations"]
    assert edges.marker.symbol == "arrow" and edges.marker.angleref == "previous"
    assert sum(1 for size in edges.marker.size if size) == graph.number_of_edges()
    (ring,) = [t for t in fig.data if t.name == "selected"]
    assert ring.marker.color == SELECTED_RING and ring.marker.symbol == "circle-open"
    assert fig.layout.xaxis2.ticktext == fig.layout.xaxis.ticktext and any(t.xaxis == "x2" for t in fig.data)
    legend = {t.name for t in fig.data if t.showlegend is not False and t.name}
    assert "Recommended (number = rank)" in legend and "Linked to one recommendation" in legend
    if color_by == "authors":
        assert sum(1 for t in fig.data if getattr(t, "legend", None) == "legend2") >= 2
