"""Reliability report: real builds, additions and training runs killed (SIGKILL) at many moments, and fuzzed loaders.

    python -m bench.reliability [--papers 1200] [--timed-kills 6] [--fuzz 1000] [--json bench/results/reliability.json]

Kills. For `index` (a full rebuild into an existing index) and `index --add`, each run starts from a copy of the
same base index (its embedding cache holds only the base papers, so every run has the same work to do). A run is
killed either when a given stage becomes visible on disk (staging folder made, papers written, lexical index
saved, first and middle embedding chunks cached, vectors saved, clusters saved, CURRENT switched) or after a given
fraction of the measured uninterrupted time. After each kill:
  * CURRENT names a complete version whose checksums verify, holding either all the old papers or all the new
    ones (nothing in between), the version it replaced is still on disk, and a query is answered;
  * the same command run again finishes (the lock died with the killed process), publishes every paper, and
    leaves no staging folder.
`train` is killed the same way on the demo corpus (256 papers with citations); afterwards the index and its learned
models must load and answer, and a rerun must finish.

Fuzz. The property tests of tests/test_loaders_fuzz.py run with --fuzz cases each; every case must load or raise a
CorpusError with a readable message. Cases and crashes are counted.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import machine

PROJECT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = PROJECT / "assets" / "demo_corpus.jsonl"
TOPICS = ["dense retrieval", "citation graphs", "protein folding", "image segmentation", "speech recognition",
          "robot grasping", "topic models", "query expansion"]
QUERY = "Citation graphs help to recommend papers for a draft."


def synthetic_records(n: int, start: int = 0) -> list[dict]:
    return [{"id": f"p{i}", "title": f"A study of {TOPICS[i % len(TOPICS)]} number {i}",
             "abstract": f"We report experiment {i} on {TOPICS[i % len(TOPICS)]} with method {i * 7 % 13} and "
                         f"dataset {i * 11 % 17}.", "authors": [f"Author {i % 23}"], "year": 1990 + i % 30,
             "references": [f"p{j}" for j in range(max(start, i - 3), i)]} for i in range(start, start + n)]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def cli(*args) -> list[str]:
    return [sys.executable, "-m", "recommender", *map(str, args)]


def run_to_end(args: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=PROJECT, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr[-2000:]}")
    return time.perf_counter() - started


# ----------------------------------------------------------------------------------------------- watching a run


def cached_rows(root: Path) -> int:
    from recommender.store.versions import embedding_cache_path

    path = embedding_cache_path(root)
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.05) as db:
            return db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]
    except sqlite3.Error:
        return 0


def staging(root: Path) -> Path | None:
    found = list((root / "versions").glob(".staging-*")) if (root / "versions").is_dir() else []
    return found[0] if found else None


def stage_reached(root: Path, stage: str, base_rows: int, new_papers: int, live: str) -> bool:
    """Whether a build of `root` has visibly reached `stage`."""
    folder = staging(root)
    if stage == "published":
        return (root / "CURRENT").is_file() and (root / "CURRENT").read_text().strip() != live
    if stage == "first chunk cached":
        return cached_rows(root) > base_rows
    if stage == "half embedded":
        return cached_rows(root) >= base_rows + new_papers // 2
    files = {"staging made": ".", "papers written": "columns", "lexical index saved": "bm25",
             "vectors saved": "dense.npy", "clusters saved": "dense.codes.npy"}
    return folder is not None and (folder / files[stage]).exists()


def kill_when(args: list[str], ready, timeout: float) -> tuple[bool, float]:
    """Start `args`, SIGKILL it as soon as `ready(elapsed)` holds; (whether it was killed while running, elapsed)."""
    proc = subprocess.Popen(args, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    while proc.poll() is None and time.perf_counter() - started < timeout:
        if ready(time.perf_counter() - started):
            break
        time.sleep(0.005)
    running = proc.poll() is None
    if running:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return running, time.perf_counter() - started


# ----------------------------------------------------------------------------------------------- checks


def check_live(root: Path, old_ids: set[str], new_ids: set[str], previous: str) -> dict:
    """The live index after a kill: complete, verified, old or new papers only, predecessor kept, answering."""
    from recommender import Query, Recommender
    from recommender.store.index import Index
    from recommender.store.versions import current_version

    version = current_version(root)
    index = Index.load(root, verify=True)
    ids = set(index.ids)
    index.close()
    state = "old" if ids == old_ids else "new" if ids == new_ids else "mixed"
    kept_previous = version.name == previous or (root / "versions" / previous).is_dir()
    answered = len(list(Recommender.load(root).recommend(Query(title=QUERY, k=5)))) == 5
    lost = len(old_ids - ids)
    return {"live": state, "previous_kept": kept_previous, "answered": answered, "papers_lost": lost,
            "ok": state != "mixed" and kept_previous and answered and lost == 0}


def sweep_index(work: Path, papers: int, timed_kills: int) -> list[dict]:
    """Kill `index` (rebuild) and `index --add` runs at every stage and at timed moments."""
    from recommender.store.versions import current_version

    base_n = max(papers // 6, 20)
    base_records, new_records = synthetic_records(base_n), synthetic_records(papers - base_n, start=base_n)
    base_file = write_jsonl(work / "base.jsonl", base_records)
    full_file = write_jsonl(work / "full.jsonl", base_records + new_records)
    add_file = write_jsonl(work / "add.jsonl", new_records)
    pristine = work / "pristine"
    run_to_end(cli("index", base_file, "--out", pristine))
    live = current_version(pristine).name
    base_rows = cached_rows(pristine)
    old_ids, new_ids = {r["id"] for r in base_records}, {r["id"] for r in base_records + new_records}
    commands = {"index": lambda root: cli("index", full_file, "--out", root),
                "index --add": lambda root: cli("index", add_file, "--add", "--out", root)}
    stages = ["staging made", "papers written", "lexical index saved", "first chunk cached", "half embedded",
              "vectors saved", "clusters saved", "published"]
    outcomes = []
    for name, command in commands.items():
        target = work / "run"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(pristine, target)
        full_time = run_to_end(command(target))
        plans = [("stage", s) for s in stages] + [("time", (k + 1) / (timed_kills + 1)) for k in range(timed_kills)]
        for kind, point in plans:
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(pristine, target)
            if kind == "stage":
                ready = lambda _elapsed, s=point: stage_reached(target, s, base_rows, len(new_records), live)
                label = point
            else:
                ready = lambda elapsed, f=point: elapsed >= f * full_time
                label = f"{point:.0%} of {full_time:.0f} s"
            killed, elapsed = kill_when(command(target), ready, timeout=3 * full_time + 60)
            reached = [s for s in stages if stage_reached(target, s, base_rows, len(new_records), live)]
            outcome = {"command": name, "kill_at": label, "killed_while_running": killed,
                       "seconds": round(elapsed, 1), "stages_on_disk_at_kill": reached}
            try:
                outcome.update(check_live(target, old_ids, new_ids, live))
                run_to_end(command(target))
                after = check_live(target, old_ids, new_ids, live)
                outcome["rerun_complete"] = after["live"] == "new" and staging(target) is None
            except Exception as exc:  # noqa: BLE001 - a failure is what this report counts
                outcome.update(ok=False, rerun_complete=False, error=f"{type(exc).__name__}: {exc}"[:300])
            outcome["survived"] = bool(outcome.get("ok")) and outcome["rerun_complete"]
            outcomes.append(outcome)
            print(json.dumps(outcome), flush=True)
    return outcomes


def sweep_train(work: Path, timed_kills: int) -> list[dict]:
    """Kill `train` at timed moments on the demo corpus; the index and its learned parts must still work."""
    from recommender.corpus.loaders import load_corpus

    root = work / "demo"
    run_to_end(cli("index", DEMO_CORPUS, "--out", root))
    ids = {p.id for p in load_corpus(DEMO_CORPUS).papers}
    live = (root / "CURRENT").read_text().strip()
    command = cli("train", "--index", root)
    full_time = run_to_end(command)
    outcomes = []
    for k in range(timed_kills):
        fraction = (k + 1) / (timed_kills + 1)
        killed, elapsed = kill_when(command, lambda t, f=fraction: t >= f * full_time, timeout=3 * full_time + 60)
        outcome = {"command": "train", "kill_at": f"{fraction:.0%} of {full_time:.0f} s",
                   "killed_while_running": killed, "seconds": round(elapsed, 1)}
        try:
            outcome.update(check_live(root, ids, ids, live))
            debris = [p.name for p in (root / "learned").glob(".*.tmp*")] if (root / "learned").is_dir() else []
            outcome["temporary_files_left"] = debris
            run_to_end(command)
            outcome["rerun_complete"] = check_live(root, ids, ids, live)["ok"]
        except Exception as exc:  # noqa: BLE001
            outcome.update(ok=False, rerun_complete=False, error=f"{type(exc).__name__}: {exc}"[:300])
        outcome["survived"] = bool(outcome.get("ok")) and outcome["rerun_complete"]
        outcomes.append(outcome)
        print(json.dumps(outcome), flush=True)
    return outcomes


# ----------------------------------------------------------------------------------------------- fuzz


def fuzz(cases: int) -> dict:
    """Run the loader property tests with `cases` examples each; count cases, clear errors and crashes."""
    os.environ["CITREC_FUZZ_EXAMPLES"] = str(cases)
    sys.path.insert(0, str(PROJECT / "tests"))  # the properties live with the tests
    import test_loaders_fuzz as properties
    counts = {"cases": 0, "loaded": 0, "clear_errors": 0, "crashes": 0}
    check = properties.load_or_clear_error

    def counted(path, fmt=None, strict=False):
        counts["cases"] += 1
        try:
            outcome = check(path, fmt, strict)
        except Exception:
            counts["crashes"] += 1  # an exception other than CorpusError, or a broken property
            raise
        counts["loaded" if outcome == "loaded" else "clear_errors"] += 1
        return outcome

    properties.load_or_clear_error = counted
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        for name in dir(properties):
            if name.startswith("test_fuzzed_"):
                try:
                    getattr(properties, name)(folder=Path(folder))
                except Exception as exc:  # noqa: BLE001
                    failures.append(f"{name}: {type(exc).__name__}: {exc}"[:500])
    counts["failing_properties"] = failures
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=1200, help="papers after the addition (a sixth are the base)")
    parser.add_argument("--timed-kills", type=int, default=6, help="kills at evenly spaced moments, per command")
    parser.add_argument("--train-kills", type=int, default=4)
    parser.add_argument("--fuzz", type=int, default=1000, help="cases per fuzz property")
    parser.add_argument("--skip", nargs="*", default=[], choices=["index", "train", "fuzz"])
    parser.add_argument("--json", type=Path, help="write the full report here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    report: dict = {"machine": machine.line(), "date": time.strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        if "index" not in args.skip:
            report["index_kills"] = sweep_index(work, args.papers, args.timed_kills)
        if "train" not in args.skip:
            report["train_kills"] = sweep_train(work, args.train_kills)
    if "fuzz" not in args.skip:
        report["fuzz"] = fuzz(args.fuzz)
    for key in ("index_kills", "train_kills"):
        for command in sorted({o["command"] for o in report.get(key, [])}):
            runs = [o for o in report[key] if o["command"] == command]
            killed = [o for o in runs if o["killed_while_running"]]
            print(f"{command}: {len(runs)} kills attempted, {len(killed)} landed while running, "
                  f"{sum(o['survived'] for o in runs)} survived, "
                  f"{sum(o.get('papers_lost', 0) for o in runs)} papers lost, "
                  f"{sum(o.get('live') == 'mixed' for o in runs)} mixed versions")
    if "fuzz" in report:
        f = report["fuzz"]
        print(f"fuzz: {f['cases']} cases, {f['loaded']} loaded, {f['clear_errors']} clear errors, "
              f"{f['crashes']} crashes; failing properties: {f['failing_properties'] or 'none'}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
