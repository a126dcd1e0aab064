"""The command line end to end, as a user runs it (real model, real index on disk)."""
import json
import subprocess
import sys
from pathlib import Path

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
