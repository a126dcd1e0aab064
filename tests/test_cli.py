"""The command line end to end, as a user runs it (real model, real index on disk)."""
import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from recommender import Query, Recommender
from recommender.store import versions
from recommender.store.index import Index
from recommender.store.build import build_index

from support.corpora import synthetic_papers
from support.processes import TESTS, kill, paused_cli, wait_for_marker

PROJECT = Path(__file__).resolve().parents[1]


def run(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "recommender", *map(str, args)], cwd=PROJECT,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_index_recommend_evaluate(tmp_path, corpus_file):
    out = tmp_path / "idx"
    assert "indexed 24 papers" in run("index", corpus_file, "--out", out).stdout

    results = json.loads(run("recommend", "--index", out, "--context", "Ranking with BM25 [CIT] is standard.",
                             "-k", "3", "--json").stdout)
    assert results[0]["paper_id"] == "ir0" and len(results) == 3

    bib = tmp_path / "refs.bib"
    bib.write_text("@inproceedings{x, title={Probabilistic relevance weighting with BM25}, doi={10.9999/ir.0}}")
    missing = json.loads(run("recommend", "--index", out, "--context", "Ranking with BM25 [CIT].",
                             "--exclude", bib, "--json").stdout)
    assert "ir0" not in {r["paper_id"] for r in missing}

    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"qid": "1", "context": "Deep residual networks [CIT] classify images.",
                                   "citing_title": "", "citing_abstract": "", "relevant": ["vision0"]}) + "\n")
    report = tmp_path / "metrics.json"
    table = run("evaluate", "--index", out, "--queries", queries, "--methods", "bm25", "full", "--json", report).stdout
    assert "| full |" in table
    metrics = json.loads(report.read_text())
    assert set(metrics) == {"bm25", "full"} and metrics["full"]["mrr"] == 1.0


def test_bad_input_gives_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "title": "ok"}\nnot json\n')
    proc = run("index", bad, "--out", tmp_path / "idx", "--strict", check=False)
    assert proc.returncode == 2 and "line 2" in proc.stderr
    assert not (tmp_path / "idx" / "CURRENT").exists()
    proc = run("recommend", "--index", tmp_path / "none", "--title", "x", check=False)
    assert proc.returncode == 2 and "not an index directory" in proc.stderr


def test_a_german_passage_says_how_it_was_read(small_index):
    proc = run("recommend", "--index", small_index, "--context",
               "Lokale Alignments von Proteinsequenzen mit dynamischer Programmierung [CIT].", "-k", "3", "--json")
    assert json.loads(proc.stdout)[0]["paper_id"] == "bio2"
    assert "German query, matched through the multilingual index; read in English as:" in proc.stderr
    assert "protein" in proc.stderr.split("read in English as:")[1]


def write_papers(path: Path, papers) -> Path:
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in papers), encoding="utf-8")
    return path


def test_bad_input_to_index_publishes_nothing_and_keeps_the_live_version(tmp_path):
    root = tmp_path / "idx"
    live = build_index(synthetic_papers(5), root, progress_bar=False)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    invalid = tmp_path / "invalid.bib"
    invalid.write_text("@article{a, author = {Ann Lee}}\n@article{b, year = {2001}}\n")
    whole = gzip.compress("".join(json.dumps(p.to_dict()) + "\n" for p in synthetic_papers(2000, 5)).encode())
    truncated = tmp_path / "more.jsonl.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    for corpus, expected in ((empty, "no valid papers"), (invalid, "no valid papers"), (truncated, "cut short")):
        proc = run("index", corpus, "--add", "--out", root, check=False)
        assert proc.returncode == 2 and expected in proc.stderr and "nothing was published" in proc.stderr
    assert versions.current_version(root) == live and {p.name for p in (root / "versions").iterdir()} == {live.name}
    assert len(Index.load(root)) == 5

    binary = tmp_path / "refs.jsonl"
    binary.write_bytes(os.urandom(20000))
    proc = run("index", binary, "--out", tmp_path / "fresh", check=False)
    assert proc.returncode == 2 and "not a text corpus file" in proc.stderr and "b'" not in proc.stderr
    assert not (tmp_path / "fresh" / "CURRENT").exists()


def test_killed_add_keeps_the_live_index_and_a_concurrent_build_is_refused(tmp_path):
    """Two real processes: the second build stops at once; the first, killed mid-way (where it waits, once its first
    chunk of embeddings is saved), harms nothing; a rerun ends."""
    root = tmp_path / "idx"
    build_index(synthetic_papers(10), root, progress_bar=False)
    live = versions.current_version(root)
    more = write_papers(tmp_path / "more.jsonl", synthetic_papers(700, start=10))
    marker = tmp_path / "first-chunk-saved"  # written by the first build, which then waits to be killed
    first = subprocess.Popen([*paused_cli(marker), "index", more, "--add", "--out", root], cwd=PROJECT,
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_marker(marker, first, "its first chunk of new embeddings")
        assert list((root / "versions").glob(".staging-*"))  # the build is under way, and holds the lock
        second = run("index", write_papers(tmp_path / "other.jsonl", synthetic_papers(3, start=5000)), "--add",
                     "--out", root, check=False)
        assert first.poll() is None, "the first build ended before the second one started"
        assert second.returncode == 2 and "another build of this index is running" in second.stderr
        with sqlite3.connect(versions.embedding_cache_path(root)) as db:
            assert db.execute("SELECT COUNT(*) FROM emb").fetchone()[0] >= 10 + 256  # a chunk of the new papers
        assert first.poll() is None, "the build finished before it could be killed"
    finally:
        kill(first)  # mid-build
    assert versions.current_version(root) == live
    assert len(Index.load(root, verify=True)) == 10
    assert len(list(Recommender.load(root).recommend(Query(title="A study of retrieval", k=3)))) == 3
    assert "added 700 papers" in run("index", more, "--add", "--out", root).stdout  # the lock died with it
    assert len(Index.load(root)) == 710 and not list((root / "versions").glob(".staging-*"))


def test_ctrl_c_while_the_command_line_is_still_loading_ends_quietly(tmp_path):
    """SIGINT while `python -m recommender` imports its modules (paused at its first import of numpy): exit 130 with
    a line, not a traceback."""
    marker = tmp_path / "importing"
    script = (f"import runpy, sys; sys.path.insert(0, {str(TESTS)!r})\n"
              "from support.processes import pause_here\n"
              "class PauseAtNumpy:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name == 'numpy':\n"
              f"            pause_here({str(marker)!r})\n"
              "sys.meta_path.insert(0, PauseAtNumpy())\n"
              "runpy.run_module('recommender', run_name='__main__', alter_sys=True)\n")
    child = subprocess.Popen([sys.executable, "-c", script, "recommend", "--index", str(tmp_path)], cwd=PROJECT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_marker(marker, child, "the import of numpy")
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        kill(child)
    assert child.returncode == 130 and err.strip() == "interrupted before anything started", err


def test_papers_added_keep_their_references_to_the_indexs_papers(tmp_path):
    """`index --add`: a new paper's references to papers already indexed become links of the graph (the added
    file alone knows none of those ids)."""
    first, more, out = tmp_path / "first.jsonl", tmp_path / "more.jsonl", tmp_path / "idx"
    first.write_text("\n".join(json.dumps(p.to_dict()) for p in synthetic_papers(4)) + "\n", encoding="utf-8")
    added = {"id": "new", "title": "A new study of retrieval", "references": ["p0", "p2", "nowhere"]}
    more.write_text(json.dumps(added) + "\n", encoding="utf-8")
    run("index", first, "--out", out)
    adding = run("index", more, "--add", "--out", out)
    assert "added 1 papers" in adding.stdout
    assert "dropped 1 reference to ids in no corpus file and not in the index" in adding.stderr  # as a build does
    index = Index.load(out)
    try:
        cited = index.graph.references_of(index.position["new"]).tolist()
        assert sorted(index.ids[p] for p in cited) == ["p0", "p2"]
        assert index.papers([index.position["new"]])[0].references == ["p0", "p2"]
    finally:
        index.close()
