"""The citation-graph view without a browser: which papers and links it draws, labels, colours, the picker's
order, the year scale (true, with marked breaks) and its ticks, the layout (no label over another paper, years
left to right, labels off the links), arrows, caps, presentation mode, and a figure of 200 papers."""
import itertools
import re

import networkx as nx
import numpy as np
import pytest
from plotly.colors import sample_colorscale

from recommender.query import Query
from workspace.contrast import contrast, luminance, text_colour
from workspace.graph_layout import (BREAK_YEARS, LEFT, RIGHT, SPACING, Item, crossings, label_width, place, through,
                                    weight, year_ticks)
from workspace.graph_view import (CLUSTER_COLOURS, HIGH_CONTRAST_COLOURS, MAX_CONTEXT_LIMIT, NORMAL, PRESENTATION,
                                  SELECTED_RING, UNKNOWN_COLOUR, YEAR_SCALE, author_clusters, citation_graph,
                                  common_works, figure, hover_text, label_font, label_nodes, node_colours, node_size,
                                  picker_order, placement, short_label, short_name, surname)


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
    fills = [*CLUSTER_COLOURS, *HIGH_CONTRAST_COLOURS, UNKNOWN_COLOUR, PRESENTATION.unknown_colour,
             *sample_colorscale(YEAR_SCALE, np.linspace(0, 1, 41).tolist()),
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


def spans_of(graph, where, style=NORMAL) -> dict:
    """Each node's stretch of its row, its label on the side the layout chose, as the figure draws it."""
    return {n: Item(n, d["year"], node_size(d, style), label_width(d["label"], label_font(d, style)), style.label_font,
                    style.label_gap).span(where.x[n], where.side[n]) for n, d in graph.nodes(data=True)}


@pytest.mark.parametrize("style", [NORMAL, PRESENTATION], ids=["normal", "presentation"])
@pytest.mark.parametrize("years", [lambda i: 1990 + i % 30, lambda i: 2020, lambda i: None if i % 9 == 0 else 2000])
def test_layout_keeps_labels_off_other_papers_and_years_in_order(years, style):
    graph = synthetic_graph(200, years)
    where = placement(graph, style)
    spans = spans_of(graph, where, style)
    for a, b in itertools.combinations(graph, 2):
        if where.y[a] == where.y[b]:  # the same row: neither the nodes nor their labels overlap
            assert spans[a][1] + SPACING <= spans[b][0] or spans[b][1] + SPACING <= spans[a][0], (a, b)
    order = {year: n for n, year in enumerate([None, *sorted({years(i) for i in range(200)} - {None})])}
    for a, b in itertools.combinations(graph, 2):
        ya, yb = graph.nodes[a]["year"], graph.nodes[b]["year"]
        if order[ya] < order[yb]:
            assert where.x[a] < where.x[b]
    ticks, texts = year_ticks(where.scale)
    assert texts and all(t2 - t1 >= 40 for t1, t2 in zip(ticks, ticks[1:]))
    assert min(left for left, _ in spans.values()) >= 0
    assert max(right for _, right in spans.values()) <= where.x_range[1]
    assert sorted(set(where.y.values())) == list(range(where.rows))  # no empty row between two rows


def test_years_are_to_scale_and_a_long_empty_stretch_is_a_marked_break():
    years = [2002, 2008, 2010, 2013, 2014]
    where = place([Item(year, year, 20, 60, 14, 13) for year in years])
    band = where.scale.band
    assert where.x[2014] - where.x[2013] == pytest.approx(band)
    assert where.x[2013] - where.x[2010] == pytest.approx(3 * band)  # 2011-2012 hold no paper: still to scale
    assert where.x[2010] - where.x[2008] == pytest.approx(2 * band)
    assert where.x[2008] - where.x[2002] < 2 * band  # 2003-2007 (more than BREAK_YEARS years) are cut out...
    ((centre, first, last),) = where.scale.breaks
    assert (first, last) == (2003, 2007) and where.x[2002] < centre < where.x[2008]
    fig = figure(synthetic_graph(60, years=lambda i: years[i % 5]))
    (mark,) = fig.layout.annotations  # ...and marked on the axis, with the years it leaves out
    assert mark.text == "//" and mark.hovertext == "2003–2007: no papers here"
    assert "// leaves out years without papers" in fig.layout.xaxis.title.text
    assert list(fig.layout.xaxis.ticktext) == ["2002", *map(str, range(2008, 2015))]
    assert not figure(synthetic_graph(60, years=lambda i: 2000 + i % 4 * (BREAK_YEARS - 1))).layout.annotations


def test_link_geometry_finds_the_links_through_a_box_and_how_far_they_run_in_it():
    box = (10.0, 10.0, 20.0, 20.0)
    segments = np.array([(0, 15, 30, 15),  # straight through
                         (0, 0, 30, 30),  # diagonally through
                         (15, 0, 15, 12),  # vertical, ends inside
                         (0, 0, 30, 5),  # below it
                         (0, 25, 9, 30),  # beside it, its bounding box apart
                         (0, 21, 30, 40)], dtype=float)  # its bounding box meets the box's, the line does not
    lengths = through(segments, np.array([box])).ravel()
    assert lengths == pytest.approx([10, 10 * 2 ** 0.5, 2, 0, 0, 0])
    assert crossings(box, segments) == 3 and crossings(box, np.zeros((0, 4))) == 0
    flat = np.array([(10.0, 14.0, 110.0, 16.0)])  # a label 100 pixels wide, 4 high
    along, across = np.array([(0.0, 15.0, 120.0, 15.0)]), np.array([(50.0, 0.0, 60.0, 30.0)])
    assert weight(along, flat) > 10 * weight(across, flat) > 0  # a link along a label costs more than across it


def test_labels_keep_off_the_links_where_there_is_room():
    """A much-cited old paper and the newer papers citing it: written to its right, as the figure used to, its
    label would lie under the link from the paper beside it in its row; the layout writes it to the left."""
    cited = Item("old", 2000, 24, 90, 14, 13, neighbours=tuple(f"new{n}" for n in range(4)))
    citing = [Item(f"new{n}", 2010 + n, 20, 70, 14, 13, neighbours=("old",)) for n in range(4)]
    where = place([cited, *citing])
    assert where.side["old"] == LEFT
    links = np.array([(where.x["old"], where.y["old"] * 32, where.x[i.node], where.y[i.node] * 32) for i in citing])
    boxes = [i.label_box(where.x[i.node], where.y[i.node] * 32, where.side[i.node]) for i in [cited, *citing]]
    assert sum(crossings(box, links) for box in boxes) == 0
    assert crossings(cited.label_box(where.x["old"], where.y["old"] * 32, RIGHT), links) >= 1


def test_place_never_puts_two_spans_over_each_other():
    items = [Item(node=i, year=2000 + i % 4, size=20, label_width=60 + i % 7 * 10, label_height=14, gap=13,
                  neighbours=(i - 1,)) for i in range(120)]
    where = place(items)
    for a, b in itertools.combinations(items, 2):
        if where.y[a.node] == where.y[b.node]:
            a0, a1 = a.span(where.x[a.node], where.side[a.node])
            b0, b1 = b.span(where.x[b.node], where.side[b.node])
            assert a1 + SPACING <= b0 or b1 + SPACING <= a0
    assert min(where.y.values()) == 0


def test_presentation_mode_draws_larger_labels_thicker_arrows_and_stronger_colours():
    graph = synthetic_graph(60)
    normal, shown = figure(graph, "authors"), figure(graph, "authors", style=PRESENTATION)
    label_sizes = {t.textfont.size for t in shown.data if t.name == "labels"}
    assert min(label_sizes) >= 18 > max(t.textfont.size for t in normal.data if t.name == "labels")
    (thin,), (thick,) = ([t for t in fig.data if t.name == "citations"] for fig in (normal, shown))
    assert thick.line.width >= 2 * thin.line.width * 0.9 and max(thick.marker.size) > max(thin.marker.size)
    assert contrast(thick.line.color, "#ffffff") > contrast(thin.line.color, "#ffffff")
    assert {c for t in shown.data if t.customdata is not None for c in t.marker.color} <= {
        *HIGH_CONTRAST_COLOURS, PRESENTATION.unknown_colour}
    assert shown.layout.height > normal.layout.height  # taller rows for the larger labels


def test_the_picker_lists_recommendations_by_rank_then_the_others_by_year(small_recommender, recs):
    index = small_recommender.index
    graph = citation_graph(index, recs, one_hop=True)
    order = picker_order(index, recs, [*graph.nodes, *graph.nodes])
    recommended = [index.position[r.paper_id] for r in sorted(recs, key=lambda r: r.rank)]
    assert order[:len(recs)] == recommended and len(order) == len(graph)
    years = [int(index.years[p]) or 10_000 for p in order[len(recs):]]
    assert len(years) > 1 and years == sorted(years)


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
