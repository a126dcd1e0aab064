"""The Reviewer check page: cited papers (pasted lines or an uploaded .bib) are removed from the suggestions; a
whole LaTeX draft's uncited claims get suggestions that are accepted into the export and the filled .tex."""
import random
import re

from support.app_helpers import draft, open_app

PAGE = "pages/reviewer_check.py"
TITLE = "Recommending citations for scientific drafts"
ABSTRACT = ("We suggest references for a draft paper from its abstract. "
            "Candidates are expanded through the citation graph of their nearest neighbours.")
LINES = ("[1] A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper abstracts. In JCDL.\n"
         "[2] A. Lovelace. 2012. Something. doi:10.9999/cite.2\n")
BIB = b"""@inproceedings{lovelace2010, title = {Neural Citation Recommendation from Paper Abstracts}, year = 2010}
@article{x, title = {Whatever}, doi = {10.9999/cite.2}}
@misc{gone, title = {A paper this corpus does not hold}}
"""


def check(at, title=TITLE, abstract=ABSTRACT):
    at.text_input(key="rv_title").input(title)
    at.text_area(key="rv_abstract").input(abstract)
    at.button(key="FormSubmitter:review_form-Check").click().run()
    assert not at.exception, at.exception
    return at


def suggested(at) -> list[str]:
    return [m.recommendation.paper_id for m in at.session_state["review"]["report"].missing]


def test_pasted_references_are_removed_from_the_suggestions(app_env):
    at = open_app(PAGE)
    before = suggested(check(at))
    assert {"cite0", "cite2"} <= set(before)
    at.text_area(key="rv_refs").input(LINES)
    after = suggested(check(at))
    assert not {"cite0", "cite2"} & set(after) and after
    assert [m.value for m in at.metric] == ["2", "2", str(len(after))]
    assert any("Relates to sentence" in m.value for m in at.markdown)
    assert "Neural citation recommendation from paper abstracts" in [t.value for t in at.text]


def test_an_uploaded_bib_file_is_matched_by_title_and_doi(app_env):
    at = open_app(PAGE)
    at.file_uploader(key="rv_upload").set_value(("refs.bib", BIB, "application/x-bibtex"))
    at = check(at)
    assert not {"cite0", "cite2"} & set(suggested(at))
    assert [m.value for m in at.metric][:2] == ["3", "2"]
    assert any("@misc{gone" in t.value for t in at.text)  # listed as not in the corpus


def test_an_empty_submission_gets_a_gentle_prompt(app_env):
    at = check(open_app(PAGE), title="", abstract=" ")
    assert not at.error and "review" not in at.session_state
    assert any("Paste the submission's title and abstract" in i.value for i in at.info)


WRAPPED = ("[1] A. Lovelace and A. Turing. 2010. Neural citation recom-\n"
           "mendation from paper abstracts. In Proceedings of JCDL. 1–10.\n"
           "[2] A. Lovelace and G. Hopper. 2012. Citation graph expansion for\n"
           "recommending references. In Proceedings of JCDL. 11–20.\n")
# A viewer that copies each field of a reference onto its own line: nothing tells where references start.
MISREAD = "\n".join(["Lovelace A", "Neural citation recommendation", "Proc JCDL", "Turing A",
                     "Graph expansion for recommending references", "Proc SIGIR"])


def test_a_list_copied_from_a_pdf_is_matched_without_warnings(app_env):
    at = open_app(PAGE)
    at.text_area(key="rv_refs").input(WRAPPED)
    at = check(at)
    assert not {"cite0", "cite2"} & set(suggested(at))
    assert [m.value for m in at.metric][:2] == ["2", "2"] and not at.warning


def test_a_misread_list_is_flagged_on_the_page(app_env):
    at = open_app(PAGE)
    at.text_area(key="rv_refs").input(MISREAD)
    at = check(at)
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("6 of 6 references are only a few words") for w in warnings), warnings
    assert any(w.startswith("Only 0 of 6 references were found in the corpus") for w in warnings), warnings
    assert suggested(at)  # the suggestions are still shown, under the warnings


def test_a_binary_upload_is_refused_with_a_message(app_env):
    at = open_app(PAGE)
    at.file_uploader(key="rv_upload").set_value(("refs.txt", random.Random(5).randbytes(20_000), "text/plain"))
    at = check(at)
    assert "review" not in at.session_state and not at.metric
    assert any("does not look like text" in e.value for e in at.error)
    at.file_uploader(key="rv_upload").set_value(("paper.txt", b"%PDF-1.7\n1 0 obj\n<<>>\n", "text/plain"))
    at = check(at)
    assert any("This is a PDF file" in e.value for e in at.error)


# --------------------------------------------------------------------------- whole draft

DRAFT = draft("The BM25 ranking function has been shown to weight term frequency\n"
              r"and document   length well for \emph{ad hoc} retrieval.")
DRAFT_BIB = b"""@inproceedings{lovelace2010, title={Neural citation recommendation from paper abstracts},
  author={Lovelace, Ada and Turing, Alan}, booktitle={JCDL}, year={2010}}
"""


def review_draft(at):
    at.file_uploader(key="dr_upload").set_value(("draft.tex", DRAFT.encode(), "application/x-tex"))
    at.file_uploader(key="dr_bib").set_value(("refs.bib", DRAFT_BIB, "application/x-bibtex"))
    at.button(key="FormSubmitter:draft_form-Review the draft").click().run()
    assert not at.exception, at.exception
    return at.session_state["draft_review"]["report"]


def test_a_claims_suggestion_is_accepted_into_the_export_and_cited_after_its_sentence(app_env, monkeypatch):
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    downloads = {}
    store = MemoryMediaFileStorage.load_and_get_id

    def keep(self, data, mimetype, kind, filename=None):
        downloads[filename] = data
        return store(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", keep)
    at = open_app(PAGE)
    report = review_draft(at)
    (claim, number), = [(c, j) for j, c in enumerate(report.uncited) if c.sentence.startswith("The BM25 ranking")]
    assert claim.suggestions[0].paper_id == "ir0"
    labels = [e.label for e in at.expander]
    assert any(label.startswith("Uncited claim: “The BM25 ranking function has been shown to weight term")
               and label.endswith("…”: 5 suggestions") for label in labels), labels
    assert any(label.startswith("Fill: “") and "suggest the reference" in label for label in labels), labels
    assert not any("Fill at" in label for label in labels)
    missing = [m.value for m in at.markdown if "closeness" in m.value]
    assert any(m.startswith(":small[Suggested for “The BM25 ranking function") and
               re.search(r"· closeness 0\.\d\d · (1 place suggests it|\d+ places agree) · near line 12\]$", m)
               for m in missing), missing
    placeholder = next(i for i, p in enumerate(report.places) if p.marker.placeholder)
    at.checkbox(key=f"dr_accept_c{number}_ir0").check()
    at.checkbox(key=f"dr_accept_p{placeholder}_cite1").check().run()
    assert not at.exception, at.exception
    assert len({c.key for c in at.checkbox}) == len(at.checkbox)
    bibtex, filled = (text(downloads[name]) for name in ("citations.bib", "draft-filled.tex"))
    assert "Probabilistic relevance weighting with BM25" in bibtex
    bm25_key, = re.findall(r"@\w+\{([^,]+),\s*title = \{Probabilistic relevance weighting", bibtex)
    assert f"and document   length well for \\emph{{ad hoc}} retrieval~\\cite{{{bm25_key}}}.\n" in filled
    assert "\\cite{?}" not in filled and filled.count("\\cite{") == 3
    assert not at.warning


def text(data: str | bytes) -> str:
    return data.decode("utf-8") if isinstance(data, bytes) else data
