"""The Corpus page's "Learn from papers of your field": only a corpus of one's own learns; uploaded papers (a
Markdown draft, a laid-out PDF, a picture named .pdf) are read into citation contexts, then the passage reranker
is trained, tested on papers it did not see, and used by the engine."""
from pathlib import Path

from support.app_helpers import open_app
from support.corpora import LAW_JSONL
from support.documents import SEARCH, VISION

from bench.pdf_writer import write_pdf
from recommender.pipeline.learned import load_reranker
from recommender.training import local

PAGE = "pages/corpus.py"


def test_the_shared_default_corpus_is_not_trained(app_env):
    at = open_app(PAGE)
    assert any("Import or build a corpus of your own first" in i.value for i in at.info)
    assert "learn_files" not in [u.key for u in at.get("file_uploader")]


def test_papers_of_the_field_train_a_corpus_of_ones_own(app_env, tmp_path, monkeypatch):
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("law.jsonl", LAW_JSONL, "application/json")).run()
    at.radio(key="imp_action").set_value("New corpus: the active corpus plus this file")
    at.checkbox(key="imp_multilingual").uncheck()
    at.text_input(key="imp_name").input("My field")
    at.button(key="imp_build").click().run()
    assert not at.exception, at.exception
    directory = Path(at.session_state["corpus_dir"])
    assert directory.name == "my-field" and load_reranker(directory, local=True) is None

    markdown = ("search.md", SEARCH.encode("utf-8"), "text/markdown")
    at.file_uploader(key="learn_files").set_value([markdown]).run()
    assert any(f"from 1 paper: the reranker is tested on papers it did not learn from, and a test on fewer than "
               f"{local.MIN_PAPERS} citing papers cannot tell a real gain from luck" in w.value for w in at.warning)
    assert "learn_train" not in [b.key for b in at.button]

    write_pdf(tmp_path / "vision.pdf", VISION)
    at.file_uploader(key="learn_files").set_value([
        markdown, ("vision.pdf", (tmp_path / "vision.pdf").read_bytes(), "application/pdf"),
        ("scan.pdf", b"\x89PNG\r\n\x1a\n" + bytes(64), "application/pdf")]).run()
    assert not at.exception, at.exception
    table = at.dataframe[-1].value
    assert list(table["Paper"]) == ["search.md", "vision.pdf", "scan.pdf"]  # as uploaded
    assert list(table["References in this corpus"]) == ["2 of 3", "3 of 3", "—"]
    assert list(table["Citation contexts"]) == [3, 4, 0] and "PNG image" in table["Note"][2]
    assert any("7 citation contexts from 2 papers: " in w.value and f"at least {local.MIN_PAPERS - 2} more" in w.value
               for w in at.warning)
    assert "learn_train" not in [b.key for b in at.button]  # too few papers to test a model: nothing to learn yet

    again = at.file_uploader(key="learn_files").set_value([
        markdown, ("vision.pdf", (tmp_path / "vision.pdf").read_bytes(), "application/pdf"),
        ("search.md", SEARCH.replace("Ranking for ad hoc", "Another paper on").encode("utf-8"), "text/markdown")]).run()
    assert list(again.dataframe[-1].value["Paper"]) == ["search.md", "vision.pdf", "search (2).md"]  # both kept
    assert any("10 citation contexts from 3 papers" in w.value for w in again.warning)
    monkeypatch.setattr(local, "MIN_PAPERS", 2)  # the small corpus has two citing papers: test the model on them
    at.file_uploader(key="learn_files").set_value([
        markdown, ("vision.pdf", (tmp_path / "vision.pdf").read_bytes(), "application/pdf")]).run()
    assert any("7 citation contexts from 2 papers." in c.value for c in at.caption)
    at.button(key="learn_train").click().run()
    assert not at.exception, at.exception
    shown = [m.value for m in [*at.success, *at.warning] if "Learned from 7 citation contexts of 2 papers" in m.value]
    assert len(shown) == 1 and "tested on papers it did not learn from: nDCG@10 " in shown[0]
    assert "on 7 contexts of 2 citing papers it did not learn from (95% interval for as many other papers: " \
        in shown[0]
    stored = load_reranker(directory, local=True)
    assert (stored is not None) == ("now ranked with it" in shown[0]) != ("add some and learn again" in shown[0])
    if stored is not None:
        assert stored.info["source"] == "2 papers uploaded in the app"
        assert any("a passage reranker trained on 7 citation contexts" in c.value for c in at.caption)
