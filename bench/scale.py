"""The limit of one machine: index build, disk, memory and query latency on synthetic corpora of growing size.

    nice -n 19 python -m bench.scale --sizes 100000 1000000 [3000000] --out DIR [--pool-index IDX/acm-pool] \
        [--queries 200]

Everything is written under --out (outside the repository; never commit it). For each size, three processes,
one after the other, so that each one's peak memory is its own:

  generate  a synthetic corpus (`bench/synthetic_corpus.py`: words of real abstracts, real MiniLM vectors plus
            noise, a citation graph by topic and preferential attachment) as N/corpus.jsonl.gz, its vectors put
            into the index's embedding cache, and the queries
  build     `CorpusStream` + `build_index` into N/index, as `python -m recommender index` does (the corpus is
            validated once, then streamed into the build); every vector comes from the cache, so the time is the
            build without embedding (SQLite store, BM25, graph, vectors, clusters, checksums). A sampler thread
            records which line of recommender/store/build.py runs, every 0.2 s, another the peaks of anonymous
            and file-backed resident memory (RSS counts the pages of the memory-mapped files being written, which
            the kernel can write back and drop, with the build's own memory).
  query     a fresh process, as the app's first query: imports, `Recommender.load`, one global query (the time
            from process start to that answer); then warm latency of `Recommender.recommend` with the default
            config over the global queries (title + abstract) and the local ones (a passage with [CIT] and the
            draft's title and abstract), each text seen once. The index's files are dropped from the page cache
            first, as after a reboot, so the first answer reads what it needs from disk and the mapped pages
            counted at the end (PSS) are those the queries brought in, not the build's leftovers; then the share
            of the exact 200 nearest papers the dense search finds (recall, 50 global queries).

Every time is taken as wall time and as the process's CPU time: on a machine shared with other jobs the latter is
what the work costs. The query process runs the encoder on --query-threads threads (1 by default: on a loaded
machine two threads wait for each other). A watchdog stops a process whose resident memory passes --max-rss-gib,
or when the machine's available memory falls under 1 GiB; larger sizes are then skipped. Results: bench/results/scale.json (merged by size, so sizes
can be run one at a time), plot: docs/scale.svg. --reuse keeps a size's corpus and index from an earlier run.
"""
from __future__ import annotations

import argparse
import json
import linecache
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import DATA, RESULTS as RESULTS_DIR, ROOT, need

RESULTS = RESULTS_DIR / "scale.json"
PLOT = ROOT / "docs" / "scale.svg"
FREQUENCY_CORPUS = DATA / "acm-cr" / "corpus.jsonl.gz"
MIN_AVAILABLE_GIB = 1.0
GIB = 1 << 30


# ----------------------------------------------------------------------------------------------- memory

def proc_status(pid: int | str = "self") -> dict[str, int]:
    """Memory lines of /proc/PID/status in bytes (VmRSS, VmHWM, RssAnon, RssFile, ...)."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if value.strip().endswith("kB"):
            found[name] = int(value.split()[0]) * 1024
    return found


def available_bytes() -> int:
    available = machine.meminfo_bytes("MemAvailable")
    if available is None:
        raise RuntimeError("no MemAvailable in /proc/meminfo")
    return available


def proportional_set() -> dict[str, int]:
    """Pss lines of /proc/self/smaps_rollup in bytes: each resident page counted once however many mappings of
    this process hold it (a page that n processes map counts 1/n), where RSS counts it once per mapping."""
    found = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        name, _, value = line.partition(":")
        if name.startswith("Pss") and value.strip().endswith("kB"):
            found[name] = int(value.split()[0]) * 1024
    return found


def memory_report() -> dict[str, float]:
    """This process's peak and current resident memory and its proportional set (PSS), in MiB."""
    status, pss = proc_status(), proportional_set()
    mib = 1 << 20
    return {"peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "rss_mib": round(status["VmRSS"] / mib), "rss_anon_mib": round(status.get("RssAnon", 0) / mib),
            "rss_file_mib": round(status.get("RssFile", 0) / mib), "pss_mib": round(pss.get("Pss", 0) / mib),
            "pss_file_mib": round(pss.get("Pss_File", 0) / mib)}


def pss_by_file(folder: Path) -> dict[str, int]:
    """MiB of this process's proportional set in each mapped file under `folder` (by path inside it)."""
    found, current = Counter(), None
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            fields = line.split()
            if fields and "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:  # a mapping's first line
                current = fields[5] if len(fields) > 5 and fields[5].startswith(str(folder)) else None
            elif current and fields and fields[0] == "Pss:":
                found[current] += int(fields[1])
    return {str(Path(path).relative_to(folder)).split("/", 1)[-1]: kib >> 10
            for path, kib in found.most_common() if kib >> 10}


# ----------------------------------------------------------------------------------------------- phases

def phase_generate(size_dir: Path, n: int, queries: int, pool: Path | None, frequencies: Path) -> dict:
    from bench import synthetic_corpus as synthetic

    started = time.perf_counter()
    bases = synthetic.load_bases(pool, frequencies)
    stats_s = time.perf_counter() - started
    index_root = size_dir / "index"
    shutil.rmtree(index_root, ignore_errors=True)
    counts = synthetic.write_corpus(bases, n, size_dir / "corpus.jsonl.gz", index_root,
                                    on_chunk=lambda done, total: print(f"generated {done}/{total}", flush=True))
    synthetic.write_queries(bases, queries, size_dir / "queries.json")
    return {**counts, "bases": len(bases), "vocabulary": len(bases.vocab),
            "bases_from": [str(p) for p in (pool, frequencies) if p] + ["assets/demo_corpus.jsonl"],
            "statistics_s": round(stats_s, 1), "seconds": round(time.perf_counter() - started, 1)}


class LineSampler:
    """Which line of recommender/store/build.py (innermost) the main thread runs, sampled every `interval` s."""

    def __init__(self, interval: float = 0.2):
        self.interval, self.counts = interval, Counter()
        self.main = threading.main_thread().ident
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        target = str(ROOT / "recommender" / "store" / "build.py")
        while not self.done.wait(self.interval):
            frame = sys._current_frames().get(self.main)
            while frame is not None and frame.f_code.co_filename != target:
                frame = frame.f_back
            if frame is not None and frame.f_lineno is not None:  # None while a frame starts or ends
                line = linecache.getline(target, frame.f_lineno).strip()
                self.counts[f"{frame.f_code.co_name}: {line[:90]}"] += 1

    def __enter__(self) -> "LineSampler":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()

    def seconds(self) -> dict[str, float]:
        return {label: round(count * self.interval, 1) for label, count in self.counts.most_common()}


class MemorySampler:
    """The peaks of this process's anonymous and file-backed resident memory, sampled every `interval` s (the
    kernel's VmHWM gives only their sum's peak)."""

    def __init__(self, interval: float = 0.1):
        self.interval, self.peaks = interval, {"RssAnon": 0, "RssFile": 0}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.done.wait(self.interval):
            status = proc_status()
            for name in self.peaks:
                self.peaks[name] = max(self.peaks[name], status.get(name, 0))

    def __enter__(self) -> "MemorySampler":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()

    def report(self) -> dict[str, int]:
        return {"peak_anon_mib": self.peaks["RssAnon"] >> 20, "peak_file_mib": self.peaks["RssFile"] >> 20}


def phase_build(size_dir: Path) -> dict:
    from recommender.corpus.loaders.stream import CorpusStream
    from recommender.store.build import build_index

    started = time.perf_counter()
    papers = CorpusStream([size_dir / "corpus.jsonl.gz"])  # validated here, read again by the build
    load_s = time.perf_counter() - started
    marks = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage.startswith("embedding"):  # every vector should come from the cache
            raise RuntimeError(f"{total} texts are missing from the embedding cache; regenerate the corpus")
        if not marks or marks[-1][0] != stage:
            marks.append((stage, time.perf_counter()))

    root = size_dir / "index"
    for old in (root / "versions").glob("v*"):
        shutil.rmtree(old)
    (root / "CURRENT").unlink(missing_ok=True)
    began, began_cpu = time.perf_counter(), time.process_time()
    with LineSampler() as sampler, MemorySampler() as memory:
        build_index(papers, root, on_progress=progress, progress_bar=False)
    ended, cpu = time.perf_counter(), time.process_time() - began_cpu
    labels = {"papers": "papers: read, SQLite store, columns, BM25 terms", "lexical index": "BM25 postings",
              "citation graph": "citation graph, vectors from the cache into their file",
              "nearest-neighbour index (dense)": "clusters (k-means, assignment, codes), checksums, publish"}
    stages, previous, label = {}, began, labels["papers"]
    for stage, at in marks:
        stages[label] = stages.get(label, 0) + round(at - previous, 1)
        previous, label = at, labels.get(stage, stage)
    stages[label] = round(ended - previous, 1)
    return {"papers": len(papers), "validate_corpus_s": round(load_s, 1), "build_s": round(ended - began, 1),
            "cpu_build_s": round(cpu, 1), "stages_s": stages, "sampled_lines_s": sampler.seconds(), **memory.report(),
            **memory_report()}


def percentiles(ms: list[float], prefix: str = "") -> dict[str, float]:
    return {f"{prefix}p50_ms": round(float(np.percentile(ms, 50)), 1),
            f"{prefix}p95_ms": round(float(np.percentile(ms, 95)), 1), f"{prefix}max_ms": round(float(np.max(ms)), 1)}


def phase_query(size_dir: Path, started: float, profile: Path | None) -> dict:
    """The app's first query in a fresh process, then warm latency (times from `started`, the driver's clock
    just before it started this process)."""
    from recommender.store.index import Index
    from recommender.query import Query
    from recommender.pipeline.recommender import Recommender

    marks = [("imports", time.time(), time.process_time())]
    queries = json.loads((size_dir / "queries.json").read_text(encoding="utf-8"))
    index = Index.load(size_dir / "index")  # as the app: the index, then the recommender over it
    marks.append(("index_load", time.time(), time.process_time()))
    recommender = Recommender.from_index(index)
    marks.append(("models_load", time.time(), time.process_time()))
    first = recommender.recommend(Query(**queries["global"][0]))
    marks.append(("first_recommend", time.time(), time.process_time()))
    if len(first.recommendations) == 0:
        raise RuntimeError("the first query found nothing")
    first_query = {"first_query_s": round(marks[-1][1] - started, 2), "cpu_first_query_s": round(marks[-1][2], 2)}
    previous_wall, previous_cpu = started, 0.0
    for name, wall, cpu in marks:
        first_query[f"{name}_s"] = round(wall - previous_wall, 2)
        first_query[f"cpu_{name}_s"] = round(cpu - previous_cpu, 2)
        previous_wall, previous_cpu = wall, cpu
    first_query["memory"] = memory_report()
    recommender.recommend(Query(**queries["local"][0]))  # the first local query's one-time costs
    latency = {}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    for mode in ("global", "local"):
        wall, cpu = [], []
        for fields in queries[mode][1:]:
            begin, begin_cpu = time.perf_counter(), time.process_time()
            recommender.recommend(Query(**fields))
            wall.append((time.perf_counter() - begin) * 1000)
            cpu.append((time.process_time() - begin_cpu) * 1000)
        latency[mode] = {"queries": len(wall), **percentiles(wall), **percentiles(cpu, "cpu_")}
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    memory = {**memory_report(), "pss_by_file_mib": pss_by_file(size_dir / "index" / "versions")}  # before the
    # exact searches below read every vector
    return {**first_query, "latency": latency, **memory, "dense_recall": dense_recall(recommender, queries["global"])}


def dense_recall(recommender, queries: list[dict], limit: int = 50, n: int = 200) -> dict:
    """How many of the exact `n` nearest papers (cosine over every vector) the dense search as served finds, for
    the first `limit` global queries (the app's pool is 200)."""
    from recommender.pipeline.retrieve import dense_retrievers, top_positions
    from recommender.query import Query

    served = dense_retrievers(recommender.index)["dense"]
    allowed = np.ones(len(recommender.index), dtype=bool)
    found = []
    for fields in queries[:limit]:
        vector = recommender.encode([Query(**fields).main_text])[0]
        exact = top_positions(np.asarray(recommender.index.dense @ vector), allowed, n)
        found.append(len(set(served.search(vector, allowed, n).tolist()) & set(exact.tolist())) / n)
    return {"queries": len(found), "n": n, "mean": round(float(np.mean(found)), 4),
            "min": round(float(np.min(found)), 4)}


# ----------------------------------------------------------------------------------------------- driver

def disk_usage(size_dir: Path) -> dict:
    """Bytes of the live index version by file, of the embedding cache and of the corpus file."""
    from recommender.store import versions

    version = versions.current_version(size_dir / "index")
    files = {str(p.relative_to(version)): p.stat().st_size for p in sorted(version.rglob("*")) if p.is_file()}
    cache = versions.embedding_cache_path(size_dir / "index")
    return {"version_bytes": sum(files.values()), "files": files,
            "embedding_cache_bytes": sum(p.stat().st_size for p in cache.parent.glob(cache.name + "*")),
            "corpus_file_bytes": (size_dir / "corpus.jsonl.gz").stat().st_size}


def evict_from_page_cache(folder: Path) -> int:
    """Drop the clean cached pages of every file under `folder` (posix_fadvise DONTNEED; no other process may map
    them); the bytes of the files."""
    total = 0
    for path in folder.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
            total += path.stat().st_size
    return total


def run_phase(phase: str, size_dir: Path, n: int, args) -> dict:
    """Run one phase in a child process under the memory watchdog; its JSON result, or why it stopped."""
    result_path = size_dir / f"{phase}.json"
    result_path.unlink(missing_ok=True)
    command = [sys.executable, "-m", "bench.scale", "--phase", phase, "--size-dir", str(size_dir),
               "--sizes", str(n), "--queries", str(args.queries), "--frequency-corpus", str(args.frequency_corpus),
               "--started", repr(time.time())]
    if args.pool_index:
        command += ["--pool-index", str(args.pool_index)]
    if args.profile:
        command += ["--profile"]
    if phase == "query":  # a first start: none of the index in memory (the build leaves its files cached)
        evict_from_page_cache(size_dir / "index" / "versions")
    load_before = os.getloadavg()[0]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if phase == "query" and args.query_threads:
        env["OMP_NUM_THREADS"] = str(args.query_threads)
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    stopped, peak = "", 0
    while process.poll() is None:
        try:
            rss = proc_status(process.pid).get("VmRSS", 0)
        except (FileNotFoundError, ProcessLookupError):
            break
        peak = max(peak, rss)
        if rss > args.max_rss_gib * GIB:
            stopped = f"resident memory {rss / GIB:.1f} GiB passed the {args.max_rss_gib} GiB limit"
        elif available_bytes() < MIN_AVAILABLE_GIB * GIB:
            stopped = f"the machine's available memory fell under {MIN_AVAILABLE_GIB} GiB"
        if stopped:
            process.kill()
            process.wait()
            break
        time.sleep(0.5)
    if stopped or process.returncode != 0:
        return {"failed": stopped or f"exit status {process.returncode}", "watched_peak_rss_mib": peak >> 20}
    result = json.loads(result_path.read_text(encoding="utf-8"))
    result["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]  # other jobs on the machine
    return result


def run_size(n: int, args) -> dict:
    size_dir = args.out / str(n)
    size_dir.mkdir(parents=True, exist_ok=True)
    record = {"papers": n}
    for phase in ("generate", "build", "query"):
        previous = size_dir / f"{phase}.json"
        if args.reuse and phase != "query" and previous.is_file():  # an earlier run's corpus or index
            record[phase] = json.loads(previous.read_text())
            continue
        print(f"[{n}] {phase} ...", flush=True)
        record[phase] = run_phase(phase, size_dir, n, args)
        print(f"[{n}] {phase}: {json.dumps(record[phase])[:600]}", flush=True)
        if "failed" in record[phase]:
            return record
    record["disk"] = disk_usage(size_dir)
    record["disk"]["version_bytes_per_paper"] = round(record["disk"]["version_bytes"] / n)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--out", type=Path,
                        help="where the synthetic corpora and indexes go (needed; outside the checkout: GBs a "
                             "million papers)")
    parser.add_argument("--queries", type=int, default=200, help="queries of each mode")
    parser.add_argument("--max-rss-gib", type=float, default=18.0)
    parser.add_argument("--reuse", action="store_true",
                        help="keep an earlier run's corpus and index of a size (a phase whose result file exists)")
    parser.add_argument("--query-threads", type=int, default=1,
                        help="OMP_NUM_THREADS of the query process (0: the default; on a machine shared with "
                             "other jobs the encoder's two threads wait for each other)")
    parser.add_argument("--profile", action="store_true", help="cProfile the warm queries into N/query.prof")
    parser.add_argument("--pool-index", type=Path,
                        help="an index of real papers whose texts and vectors seed the synthetic ones, e.g. the "
                             "ACM-CR pool (default: none, the demo corpus's papers only)")
    parser.add_argument("--frequency-corpus", type=Path, default=FREQUENCY_CORPUS,
                        help="a corpus file whose titles and abstracts give word frequencies (default: %(default)s)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--plot", type=Path, default=PLOT)
    parser.add_argument("--phase", choices=("generate", "build", "query"), help=argparse.SUPPRESS)
    parser.add_argument("--size-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--started", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.phase:  # a child process of the driver
        if args.phase == "generate":
            result = phase_generate(args.size_dir, args.sizes[0], args.queries, args.pool_index,
                                    args.frequency_corpus)
        elif args.phase == "build":
            result = phase_build(args.size_dir)
        else:
            result = phase_query(args.size_dir, args.started,
                                 args.size_dir / "query.prof" if args.profile else None)
        if args.phase != "build":
            result.update({k: v for k, v in memory_report().items() if k not in result})
        (args.size_dir / f"{args.phase}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        return

    if args.out is None:
        parser.error("give --out DIR (where the synthetic corpora and indexes go, outside the checkout)")
    if ROOT in args.out.resolve().parents or args.out.resolve() == ROOT:
        parser.error(f"--out {args.out} is inside the repository: synthetic corpora must stay outside it")
    if args.pool_index:
        need(parser, args.pool_index / "CURRENT", "--pool-index", "DIR (an index of real papers)")
    need(parser, args.frequency_corpus, "--frequency-corpus", "FILE (a corpus file, e.g. ACM-CR's corpus.jsonl.gz)")
    results = json.loads(args.results.read_text()) if args.results.is_file() else {"sizes": {}}
    results.update({"command": f"nice -n {os.nice(0)} python -m bench.scale " + " ".join(sys.argv[1:]),
                    "machine": machine.describe(), "date": time.strftime("%Y-%m-%d")})
    for n in sorted(args.sizes):
        record = run_size(n, args)
        results["sizes"][str(n)] = record
        args.results.write_text(json.dumps(results, indent=1), encoding="utf-8")
        if any("failed" in record.get(phase, {}) for phase in ("generate", "build", "query")):
            print(f"[{n}] stopped; larger sizes skipped", flush=True)
            break
    from bench.scale_plot import write_plot

    write_plot(results, args.plot)
    print(f"results: {args.results}; plot: {args.plot}")


if __name__ == "__main__":
    main()
