"""The Citation graph page draws the last recommendations; one hop adds their neighbours."""
import re

from app_helpers import open_app

GRAPH = "pages/citation_graph.py"


def papers_in_caption(at) -> int:
    return int(re.match(r"(\d+) papers", at.caption[0].value).group(1))


def test_without_results_the_page_asks_for_a_query(app_env):
    at = open_app(GRAPH)
    assert any("Run a query on the Recommend page first" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_the_graph_of_the_results_and_its_one_hop_extension(app_env):
    at = open_app(title="Citation recommendation", abstract="We recommend references for a draft.")
    at.switch_page(GRAPH).run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 1
    plain = papers_in_caption(at)
    assert plain >= 10
    at.toggle(key="g_hop").set_value(True).run()
    assert papers_in_caption(at) > plain
    at.button_group(key="g_colour").set_value("authors").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1
