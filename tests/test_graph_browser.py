"""The citation graph as a real browser draws it, at 1360×1000 and 1920×1080, in the normal view and in presentation
mode: the plot fills most of the window's height, labels are large enough to read (to project, in presentation
mode), no label's box overlaps another's, and presentation mode draws thicker links and larger arrowheads."""
from __future__ import annotations

import itertools
from urllib.parse import urlencode

import pytest

from browser import HAS_CHROMIUM, chromium, serve, settle

TITLE = "Citation recommendation"
ABSTRACT = "We recommend references for a draft from its abstract."
SIZES = [(1360, 1000), (1920, 1080)]
MEASURE = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  const texts = [...plot.querySelectorAll('.scatterlayer .trace text')].filter(t => t.textContent.trim());
  const labels = texts.filter(t => !/^\\d+$/.test(t.textContent));  // the ranks are written inside the papers
  const link = plot.querySelector('.scatterlayer .trace path.js-line');
  const arrows = [...link.closest('.trace').querySelectorAll('path.point')]
    .map(p => p.getBoundingClientRect()).filter(r => r.width > 0);
  return {
    plot: plot.getBoundingClientRect().height, window: innerHeight,
    labels: labels.map(t => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize), fill: getComputedStyle(t).fill,
              box: [r.left, r.top, r.right, r.bottom]};
    }),
    link: parseFloat(getComputedStyle(link).strokeWidth),
    arrow: Math.max(...arrows.map(r => Math.max(r.width, r.height))),
  };
}"""


def overlapping(labels: list[dict]) -> list[tuple[str, str]]:
    """Pairs of labels whose drawn boxes overlap."""
    return [(a["text"], b["text"]) for a, b in itertools.combinations(labels, 2)
            if a["box"][0] < b["box"][2] and b["box"][0] < a["box"][2]
            and a["box"][1] < b["box"][3] and b["box"][1] < a["box"][3]]


def measure(page) -> dict:
    settle(page)
    facts = page.evaluate(MEASURE)
    assert facts["plot"] >= 0.6 * facts["window"], facts["plot"]
    assert facts["labels"] and not overlapping(facts["labels"])
    return facts


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_the_graph_fills_the_window_with_readable_labels_that_never_overlap(small_index, tmp_path):
    env = {"CITREC_INDEX": str(small_index), "CITREC_CORPORA": str(tmp_path / "corpora")}
    with serve(env, tmp_path / "streamlit.log") as base, chromium() as browser:
        page = browser.new_page(viewport=dict(zip(("width", "height"), SIZES[0])))
        page.goto(f"{base}/?{urlencode({'title': TITLE, 'abstract': ABSTRACT})}")
        page.get_by_text("See them as a citation graph").click(timeout=240_000)
        page.locator(".js-plotly-plot .scatterlayer text").first.wait_for(timeout=60_000)
        settle(page)
        drawn = page.locator(".js-plotly-plot .scatterlayer text").count()
        page.get_by_text("Add one hop of neighbours").click()  # more papers: more labels to keep apart
        page.wait_for_function(f"() => document.querySelectorAll('.js-plotly-plot .scatterlayer text').length"
                               f" > {drawn}", timeout=60_000)
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            normal = measure(page)
            assert min(label["size"] for label in normal["labels"]) >= 14
            page.get_by_text("Presentation mode").click()
            page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .scatterlayer text')]"
                                   ".some(t => parseFloat(getComputedStyle(t).fontSize) >= 18)", timeout=60_000)
            shown = measure(page)
            assert min(label["size"] for label in shown["labels"]) >= 18
            assert {label["fill"] for label in shown["labels"]} == {"rgb(0, 0, 0)"}
            assert shown["link"] >= 2 * normal["link"] * 0.9 and shown["arrow"] >= 1.4 * normal["arrow"]
            assert len(shown["labels"]) == len(normal["labels"])
            page.get_by_text("Presentation mode").click()  # back to the normal view for the next size
            page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot .scatterlayer text')]"
                                   ".every(t => parseFloat(getComputedStyle(t).fontSize) < 18)", timeout=60_000)
