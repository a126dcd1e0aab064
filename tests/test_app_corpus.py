"""The Corpus page: statistics, validation of uploads, imports that never touch the active index on failure,
and imports kept in a private workspace that the page's address names (listed with their sizes and dates, deleted
from there), unless the operator shares them."""
import re
import zlib
from pathlib import Path

from support.app_helpers import ask, open_app
from support.corpora import LAW_JSONL, LAW_PAPERS

from recommender.store.index import Index
from workspace import corpora

PAGE = "pages/corpus.py"


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def private_shelf(at) -> Path:
    return corpora.private_shelf(at.session_state["workspace"])


def import_law(at, name: str = "Law only"):
    """Upload the two law papers and build them as a new corpus of their own (English only: fast)."""
    at.file_uploader(key="imp_file").set_value(("law.jsonl", LAW_JSONL, "application/json")).run()
    at.radio(key="imp_action").set_value("Create a new corpus from this file")
    at.checkbox(key="imp_multilingual").uncheck()
    at.text_input(key="imp_name").input(name)
    at.button(key="imp_build").click().run()
    assert not at.exception, at.exception
    return at


def test_statistics_of_the_active_corpus(app_env, small_index):
    at = open_app(PAGE)
    assert metric(at, "Papers") == "24" and metric(at, "Years") == "2010–2015" and metric(at, "Venues") == "4"
    assert len(at.get("plotly_chart")) == 3
    assert "Title" in at.dataframe[0].value.columns
    assert any("python -m recommender train" in c.value for c in at.caption)  # the test index learned nothing
    words = len(Index.load(small_index).glossary.words)
    assert any(f"matched through the multilingual index, and are read into English through {words:,} of its words"
               in c.value for c in at.caption)


def test_a_malformed_upload_shows_the_loaders_errors_and_changes_nothing(app_env, small_index):
    before = (small_index / "CURRENT").read_text()
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("broken.jsonl", b'{"id": "a", "title": \n[1, 2]\n', "text/plain"))
    at.run()
    assert any("No usable paper" in e.value for e in at.error)
    problems = at.dataframe[-1].value
    assert list(problems["Where"]) == ["line 1", "line 2"] and all(problems["Problem"])
    assert "imp_build" not in [b.key for b in at.button]  # nothing to build
    assert (small_index / "CURRENT").read_text() == before and not app_env.exists()
    assert "corpus_dir" not in at.session_state


def test_a_file_of_the_wrong_kind_is_refused_by_its_own_name(app_env, small_index):
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("papers.json", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj", "application/json"))
    at.run()
    [error] = [e.value for e in at.error]
    assert error.startswith("papers.json: not a text corpus file: a PDF document") and "/tmp" not in error
    at.file_uploader(key="imp_file").set_value(("one.jsonl", LAW_JSONL.splitlines()[0], "application/json")).run()
    assert any("kept 1, skipped 0; 0 errors, 1 warning." in m.value for m in at.markdown)  # its reference dangles


def test_a_failed_build_reports_the_error_and_keeps_the_active_corpus(app_env, small_index):
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("law.jsonl", LAW_JSONL, "application/json")).run()
    at.text_input(key="imp_name").input("!!!")
    at.button(key="imp_build").click().run()
    assert any("The import failed and the active corpus is unchanged" in e.value for e in at.error)
    assert "corpus_dir" not in at.session_state and metric(at, "Papers") == "24"


def test_an_upload_extends_the_demo_into_a_new_corpus_and_makes_it_active(app_env, small_index):
    before = (small_index / "CURRENT").read_text()
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("law.jsonl", LAW_JSONL, "application/json")).run()
    assert "read 2 records, kept 2" in " ".join(m.value for m in at.markdown)
    assert list(at.dataframe[-1].value["Title"]) == [r["title"] for r in LAW_PAPERS]
    at.radio(key="imp_action").set_value("New corpus: the active corpus plus this file")
    at.text_input(key="imp_name").input("Law and citations")
    at.button(key="imp_build").click().run()
    assert not at.exception, at.exception
    assert at.session_state["corpus_dir"] == str(private_shelf(at) / "law-and-citations")
    assert any("Built corpus law-and-citations" in s.value for s in at.success)
    assert metric(at, "Papers") == "26"
    assert Index.load(private_shelf(at) / "law-and-citations").glossary is not None  # multilingual, like the active corpus
    assert (small_index / "CURRENT").read_text() == before and len(Index.load(small_index)) == 24
    at.switch_page("pages/recommend.py").run()
    assert "law-and-citations · 26 papers" in at.caption[0].value
    at.multiselect(key="q_venues").select("ICAIL")
    ask(at, "Citation recommendation", "Recommending precedents.", q_years=(2016, 2017))
    assert {r.paper_id for r in at.session_state["results"]["recs"]} == {"law1", "law2"}


def test_a_new_corpus_is_multilingual_only_when_asked(app_env):
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("law.jsonl", LAW_JSONL, "application/json")).run()
    at.radio(key="imp_action").set_value("Create a new corpus from this file")
    assert at.checkbox(key="imp_multilingual").value  # the active (test) corpus has the multilingual field
    at.checkbox(key="imp_multilingual").uncheck()
    at.text_input(key="imp_name").input("Law only")
    at.button(key="imp_build").click().run()
    assert not at.exception, at.exception
    index = Index.load(private_shelf(at) / "law-only")
    assert len(index) == 2 and index.multilingual is None and index.glossary is None
    assert any("get the English pipeline only" in c.value for c in at.caption)


def test_switching_back_drops_filters_the_other_corpus_cannot_offer(app_env):
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("law.jsonl", LAW_JSONL, "application/json")).run()
    at.button(key="imp_build").click().run()
    at.switch_page("pages/recommend.py").run()
    at.multiselect(key="q_venues").select("ICAIL")
    ask(at, "Citation recommendation", "Recommending precedents.", q_years=(2016, 2017))
    at.switch_page(PAGE).run()
    at.selectbox[0].select(at.selectbox[0].options[0]).run()
    assert "corpus_dir" in at.session_state and metric(at, "Papers") == "24"
    at.switch_page("pages/recommend.py").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="q_venues").value == [] and at.slider(key="q_years").value == (2010, 2015)


def test_an_import_is_seen_only_through_the_address_of_its_workspace(app_env):
    mine = import_law(open_app(PAGE))
    built, token = Path(mine.session_state["corpus_dir"]), mine.session_state["workspace"]
    assert built.parent == private_shelf(mine) and built.parent.parent == app_env / corpora.PRIVATE_FOLDER
    assert "law-only" in mine.selectbox[0].options and metric(mine, "Papers") == "2"
    assert mine.query_params["workspace"] == token and len(token) == 32
    assert any(f"?workspace={token}" in c.value for c in mine.code)  # the address to bookmark
    again = open_app(PAGE, workspace=token)  # a reload, a closed browser opened again, a restarted server
    assert again.session_state["corpus_dir"] == str(built) and metric(again, "Papers") == "2"
    assert "law-only" in again.selectbox[0].options
    for theirs in (open_app(PAGE), open_app(PAGE, workspace="0" * 32), open_app(PAGE, workspace="../" * 11),
                   open_app(PAGE, workspace=token[:-1]), open_app(PAGE, builds=str(app_env))):
        assert theirs.session_state["workspace"] != token
        assert theirs.selectbox[0].options == [mine.selectbox[0].options[0]]  # the default corpus only
        assert metric(theirs, "Papers") == "24" and "workspace" not in theirs.query_params
        assert any("go to a workspace of your own" in c.value for c in theirs.caption)
        assert not [s for s in theirs.subheader if s.value == "Your corpora"]
    assert any("named a workspace that does not exist" in t.value for t in open_app(workspace="0" * 32).toast)


def test_your_corpora_are_listed_with_their_size_and_dates_and_one_is_used_from_the_list(app_env):
    at = import_law(open_app(PAGE))
    import_law(at, "Law again")
    rows = {c.key: c for c in at.get("flex_container") if str(c.key).startswith("yours_")}
    assert list(rows) == ["yours_law-again", "yours_law-only"]
    [again] = [m.value for m in at.markdown if m.value.startswith("**law-again**")]
    date = r"\d\d\s\w{3}\s\d{4}\s\d\d:\d\d"
    assert re.fullmatch(r"\*\*law-again\*\* · in use  \n2 papers, 1 citation link · \d+\.\d MB on the server  \n"
                        f"changed {date} · last used {date}", again), again
    assert at.button(key="use_law-again").disabled and not at.button(key="use_law-only").disabled
    at.button(key="use_law-only").click().run()
    assert at.session_state["corpus_dir"] == str(private_shelf(at) / "law-only")
    assert open_app(PAGE, workspace=at.session_state["workspace"]).session_state["corpus_dir"] == \
        str(private_shelf(at) / "law-only")  # the workspace comes back on the corpus used last


def test_shared_corpora_are_listed_in_every_session(app_env, monkeypatch):
    monkeypatch.setenv("CITREC_SHARED_CORPORA", "1")
    mine = import_law(open_app(PAGE))
    assert mine.session_state["corpus_dir"] == str(app_env / "law-only")
    theirs = open_app(PAGE)
    assert "law-only" in theirs.selectbox[0].options
    assert any("shared with everyone" in c.value for c in theirs.caption)
    assert not [b for b in theirs.button if b.key.startswith("delete_")]  # nobody deletes a shared corpus here
    assert "workspace" not in theirs.query_params


def test_a_session_deletes_its_corpus_and_is_back_on_the_default(app_env):
    at = import_law(open_app(PAGE))
    built = Path(at.session_state["corpus_dir"])
    at.button(key="delete_law-only").click().run()
    assert not at.exception, at.exception
    assert not built.exists() and metric(at, "Papers") == "24"
    assert any("Deleted corpus law-only" in s.value for s in at.success)
    assert at.selectbox[0].options == [at.selectbox[0].options[0]]
    assert any("No corpus in your workspace now" in c.value for c in at.caption)
    again = open_app(PAGE, workspace=at.session_state["workspace"])
    assert "corpus_dir" not in again.session_state and metric(again, "Papers") == "24"


def test_a_corpus_removed_by_the_clean_up_gives_way_to_the_default(app_env):
    at = import_law(open_app(PAGE))
    built = Path(at.session_state["corpus_dir"])
    corpora.sweep_private_shelves(lambda owner: False, grace_s=-1, idle_limit_s=86_400)  # as after the session
    assert not built.exists()
    at.switch_page("pages/recommend.py").run()
    assert not at.exception, at.exception
    assert "24 papers" in at.caption[0].value
    assert any("law-only no longer exists" in t.value for t in at.toast)


def test_a_failed_import_names_no_server_path(app_env, small_index, monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(app_env / ".sessions" / ("a" * 32) / "law" / "v1"))

    monkeypatch.setattr(corpora, "create_corpus", disk_full)
    at = open_app(PAGE)
    import_law(at)
    shown = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "The import failed" in shown and "No space left on device" in shown and "…/v1" in shown
    assert str(app_env) not in shown and ".sessions" not in shown, shown


def test_a_gzip_bomb_is_refused_by_its_unpacked_size(app_env, small_index):
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip: 513 MB of blank lines in well under a megabyte
    bomb = b"".join(packer.compress(b"\n" * 2**20) for _ in range(513)) + packer.flush()
    at = open_app(PAGE)
    at.file_uploader(key="imp_file").set_value(("papers.jsonl.gz", bomb, "application/gzip")).run()
    assert not at.exception, at.exception
    assert any("unpacks to more than 512 MB" in e.value for e in at.error), [e.value for e in at.error]
    assert "imp_build" not in [b.key for b in at.button]
