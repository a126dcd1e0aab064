"""The citation-graph view: which papers and links it draws, and a complete figure at 200 nodes."""
import networkx as nx
import pytest

from pages.ui.graph_view import (MAX_NODES, QUERY, UNKNOWN_COLOUR, author_clusters, citation_graph, figure,
                                    hover_text, node_colours)
from recommender.query import Query


@pytest.fixture(scope="module")
def recs(small_recommender):
    return small_recommender.recommend(Query(title="Citation recommendation", abstract="Recommend references.", k=4))


def positions(index, recs):
    return {index.position[r.paper_id] for r in recs}


def test_graph_holds_query_recommendations_and_their_citation_links(small_recommender, recs):
    index = small_recommender.index
    graph = citation_graph(index, recs)
    recommended = positions(index, recs)
    assert {n for n, kind in graph.nodes(data="kind") if kind == "recommended"} == recommended
    assert all(graph.has_edge(QUERY, p) for p in recommended)
    for a in recommended:
        for b in recommended:
            assert graph.has_edge(a, b) == (b in index.graph.references_of(a).tolist())
    assert graph.nodes[next(iter(recommended))]["title"] in index.titles


def test_papers_shared_by_two_recommendations_join_and_one_hop_adds_neighbours(small_recommender, recs):
    index = small_recommender.index
    recommended = positions(index, recs)
    links = {}
    for p in recommended:
        for other in [*index.graph.references_of(p).tolist(), *index.graph.citers_of(p).tolist()]:
            links[other] = links.get(other, 0) + 1
    graph = citation_graph(index, recs)
    shared = {n for n, kind in graph.nodes(data="kind") if kind == "shared"}
    assert shared == {p for p, n in links.items() if n >= 2 and p not in recommended}
    wider = citation_graph(index, recs, one_hop=True)
    assert set(wider) == set(graph) | set(links)
    neighbours = {n for n, kind in wider.nodes(data="kind") if kind == "neighbour"}
    assert neighbours == {p for p, n in links.items() if n == 1 and p not in recommended}
    assert len(citation_graph(index, recs[:1], one_hop=True)) > len(citation_graph(index, recs[:1]))
    capped = citation_graph(index, recs, one_hop=True, max_nodes=len(recs) + 1)
    assert len(capped) == len(recs) + 2  # the query, the recommendations, one more paper


def test_author_clusters_group_papers_that_share_an_author():
    graph = nx.DiGraph()
    graph.add_node(1, authors=["Ada Lovelace", "Alan Turing"])
    graph.add_node(2, authors=["A. Lovelace"])
    graph.add_node(3, authors=["Alan Turing", "Kurt Goedel"])
    graph.add_node(4, authors=["Grace Hopper"])
    clusters = author_clusters(graph)
    assert clusters[1] == clusters[2] == clusters[3] == 0
    assert 4 not in clusters


def test_hover_text_is_escaped_and_unknown_years_are_grey():
    data = {"title": "<b>Bold</b> & <script>x</script>", "authors": ["Eve <i>E</i>"], "year": None, "venue": ""}
    text = hover_text(data)
    assert "<script>" not in text and "&lt;script&gt;" in text and "&lt;i&gt;" in text
    graph = nx.DiGraph()
    graph.add_node(QUERY, kind=QUERY)
    graph.add_node(1, kind="recommended", year=None)
    graph.add_node(2, kind="recommended", year=2001)
    colours, years = node_colours(graph, "year")
    assert colours[1] == UNKNOWN_COLOUR and colours[2] != UNKNOWN_COLOUR and years == (2001, 2001)


def synthetic_graph(n: int) -> nx.DiGraph:
    """A graph shaped like `citation_graph`'s output with n papers: 50 recommended, the rest neighbours."""
    graph = nx.DiGraph()
    graph.add_node(QUERY, kind=QUERY)
    for i in range(n):
        graph.add_node(i, kind="recommended" if i < 50 else "neighbour", title=f"Paper {i}",
                       authors=[f"Author {i % 37}", f"Author {i % 11}"], year=1990 + i % 30, venue="Venue",
                       **({"rank": i + 1, "score": 1 - i / 100, "weight": 1 - i / 50} if i < 50 else {}))
        if i < 50:
            graph.add_edge(QUERY, i, kind=QUERY)
        for j in (i * 7 % n, i * 13 % n):
            if j != i:
                graph.add_edge(i, j, kind="cites")
    return graph


@pytest.mark.parametrize("color_by", ["year", "authors"])
def test_figure_of_200_papers_is_complete(color_by):
    graph = synthetic_graph(MAX_NODES)
    fig = figure(graph, color_by)
    fig.to_json()
    nodes = [t for t in fig.data if t.mode and "markers" in t.mode and t.name not in (None, "Your query")]
    assert sum(len(t.x) for t in nodes) == MAX_NODES
    assert all(text for t in nodes for text in t.hovertext)
