"""The Citation graph page: the graph of the last recommendations, its controls (presentation mode too), the
picker's order, a paper's card with "More like this", prior and derivative works; and in a real browser, labels
that can be read, arrows that show direction, "More like this" and its way back to the draft, and the diversity
slider that ranks again at once."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from support.app_helpers import ask, open_app
from browser import HAS_CHROMIUM, chromium, serve, settle
from recommender.store.index import Index
from workspace.contrast import contrast, rgb
from workspace.graph_view import SELECTED_RING

GRAPH = "pages/citation_graph.py"
TITLE = "Citation recommendation"
ABSTRACT = "We recommend references for a draft from its abstract."


def caption(at) -> str:
    return next(c.value for c in at.caption if "recommended papers" in c.value)


def counts(at) -> tuple[int, int]:
    """Recommended and context papers the caption reports."""
    found = re.match(r"(\d+) recommended papers .* and (\d+) papers linked", caption(at))
    return int(found.group(1)), int(found.group(2))


def test_without_results_the_page_asks_for_a_query(app_env):
    at = open_app(GRAPH)
    assert any("Run a query on the Recommend page first" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_the_graph_grows_with_one_hop_and_shrinks_with_the_cap(app_env):
    at = open_app(title=TITLE, abstract=ABSTRACT)
    at.switch_page(GRAPH).run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 1
    recommended, context = counts(at)
    assert recommended == 10 and context >= 1
    at.toggle(key="g_hop").set_value(True).run()
    assert counts(at)[1] > context
    wide = counts(at)[1]
    at.slider(key="g_context").set_value(0).run()
    assert counts(at) == (10, 0)
    assert f"Left out: {wide} less connected papers" in caption(at)
    at.button_group(key="g_colour").set_value("year").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1


def label_sizes(at) -> set[float]:
    """The font sizes of the drawn figure's paper labels."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return {t["textfont"]["size"] for t in spec["data"] if t.get("name") == "labels"}


def test_the_picker_lists_by_rank_then_year_and_presentation_mode_is_one_click(app_env):
    at = open_app(title=TITLE, abstract=ABSTRACT)
    at.switch_page(GRAPH).run()
    at.toggle(key="g_hop").set_value(True).run()
    options = at.selectbox(key="g_paper").options
    assert [o.split(". ", 1)[0] for o in options[:10]] == [str(rank) for rank in range(1, 11)]
    years = [int(re.search(r" (\d{4})[a-z]? · ", o).group(1)) for o in options[10:]]
    assert len(years) > 1 and years == sorted(years)
    assert max(label_sizes(at)) < 18
    at.toggle(key="g_present").set_value(True).run()
    assert not at.exception, at.exception
    assert min(label_sizes(at)) >= 18


def test_a_picked_paper_shows_its_card_and_more_like_this_asks_for_it(app_env, small_index):
    index = Index.load(small_index)
    at = open_app(title=TITLE, abstract=ABSTRACT)
    at.switch_page(GRAPH).run()
    prior = [b for b in at.button if b.key and b.key.startswith("g_prior:")]
    assert prior, "the small corpus's results share references"
    prior[0].click().run()
    chosen = int(prior[0].key.split(":")[1])
    assert at.selectbox(key="g_paper").value == chosen
    assert any(index.titles[chosen] in m.value.replace("\\", "") for m in at.markdown)
    third = at.session_state["results"]["recs"][2]
    at.selectbox(key="g_paper").set_value(index.position[third.paper_id]).run()
    assert any("Recommendation 3 (score" in m.value.replace("\\", "") for m in at.markdown)
    at.button(key="g_more").click().run()
    assert not at.exception, at.exception
    assert at.text_input(key="q_title").value == third.title
    results = at.session_state["results"]
    assert results["recs"] and third.paper_id not in [r.paper_id for r in results["recs"]]  # only papers like it


def test_results_of_a_corpus_deleted_meanwhile_give_way_to_the_default(app_env, small_index, tmp_path):
    """Another session on the same builds address (or the clean-up) deletes the corpus this session's results came
    from: the page falls back like the others do, instead of failing on the folder that is gone."""
    mine = tmp_path / "mine"
    shutil.copytree(small_index, mine)
    at = open_app()
    at.session_state["corpus_dir"] = str(mine)
    at = ask(at, TITLE, ABSTRACT)
    assert at.session_state["results"]["directory"] == str(mine)
    shutil.rmtree(mine)
    at.switch_page(GRAPH).run()
    assert not at.exception, at.exception
    assert any("Run a query on the Recommend page first" in i.value for i in at.info)
    assert "results" not in at.session_state


# --------------------------------------------------------------------------- in a real browser

SVG_FACTS = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  const area = plot.querySelector('.bglayer rect, .subplot.xy rect.bg');  // drawn only when unlike the paper
  const shapes = [...plot.querySelectorAll('.scatterlayer .trace path.point')];
  const under = (x, y) => {  // the fill of the topmost marker at this point of the screen, or null
    let fill = null;
    for (const m of shapes) {  // document order is painting order
      const style = getComputedStyle(m);
      if (style.fill === 'none' || !m.getScreenCTM()) continue;
      const p = new DOMPoint(x, y).matrixTransform(m.getScreenCTM().inverse());
      if (m.isPointInFill(p)) fill = style.fill;
    }
    return fill;
  };
  const texts = [...plot.querySelectorAll('.scatterlayer .trace text')].filter(t => t.textContent.trim());
  return {
    background: area ? getComputedStyle(area).fill
                     : getComputedStyle(plot.querySelector('svg.main-svg')).backgroundColor,
    texts: texts.map(t => {
      const r = t.getBoundingClientRect();
      const xs = [0.08, 0.3, 0.5, 0.7, 0.92].map(f => r.left + f * r.width);
      return {text: t.textContent, fill: getComputedStyle(t).fill,
              behind: xs.map(x => under(x, r.top + r.height / 2))};
    }),
    others: [...plot.querySelectorAll('text')].filter(t => t.textContent.trim() && !t.closest('.scatterlayer'))
      .map(t => ({text: t.textContent, fill: getComputedStyle(t).fill})),
    arrows: [...plot.querySelectorAll('.scatterlayer .trace')].filter(t => t.querySelector('path.js-line'))
      .flatMap(t => [...t.querySelectorAll('path.point')]).filter(p => p.getAttribute('d') !== 'M0,0Z').length,
  };
}"""


def over(fill: str, background: str) -> str:
    """The colour a fill with alpha shows over the background."""
    alpha = float(fill.split(",")[3].rstrip(") ")) if fill.startswith("rgba") else 1.0
    mixed = [alpha * f + (1 - alpha) * b for f, b in zip(rgb(fill), rgb(background))]
    return "rgb({:.0f}, {:.0f}, {:.0f})".format(*mixed)


def assert_legible(facts: dict) -> None:
    """Every text of the figure has WCAG contrast 4.5 or more with what is drawn behind it."""
    for text in facts["texts"]:  # ranks and labels: over a node, an arrowhead or the background
        for fill in text["behind"]:
            shown = over(fill, facts["background"]) if fill else facts["background"]
            assert contrast(text["fill"], shown) >= 4.5, (text, shown)
    for text in facts["others"]:  # axis, legends, colour bar: on the white paper
        assert contrast(text["fill"], facts["background"]) >= 4.5, text


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_labels_are_legible_arrows_drawn_and_a_clicked_paper_opens(small_index, tmp_path):
    env = {"CITREC_INDEX": str(small_index), "CITREC_CORPORA": str(tmp_path / "corpora")}
    with serve(env, tmp_path / "streamlit.log") as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        page.goto(f"{base}/?{urlencode({'title': TITLE, 'abstract': ABSTRACT})}")
        page.get_by_text("See them as a citation graph").click(timeout=240_000)
        page.locator(".js-plotly-plot .scatterlayer text").first.wait_for(timeout=60_000)
        settle(page)
        facts = page.evaluate(SVG_FACTS)
        assert facts["background"] == "rgb(255, 255, 255)"  # white in any Streamlit theme
        reported = page.get_by_text("recommended papers (circles").inner_text()
        recommended, context, links = map(int, re.match(r"(\d+) recommended papers .*? and (\d+) papers linked "
                                                        r"to them, (\d+) citation links", reported).groups())
        ranks = [t for t in facts["texts"] if t["text"].isdigit()]
        labels = [t for t in facts["texts"] if not t["text"].isdigit()]
        assert sorted(int(t["text"]) for t in ranks) == list(range(1, recommended + 1))
        assert len(labels) == recommended + context
        assert all(re.fullmatch(r"\S.* \d{4}[a-z]?", t["text"]) for t in labels), [t["text"] for t in labels]
        assert any(t["text"] == "Shape:" for t in facts["others"]) and any(t["text"].isdigit() for t in facts["others"])
        assert_legible(facts)
        assert links >= 1 and facts["arrows"] >= links
        page.screenshot(path=str(tmp_path / "graph.png"))
        page.get_by_text("Year", exact=True).click()  # colour by year: a colour bar instead of the author legend
        page.locator(".js-plotly-plot .colorbar").wait_for(timeout=60_000)
        settle(page)
        by_year = page.evaluate(SVG_FACTS)
        assert any(t["text"] == "Colour: year" for t in by_year["others"])
        assert_legible(by_year)

        page.locator(".js-plotly-plot .scatterlayer .trace").nth(1).locator("path.point").first.click(force=True)
        page.get_by_role("button", name="More like this").wait_for(timeout=60_000)
        settle(page)
        ring = rgb(SELECTED_RING)
        assert page.evaluate("""(ring) => [...document.querySelectorAll('.js-plotly-plot path.point')]
          .some(p => getComputedStyle(p).stroke === ring)""", "rgb({:.0f}, {:.0f}, {:.0f})".format(*ring))
        picked = page.get_by_test_id("stSelectbox").locator("input").input_value()
        title = picked.split(" · ", 1)[1]
        page.get_by_role("button", name="More like this").click()
        page.get_by_text("Find citations for your draft").wait_for(timeout=60_000)
        page.get_by_text(re.compile(r"^\d+ recommendations$")).wait_for(timeout=60_000)
        assert parse_qs(urlparse(page.url).query)["title"] == [title]
        assert page.get_by_label("Title").input_value() == title
        page.get_by_text(re.compile(r"^More like \S.*: its title and abstract are the text asked")).wait_for()
        page.get_by_role("button", name="Back to your draft").click()  # the draft "More like this" replaced
        page.wait_for_function("t => document.querySelector('input[aria-label=\"Title\"]').value === t", arg=TITLE)
        page.get_by_text(re.compile(r"^\d+ recommendations$")).wait_for(timeout=60_000)
        settle(page)
        page.get_by_role("slider", name="Author diversity").press("End")  # re-ranks without pressing Recommend
        page.wait_for_url(re.compile(r"[?&]diversity=2\.0(&|$)"), timeout=60_000)
        assert parse_qs(urlparse(page.url).query)["title"] == [TITLE]
        assert Path(tmp_path / "graph.png").stat().st_size > 10_000
