"""Reviewer check, "Whole draft" mode, in a real browser: a LaTeX draft and its .bib uploaded, places answered
inline, a place's and an uncited claim's suggestions accepted, the filled .tex and the BibTeX downloaded; a PDF
without text refused clearly."""
from __future__ import annotations

import pytest

from support.app_helpers import draft
from browser import HAS_CHROMIUM, chromium, serve, settle

DRAFT = draft("The BM25 ranking function has been shown to weight term frequency and document length well for ad "
              "hoc retrieval.")
BIB = """@inproceedings{lovelace2010, title={Neural citation recommendation from paper abstracts},
  author={Lovelace, Ada and Turing, Alan}, booktitle={JCDL}, year={2010}}
"""


@pytest.mark.skipif(not HAS_CHROMIUM, reason="needs Debian's chromium (apt-get install chromium)")
def test_whole_draft_review_in_a_real_browser(small_index, tmp_path):
    (tmp_path / "draft.tex").write_text(DRAFT, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "scan.pdf").write_bytes(image_only_pdf(tmp_path))
    env = {"CITREC_INDEX": str(small_index), "CITREC_CORPORA": str(tmp_path / "corpora")}
    with serve(env, tmp_path / "streamlit.log") as base, chromium() as browser:
        page = browser.new_page(viewport={"width": 1360, "height": 1400}, accept_downloads=True)
        page.goto(f"{base}/reviewer_check")
        page.get_by_role("tab", name="Whole draft").click()
        upload(page, "The draft or submission", tmp_path / "draft.tex")
        upload(page, "Its BibTeX file", tmp_path / "refs.bib")
        page.get_by_role("button", name="Review the draft").click()
        page.get_by_text("Citation places").first.wait_for(timeout=120_000)
        settle(page)
        text = page.inner_text("body")
        assert "1 / 1" in text  # the .bib entry was found in the corpus
        assert "suggest the reference [CIT].”" in text and "Also consider at \\cite{lovelace2010}" in text
        assert "Fill at" not in text
        place = page.get_by_test_id("stExpander").filter(has_text="Fill: “")
        place.get_by_text("Fill: “").click()
        place.get_by_text("Context-aware citation recommendation with citation placeholders").click()
        settle(page)
        claim = page.get_by_test_id("stExpander").filter(has_text="Uncited claim: “The BM25 ranking function")
        claim.get_by_text("Uncited claim: “The BM25 ranking function").click()
        claim.get_by_text("Probabilistic relevance weighting with BM25").click()
        settle(page)
        page.get_by_role("tab", name="Export").click()
        settle(page)
        with page.expect_download() as tex_download:
            page.get_by_role("button", name="Download the .tex with accepted citations filled in").click()
        filled = open(tex_download.value.path(), encoding="utf-8").read()
        with page.expect_download() as bib_download:
            page.get_by_role("button", name="Download BibTeX").click()
        bibtex = open(bib_download.value.path(), encoding="utf-8").read()
        page.screenshot(path=str(tmp_path / "draft.png"))

        page.reload()
        page.get_by_role("tab", name="Whole draft").click()
        upload(page, "The draft or submission", tmp_path / "scan.pdf")
        page.get_by_role("button", name="Review the draft").click()
        page.get_by_text("no text layer").first.wait_for(timeout=60_000)
        refused = page.inner_text("body")
    assert "\\cite{?}" not in filled and "\\cite{lovelace2010}" in filled
    key = filled.split("suggest the reference \\cite{")[1].split("}")[0]
    assert f"{{{key}," in bibtex and "Context-aware citation recommendation" in bibtex
    claim_key = filled.split("for ad hoc retrieval~\\cite{")[1].split("}.")[0]
    assert f"{{{claim_key}," in bibtex and "Probabilistic relevance weighting with BM25" in bibtex
    assert "Traceback" not in refused


def upload(page, label: str, path) -> None:
    uploader = page.get_by_test_id("stFileUploader").filter(has_text=label)
    uploader.locator("input[type=file]").set_input_files(str(path))


def image_only_pdf(folder) -> bytes:
    """A one-page PDF holding only a picture (as a scanner writes), no text layer."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas
    from PIL import Image

    picture = folder / "page.png"
    Image.new("RGB", (400, 300), "white").save(picture)
    pdf = canvas.Canvas(str(folder / "scan_src.pdf"))
    pdf.drawImage(ImageReader(str(picture)), 50, 400, width=400, height=300)
    pdf.save()
    return (folder / "scan_src.pdf").read_bytes()
