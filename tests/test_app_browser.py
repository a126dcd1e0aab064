"""The real app in a real browser: `streamlit run` on a free port, driven by Playwright on Debian's Chromium.

`python tests/test_app_browser.py` runs the same code against the demo corpus and saves the
README screenshot as assets/screenshot.png.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from browser import HAS_CHROMIUM, ROOT, chromium, serve, settle


def capture(url: str, expect: str, screenshot: Path, timeout_s: float = 60) -> str:
    """Open `url`, wait until `expect` is shown, save a screenshot; returns the page's text and what its text
    boxes hold."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1000})
        page.goto(url)
        page.get_by_text(expect).first.wait_for(timeout=timeout_s * 1000)
        settle(page)
        page.screenshot(path=str(screenshot))
        boxes = page.locator("textarea, input[type=text]").evaluate_all("boxes => boxes.map(b => b.value)")
        return "\n".join([page.inner_text("body"), *boxes])


def deep_link(base: str, **fields: str) -> str:
    return f"{base}/?{urlencode(fields)}"  # percent-encoded UTF-8, as a browser sends non-Latin text


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_deep_link_in_a_real_browser(small_index, tmp_path):
    env = {"CITREC_INDEX": str(small_index), "CITREC_CORPORA": str(tmp_path / "corpora")}
    with serve(env, tmp_path / "streamlit.log") as base:
        url = deep_link(base, title="Citation recommendation",
                        abstract="We recommend references for a draft from its abstract.")
        text = capture(url, "Neural citation recommendation from paper abstracts", tmp_path / "screenshot.png")
        chinese = capture(deep_link(base, context="残差连接使非常深的卷积网络能够在图像分类任务上顺利训练 [CIT]。"),
                          "Deep residual networks for image classification", tmp_path / "chinese.png")
    assert "recommendations" in text
    assert (tmp_path / "screenshot.png").stat().st_size > 10_000
    assert "残差连接使非常深的卷积网络" in chinese  # the passage came through the link intact
    assert "looks Chinese; it was matched through the multilingual index" in chinese
    assert "read in English as" in chinese


if __name__ == "__main__":
    with serve({}, Path("/tmp/citrec-streamlit.log")) as base:
        link = deep_link(base, title="Recommending citations for a scientific draft",
                         abstract="We suggest papers a manuscript should cite, from the text of its title and "
                                  "abstract, combining word matching, sentence embeddings and the citation graph.")
        capture(link, "10 recommendations", ROOT / "assets" / "screenshot.png", timeout_s=300)
    print(f"saved {ROOT / 'assets' / 'screenshot.png'}")
