"""The Evaluation page in a real browser on a fresh app with the demo corpus: the demo query set run with two methods
in the background (progress, then charts, then the JSON downloaded), and the metrics files the project writes loaded
back, each shape of them; a file without method metrics says so."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from browser import HAS_CHROMIUM, ROOT, chromium, serve, settle
from recommender.evaluation.results import metric_tables

RESULTS = ROOT / "bench" / "results"
START_TIMEOUT_MS = 240_000  # the first start indexes the demo corpus
RUN_TIMEOUT_MS = 240_000
METHODS = ["bm25", "bm25+nav"]  # neither encodes the queries: the run stays short on a busy machine
# a benchmark file of each shape -> a row of its first table (shown in the charts' legend)
SHAPES = {"acm-cr.json": "hybrid+graph", "diversity-demo.json": "full, diversity 0.1",
          "crosslang.json": "zh / multilingual pipeline", "incite_peer.json": "incite",
          "review_places.json": "review_window_0"}


def charts(page) -> list:
    """The y-axis range and legend of every Plotly chart on the page."""
    return page.locator(".js-plotly-plot").evaluate_all(
        "plots => plots.map(p => [p.layout.yaxis.range, p.data.map(trace => trace.name)])")


def load(page, path: Path) -> None:
    page.locator("input[type=file]").set_input_files(str(path))
    page.get_by_text(path.name).first.wait_for()
    settle(page)


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_a_newcomer_evaluates_the_demo_corpus_and_reads_every_metrics_file(tmp_path):
    env = {name: value for name, value in os.environ.items() if not name.startswith("CITREC_")}
    env.update(CITREC_DEMO_INDEX=str(tmp_path / "demo"), CITREC_CORPORA=str(tmp_path / "corpora"), HF_HUB_OFFLINE="1")
    with serve({}, tmp_path / "streamlit.log", base_env=env) as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1100}, accept_downloads=True)
        page.goto(base)
        page.get_by_text("Find citations").first.wait_for(timeout=START_TIMEOUT_MS)
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Evaluation").click()
        page.get_by_text("Demo query set: the 123 papers of the demo corpus").wait_for()
        settle(page)
        page.get_by_role("button", name="Remove full").click()  # the default is bm25 and full
        settle(page)
        page.get_by_test_id("stMultiSelect").get_by_role("combobox").click()
        page.get_by_role("option", name=METHODS[1], exact=True).click()
        page.keyboard.press("Escape")
        # each change reruns the page: Run only once the server holds both methods (a click during the rerun
        # would run with the methods of before)
        page.get_by_role("button", name=f"Remove {METHODS[1]}").wait_for()
        settle(page)
        page.get_by_role("button", name="Run the evaluation").click()

        page.get_by_test_id("stProgress").first.wait_for()
        seen = set()
        while page.get_by_test_id("stProgress").count():
            seen.update(page.get_by_test_id("stProgress").all_inner_texts())
            page.wait_for_timeout(200)
        download = page.get_by_role("button", name="Download the metrics (JSON)")
        download.wait_for(timeout=RUN_TIMEOUT_MS)
        settle(page)
        page.screenshot(path=str(tmp_path / "run.png"))
        assert any("method 1 of 2 · bm25" in text for text in seen), seen
        assert any("method 2 of 2 · bm25+nav" in text for text in seen), seen
        assert "bm25, bm25+nav on the demo query set · 123 queries" in page.inner_text("body")
        assert len(charts(page)) == 4 and all(axis == [0, 1] for axis, _ in charts(page))
        assert all(legend == METHODS for _, legend in charts(page))
        with page.expect_download() as saved:
            download.click()
        metrics = json.loads(Path(saved.value.path()).read_text(encoding="utf-8"))
        assert list(metrics) == METHODS and all(m["queries"] == 123 for m in metrics.values())
        assert all(0 <= m[f"recall@{k}"] <= 1 for m in metrics.values() for k in (10, 20, 100, 1000))
        assert metrics["bm25"]["recall@1000"] == 1.0  # 263 papers: every cited paper is in the list

        page.get_by_text("Load a metrics file").click()
        evaluate_output = tmp_path / "evaluate.json"
        evaluate_output.write_text(json.dumps(metrics, indent=1), encoding="utf-8")
        load(page, evaluate_output)
        assert [legend for _, legend in charts(page)] == [METHODS] * 4
        for name, row in SHAPES.items():
            load(page, RESULTS / name)
            assert not page.get_by_test_id("stAlertContentError").count(), name
            assert charts(page) and all(row in legend and axis == [0, 1] for axis, legend in charts(page)), name
            several = len(metric_tables(json.loads((RESULTS / name).read_text(encoding="utf-8")))) > 1
            assert page.get_by_text(f"Tables in {name}").count() == several, name  # a choice of its tables
        load(page, RESULTS / "speed.json")
        page.get_by_text("speed.json holds no method metrics").wait_for()
        assert not charts(page)
