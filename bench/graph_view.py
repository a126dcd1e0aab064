"""How long the Citation graph page takes to draw, from 15 to 200 papers, on the demo index.

    python -m bench.graph_view [--repeat 5]

For each case: papers and links drawn, the figure's height, the server's time (the graph, prior and
derivative works, the plotly figure and its JSON: what a rerun of the page computes) and Chromium's time to
draw it (`Plotly.newPlot` with the plotly.js of the installed plotly package, in a 900-pixel-wide plot), medians
of `--repeat` runs. Needs Debian's chromium.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time

from plotly.offline import get_plotlyjs
from playwright.sync_api import sync_playwright

from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from workspace.demo import ensure_demo_index
from workspace.graph_view import citation_graph, common_works, figure

QUERY = dict(title="Neural networks for text",
             abstract="Deep learning for text retrieval, language models, sentence embeddings and citation "
                      "recommendation.")
CASES = [  # results, one hop, context papers at most
    (10, False, 40),
    (10, True, 40),
    (50, True, 150),
    (80, True, 150),
]
PAGE = "<html><body><div id='g' style='width:900px'></div><script>{}</script></body></html>"
DRAW = """async (f) => {
  const start = performance.now();
  await Plotly.newPlot('g', f.data, f.layout);
  const ms = performance.now() - start;
  const elements = document.querySelectorAll('#g svg *').length;
  Plotly.purge('g');
  return [ms, elements];
}"""


def server_side(engine: Recommender, recs: list, one_hop: bool, cap: int) -> tuple[float, dict, object]:
    start = time.perf_counter()
    graph = citation_graph(engine.index, recs, one_hop=one_hop, max_context=cap)
    common_works(engine.index, recs)
    spec = json.loads(figure(graph, "authors").to_json())
    return (time.perf_counter() - start) * 1000, spec, graph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    engine = Recommender.load(ensure_demo_index(lambda *_: None))
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                             args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        page.set_content(PAGE.format(get_plotlyjs()))
        for k, one_hop, cap in CASES:
            recs = engine.recommend(Query(**QUERY, k=k)).recommendations
            server, draw, elements = [], [], 0
            for _ in range(args.repeat):
                ms, spec, graph = server_side(engine, recs, one_hop, cap)
                server.append(ms)
                ms, elements = page.evaluate(DRAW, spec)
                draw.append(ms)
            rows.append({"results": len(recs), "one_hop": one_hop, "cap": cap, "papers": len(graph),
                         "links": graph.number_of_edges(), "height_px": spec["layout"]["height"],
                         "svg_elements": elements, "server_ms": round(statistics.median(server)),
                         "chromium_ms": round(statistics.median(draw))})
            print(json.dumps(rows[-1]))
        browser.close()


if __name__ == "__main__":
    main()
