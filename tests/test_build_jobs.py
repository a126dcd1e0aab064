"""Builds in the background (recommender.background, workspace.corpora.start_build): real detached processes
that run `python -m recommender corpus` and `index`, killed, stopped, failed and resumed."""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from recommender.background import Job, JobBusy, Step, parse_progress
from recommender.store.index import Index
from recommender.store.versions import build_lock
from workspace import corpora
from workspace.cleanup import Sweeper

from support.fixture_server import Failure, FixtureServer, fixture

SNAPSHOT = Path(__file__).resolve().parent / "fixtures" / "arxiv" / "snapshot.jsonl"
WAIT_S = 240  # a build loads the language model in a fresh process: slow on a busy machine


def wait_for(job: Job, done, what: str) -> dict:
    """Poll the job's status until `done(status)`; fail with its log after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        status = job.status()
        if done(status):
            return status
        time.sleep(0.05)
    pytest.fail(f"the job did not get to {what}: {job.status()}\n{job.log_tail(40)}")


def ended(status: dict) -> bool:
    return status["state"] not in ("running", "starting", "created")


def arxiv_job(tmp_path: Path, lock_wait: bool = False) -> tuple[Job, Path, Path]:
    """Two steps: the arXiv snapshot's cs papers, then their index. `lock_wait`: the index step waits for the
    index's build lock (a test that holds the lock keeps the step running until it stops or kills the job)."""
    folder, target = tmp_path / "jobs" / "nlp", tmp_path / "nlp"
    papers = folder / "corpus.jsonl.gz"
    wait = ["--wait", str(WAIT_S)] if lock_wait else []
    job = Job.create(folder, "NLP", [
        Step("Collecting the papers", ["corpus", "arxiv", str(SNAPSHOT), "--category", "cs", "--out", str(papers)],
             creates=str(papers)),
        Step("Building the index", ["index", str(papers), "--out", str(target), *wait])], temporary=[str(papers)])
    return job, papers, target


def test_progress_bars_are_read_from_the_commands_output():
    assert parse_progress("embedding (all-MiniLM-L6-v2@128):  45%|████▌     | 460/1024 [00:09<00:11, 49.1doc/s]") == {
        "text": "embedding (all-MiniLM-L6-v2@128): 45% · 460/1024", "fraction": 0.45}
    assert parse_progress("OpenAlex works: 1200 works [00:14, 85.3 works/s]") == {
        "text": "OpenAlex works: 1200 works", "fraction": None}
    assert parse_progress("embedding (all-MiniLM-L6-v2@128): 4 new: 100%|██████████| 4/4 [00:00<00:00, 419paper/s]") == {
        "text": "embedding (all-MiniLM-L6-v2@128): 4 new: 100% · 4/4", "fraction": 1.0}  # a label with a colon
    assert parse_progress("wrote 6 papers to /tmp/x.jsonl.gz") is None
    assert parse_progress("error: /data/x: file not found [see above]") is None
    assert parse_progress("") is None


def test_a_killed_build_is_seen_as_interrupted_and_resumes_where_it_stopped(tmp_path):
    job, papers, target = arxiv_job(tmp_path, lock_wait=True)
    with build_lock(target):  # the index step waits for it: it is still running when killed, however fast
        job.start()
        indexing = wait_for(job, lambda s: s.get("step") == 2 and s["state"] == "running" or ended(s),
                            "the index step")
        assert indexing["state"] == "running" and indexing["label"] == "Building the index"
        assert papers.is_file()  # the first step wrote its file whole
        with pytest.raises(JobBusy, match="running already"):
            job.start()  # one run at a time
        os.killpg(job.pid(), signal.SIGKILL)  # the machine's OOM killer, a reboot: no chance to clean up
        status = wait_for(job, lambda s: s["state"] != "running", "its end")
    assert status["state"] == "interrupted" and not (target / "CURRENT").exists()

    job.start()  # resume
    status = wait_for(job, ended, "its end")
    assert status["state"] == "done", job.log_tail(40)
    log = job.log_tail(60)
    assert "step 1 of 2 (Collecting the papers): done before, skipped" in log
    assert log.count("wrote 4 papers") == 1  # the snapshot was read once
    assert "indexed 4 papers" in log
    assert "the run before ended without a word (killed?)" in log
    index = Index.load(target)
    assert len(index) == 4 and "2003.00202" in index.ids
    assert not papers.exists()  # the temporary corpus file went when the job was done
    assert status["progress"]["text"].startswith("embedding") and status["progress"]["fraction"] == 1.0
    with pytest.raises(ValueError, match="is done"):
        job.start()


def test_a_build_stopped_as_it_starts_says_so(tmp_path):
    job, _, target = arxiv_job(tmp_path)
    job.start()
    assert job.stop()  # its process is still starting: it ends at once, before it could write a word
    status = wait_for(job, ended, "its end")
    assert status["state"] == "stopped" and not (target / "CURRENT").exists()
    assert not (tmp_path / "jobs" / "nlp" / "corpus.jsonl.gz").exists()


def test_a_stopped_build_says_so_and_publishes_nothing(tmp_path):
    job, _, target = arxiv_job(tmp_path, lock_wait=True)
    with build_lock(target):  # the index step waits for it: it is still running when stopped, however fast
        job.start()
        wait_for(job, lambda s: s.get("step") == 2 and s["state"] == "running" or ended(s), "the index step")
        assert job.stop()
        status = wait_for(job, ended, "its end")
    assert status["state"] == "stopped" and "Stopped" in status["message"]
    assert not (target / "CURRENT").exists()
    assert not job.stop()  # nothing runs any more
    job.remove()
    assert not job.folder.exists()


def test_a_failing_step_ends_the_job_with_the_commands_error(tmp_path):
    folder = tmp_path / "jobs" / "broken"
    job = Job.create(folder, "broken", [
        Step("Collecting the papers", ["corpus", "arxiv", str(tmp_path / "missing.json"), "--out",
                                       str(folder / "c.jsonl.gz")]),
        Step("Building the index", ["index", str(folder / "c.jsonl.gz"), "--out", str(tmp_path / "idx")])])
    job.start()
    status = wait_for(job, ended, "its end")
    assert status["state"] == "failed" and status["step"] == 1
    assert "missing.json: snapshot file not found" in status["message"]
    assert "step 2" not in job.log_tail(40)


SEED_PAGES = {"*": "works_seed_1.json", "c2": "works_seed_2.json", "c3": "works_seed_3.json"}


def openalex(request):
    return 200, fixture("openalex", SEED_PAGES[request.query.get("cursor", "*")]), {}


def test_a_download_that_failed_resumes_from_its_partial_file(tmp_path):
    """The network fails on the second page: the job fails and keeps the first; resumed, it fetches the rest."""
    papers = tmp_path / "jobs" / "field" / "corpus.jsonl.gz"
    with FixtureServer(openalex) as server:
        server.failures.append(Failure(lambda r: r.query.get("cursor") == "c2", 503, times=1))
        job = Job.create(papers.parent, "field", [Step("Downloading from OpenAlex", [
            "corpus", "openalex", "--search=citation recommendation", "--api-url", server.url, "--retries", "0",
            "--mailto=reader@example.org", "--out", str(papers)], creates=str(papers))])
        job.start()
        status = wait_for(job, ended, "its end")
        assert status["state"] == "failed" and "503" in status["message"]
        assert "run the same command again to continue" in status["message"]
        job.start()
        status = wait_for(job, ended, "its end")
    assert status["state"] == "done", job.log_tail(40)
    assert [r.query.get("cursor") for r in server.requests] == ["*", "c2", "c2", "c3"]  # page 1 fetched once
    assert "wrote 5 papers" in job.log_tail(40)


def test_one_build_per_corpus_name(tmp_path, monkeypatch):
    monkeypatch.setenv("CITREC_CORPORA", str(tmp_path / "corpora"))
    shelf = corpora.corpora_root()
    release = threading.Event()

    def slow(request):  # holds the download until the test has tried to start a second build
        release.wait(WAIT_S)
        return 500, {"error": "down"}, {}

    with pytest.raises(ValueError, match="at least one letter"):
        corpora.start_build("!!!", ["arxiv", str(SNAPSHOT)], shelf)
    with FixtureServer(slow) as server:
        job = corpora.start_build("My Field", ["openalex", "--search=x", "--api-url", server.url, "--retries", "0"],
                                  shelf)
        assert job.folder == shelf / corpora.JOBS_FOLDER / "my-field"
        with pytest.raises(JobBusy, match="A build of “my-field” is running"):
            corpora.start_build("my field", ["arxiv", str(SNAPSHOT)], shelf)
        with pytest.raises(JobBusy, match="A build of “my-field” is running"):
            corpora.create_corpus("My field", [], shelf=shelf)  # an import may not take the name either
        release.set()
        wait_for(job, ended, "its end")
    assert job.state() == "failed"
    with pytest.raises(ValueError, match="An earlier build of “my-field” is failed: resume or remove it"):
        corpora.start_build("My Field", ["arxiv", str(SNAPSHOT)], shelf)
    assert list(corpora.build_jobs(shelf)) == ["my-field"]


def test_a_private_shelf_of_builds_waits_for_its_owner_until_the_idle_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("CITREC_CORPORA", str(tmp_path / "corpora"))
    builds, session = corpora.private_shelf("b" * 32), corpora.private_shelf("s" * 32)
    (builds / corpora.JOBS_FOLDER).mkdir(parents=True)
    session.mkdir(parents=True)
    sweeper = Sweeper()
    assert sweeper.alive("b" * 32) and not sweeper.alive("s" * 32)
    assert corpora.sweep_private_shelves(sweeper.alive, grace_s=-1, idle_limit_s=86_400) == 1
    assert builds.is_dir() and not session.exists()
    assert corpora.sweep_private_shelves(sweeper.alive, grace_s=-1, idle_limit_s=-1) == 1
    assert not builds.exists()
