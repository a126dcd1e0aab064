"""The Evaluation page: a run on the corpus's own citation links or an uploaded query file, in the background with
its progress, and every metrics file the project writes (`evaluate --json`, the tables of `bench/results/`)."""
from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

import pytest

from support.app_helpers import open_app

from recommender.background import Job, Step
from recommender.evaluation.evaluate import evaluate
from recommender.evaluation.queries import citing_positions, queries_for_papers
from recommender.evaluation.results import metric_tables
from workspace import corpora, evaluation_jobs

PAGE = "pages/evaluation.py"
RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
METRICS = {
    "bm25": {"mrr": 0.31, "map": 0.2, "ndcg@10": 0.25,
             **{f"{m}@{k}": 0.1 * i for i, k in enumerate((10, 20, 100, 1000)) for m in ("precision", "recall", "f1")}},
    "full": {"mrr": 0.42, "map": 0.3, "ndcg@10": 0.35, "recall@10": 0.4, "recall@1000": 0.9, "queries": 50},
    "queries": 50,
}


def load_file(at, name: str, data: bytes):
    at.segmented_control(key="eval_mode").set_value("file").run()
    at.file_uploader(key="eval_file").set_value((name, data, "application/json")).run()
    assert not at.exception, at.exception
    return at


def y_range(chart) -> list:
    return json.loads(chart.proto.spec)["layout"]["yaxis"]["range"]


def test_the_tables_of_every_metrics_file_the_project_writes_are_found(small_recommender):
    queries = queries_for_papers(small_recommender.index, citing_positions(small_recommender.index))
    written = json.loads(json.dumps(evaluate(small_recommender, queries, progress=False)))  # what --json writes
    assert list(metric_tables(written)) == [""] and "bm25" in metric_tables(written)[""]
    tables = {path.name: metric_tables(json.loads(path.read_text(encoding="utf-8")))
              for path in sorted(RESULTS.glob("*.json"))}
    assert list(tables["acm-cr.json"]) == ["paragraphs", "sentences", "papers"]
    assert 0 < tables["acm-cr.json"]["papers"]["bm25"]["recall@10"] <= 1
    assert "acm-cr › paragraphs" in tables["incite_peer.json"] and "demo" in tables["crosslang.json"]
    assert tables["review_places.json"][""]["direct"]["recall@10"] > 0  # written R@10 and nDCG@10
    for name in ("speed.json", "load.json", "review_real.json", "reference_check.json", "scale.json"):
        assert tables[name] == {}, name  # timings and review measures: no table of methods
    assert sum(1 for found in tables.values() if found) >= 15


def test_methods_are_compared_in_charts_and_a_table(app_env):
    at = load_file(open_app(PAGE), "results.json", json.dumps(METRICS).encode())
    charts = at.get("plotly_chart")
    assert len(charts) == 4  # summary bars and three @k curves
    assert all(y_range(chart) == [0, 1] for chart in charts)
    table = at.dataframe[0].value
    assert list(table["method"]) == ["bm25", "full"]
    assert list(table.columns[1:4]) == ["mrr", "map", "ndcg@10"] and table["mrr"][1] == 0.42


def test_a_benchmark_file_offers_each_of_its_tables(app_env):
    at = load_file(open_app(PAGE), "acm-cr.json", (RESULTS / "acm-cr.json").read_bytes())
    assert at.selectbox(key="eval_table").options == ["paragraphs", "sentences", "papers"]
    at.selectbox(key="eval_table").set_value("papers").run()
    written = json.loads((RESULTS / "acm-cr.json").read_text(encoding="utf-8"))["sets"]["papers"]["metrics"]
    assert list(at.dataframe[0].value["method"]) == list(written)


def test_bad_files_get_a_clear_error(app_env):
    at = load_file(open_app(PAGE), "broken.json", b"{not json")
    assert "not a JSON file" in at.error[0].value and not at.get("plotly_chart")
    at = load_file(open_app(PAGE), "speed.json", (RESULTS / "speed.json").read_bytes())
    assert "holds no method metrics" in at.error[0].value and not at.get("plotly_chart")
    at = open_app(PAGE)
    at.segmented_control(key="eval_mode").set_value("file").run()
    assert any("Upload a metrics file" in i.value for i in at.info)


def test_a_query_file_is_checked_before_a_run_starts(app_env, corpus_records):
    at = open_app(PAGE)
    at.radio(key="eval_set").set_value("file").run()
    known = corpus_records[0]["id"]
    cases = [(b'{"qid": "1", "relevant": ["x"]\n', "is not a query file"),
             (b'{"relevant": ["%s"], "citing_title": "t"}\n' % known.encode(), "is not a query file"),
             (b'{"qid": "1", "relevant": ["nowhere"], "citing_title": "t"}\n', "None of the queries")]
    for data, message in cases:
        at.file_uploader(key="eval_queries").set_value(("queries.jsonl", data, "application/json")).run()
        at.button(key="eval_run").click().run()
        assert message in at.error[0].value, at.error
    assert not list(app_env.rglob(evaluation_jobs.FOLDER))  # nothing was started


def test_a_run_on_an_uploaded_query_file_ends_in_its_metrics(app_env, corpus_records):
    citing = {r["id"] for r in corpus_records}
    rows = [{"qid": r["id"], "citing_title": r["title"], "citing_abstract": r["abstract"], "citing_id": r["id"],
             "relevant": [x for x in r["references"] if x in citing]} for r in corpus_records if r.get("references")]
    at = open_app(PAGE)
    assert at.multiselect(key="eval_methods").options[:2] == ["bm25", "dense"]
    assert "learned" not in at.multiselect(key="eval_methods").options  # the index has learned nothing
    at.radio(key="eval_set").set_value("file").run()
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    at.file_uploader(key="eval_queries").set_value(("mine.jsonl", data, "application/json")).run()
    at.multiselect(key="eval_methods").set_value(["bm25"]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception and not at.error, at.error
    assert any("mine" in m.value and f"{len(rows)} queries · " in m.value for m in at.markdown)
    deadline = time.monotonic() + 180
    while not at.get("download_button") and time.monotonic() < deadline:
        time.sleep(1)
        at.run()
    assert at.get("download_button"), [m.value for m in at.markdown]
    table = at.dataframe[0].value
    assert list(table["method"]) == ["bm25"] and table["queries"][0] == len(rows)
    assert 0 < table["recall@10"][0] <= 1
    (run,) = [path.parent for path in app_env.rglob(f"{evaluation_jobs.FOLDER}/*/job.json")]
    at.button(key=f"eval_remove_{run.name}").click().run()
    assert not run.exists() and not at.get("download_button") and not at.subheader


def test_a_failed_run_says_why_and_can_be_removed(app_env, monkeypatch, tmp_path):
    monkeypatch.setenv("CITREC_SHARED_CORPORA", "1")  # runs on the shared shelf, seen by every session
    job = evaluation_jobs.start(app_env, tmp_path / "no-index", ["bm25"], "a corpus gone", citing=["a"])
    deadline = time.monotonic() + 120
    while job.running() and time.monotonic() < deadline:
        time.sleep(0.2)
    at = open_app(PAGE)
    shown = at.error[0].value.replace("\\", "")  # the message, unescaped
    assert shown.startswith("The evaluation failed: ") and "…/no-index" in shown
    seen = " ".join([shown] + [c.value for c in at.code])
    assert str(tmp_path) not in seen and str(app_env) not in seen, seen  # no server path, in the log either
    assert at.button(key=f"eval_resume_{job.folder.name}") and not at.get("download_button")
    at.button(key=f"eval_remove_{job.folder.name}").click().run()
    assert not job.folder.exists() and not at.error


def test_the_progress_of_a_run_counts_its_methods():
    assert evaluation_jobs.progress({"state": "starting"}) == (0.0, "starting")
    loading = {"step": 2, "steps": 4, "label": "dense", "progress": {"text": "Loading weights: 100%", "fraction": 1}}
    assert evaluation_jobs.progress(loading) == (0.25, "method 2 of 4 · dense: loading the index and the models")
    halfway = {**loading, "progress": {"text": "dense: 50% · 5/10", "fraction": 0.5}}
    assert evaluation_jobs.progress(halfway) == (0.375, "method 2 of 4 · dense: 50% · 5/10")


def test_a_corpus_queries_itself_with_a_sample_of_its_citing_papers(small_recommender):
    index = small_recommender.index
    everyone = citing_positions(index)
    assert everyone == sorted(everyone) and all(len(index.graph.references_of(p)) for p in everyone)
    assert len(everyone) == sum(1 for p in range(len(index)) if len(index.graph.references_of(p)))
    sample = citing_positions(index, limit=5)
    assert len(sample) == 5 and set(sample) <= set(everyone) and sample == citing_positions(index, limit=5)


def test_a_hostile_metrics_file_is_refused_by_what_is_too_large(app_env):
    """Each size of a metrics file has a limit, checked while it is read; the error names what was too large."""
    from recommender.evaluation import results
    many = {f"m{i}": {"mrr": 0.1} for i in range(results.MAX_METHODS + 1)}
    wide = {"bm25": {f"recall@{k}": 0.1 for k in range(1, results.MAX_METRICS + 2)}}
    flat = {f"k{i}": i for i in range(results.MAX_ENTRIES + 1)}
    cases = [(many, f"has {results.MAX_METHODS + 1:,} methods"), (wide, f"{results.MAX_METRICS + 1:,} metrics"),
             (flat, f"more than {results.MAX_ENTRIES:,} keys")]
    for data, message in cases:
        at = load_file(open_app(PAGE), "hostile.json", json.dumps(data).encode())
        shown = at.error[0].value.replace("\\", "")
        assert "is too large" in shown and message in shown, shown
        assert not at.get("plotly_chart") and not at.dataframe
    for data, message in [(b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
                          (b'{"bm25": {"mrr": 1' + b"0" * 5000 + b"}}", "not a JSON file"),
                          (b"\x89PNG\r\n\x1a\n\x00\x00", "not a JSON file")]:
        at = load_file(open_app(PAGE), "hostile.json", data)
        assert message in at.error[0].value and not at.get("plotly_chart")
    padded = json.dumps(METRICS).encode() + b" " * (20 * 2**20)  # the page reads up to 20 MB
    at = load_file(open_app(PAGE), "big.json", padded)
    assert "is too large" in at.error[0].value and "up to 20 MB" in at.error[0].value
    assert not at.get("plotly_chart")


def test_a_hostile_query_file_is_refused_before_a_run_starts(app_env, corpus_records, monkeypatch):
    known = corpus_records[0]["id"]
    line = b'{"qid": "1", "relevant": ["%s"], "citing_title": "t"}\n' % known.encode()
    monkeypatch.setattr(evaluation_jobs, "MAX_FILE_QUERIES", 3)
    at = open_app(PAGE)
    at.radio(key="eval_set").set_value("file").run()
    cases = [(line * 4, "holds more than 3 queries"),
             (b'{"qid": "1", "relevant": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", "nested too deeply"),
             (b"--help\n", "is not a query file")]
    for data, message in cases:
        at.file_uploader(key="eval_queries").set_value(("--methods.jsonl", data, "application/json")).run()
        at.button(key="eval_run").click().run()
        assert not at.exception, at.exception
        assert message in at.error[0].value.replace("\\", ""), at.error
    assert not list(app_env.rglob(evaluation_jobs.FOLDER))  # nothing was started
    with pytest.raises(ValueError, match="unknown methods"):
        evaluation_jobs.start(app_env, "x", ["--help"], "x", citing=["a"])


def hold(job) -> int:
    """Take a job's lock as its running process would (it counts as running while the descriptor is open)."""
    fd = os.open(job.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_runs_are_bounded_per_workspace_and_on_the_server(app_env, monkeypatch, tmp_path):
    mine, theirs = corpora.private_shelf("a" * 32), corpora.private_shelf("b" * 32)
    running = Job.create(mine / evaluation_jobs.FOLDER / "1", "bm25 on x", [Step("bm25", ["evaluate"])])
    fd = hold(running)
    try:
        with pytest.raises(ValueError, match="evaluation of this workspace runs already"):
            evaluation_jobs.start(mine, tmp_path, ["bm25"], "x", citing=["a"])
        with pytest.raises(ValueError, match="evaluation of this workspace runs already"):
            evaluation_jobs.resume(Job.create(mine / evaluation_jobs.FOLDER / "0", "stopped", []))
        monkeypatch.setattr(evaluation_jobs, "MAX_RUNNING", 1)
        with pytest.raises(ValueError, match="1 evaluations run on this server already"):
            evaluation_jobs.start(theirs, tmp_path, ["bm25"], "x", citing=["a"])
    finally:
        os.close(fd)
    monkeypatch.setattr(evaluation_jobs, "MAX_RUNS_KEPT", 2)
    with pytest.raises(ValueError, match="keeps 2 runs already"):
        evaluation_jobs.start(mine, tmp_path, ["bm25"], "x", citing=["a"])
    assert len(evaluation_jobs.runs(mine)) == 2 and not theirs.exists()
