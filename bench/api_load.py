"""The HTTP API under load: `/recommend` latency with concurrent clients, and the server's memory over many requests.

    python -m bench.api_load --index .index/demo [--requests 10000] [--clients 20] [--threads 4] [--json OUT]

Starts `python -m recommender serve` on a free local port (no rate limit; the engine's --threads), warms it, then
--clients threads, each with its own keep-alive connection, send --requests /recommend requests between them as
fast as answers come. The requests are built from the index's own papers, a third of each kind, and (almost)
never repeat, so that every one pays for its encoding: a draft (a paper's title and the start of a sentence of
its abstract), a passage (the start of a sentence of one paper's abstract with [CIT], the draft of another as
its global context), and a LaTeX document with the cursor in an empty \\cite{} (the same two parts); the paper
the text comes from is excluded.

Reports latency p50/p95/p99/max over the timed requests (the --warm-up ones before are not counted), throughput,
errors, the server's CPU seconds per request, and its resident memory (VmRSS) sampled every second: after the
warm-up, at each tenth of the run, at the end, and the slope over the second half of the run (MiB per 1,000
requests; 0 when it does not grow). The clients run on the same machine and compete with the server for its cores.
"""
from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np

from bench import machine
from bench.paths import ROOT, need, write_json
from recommender.paper import Paper
from recommender.store.index import Index

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if len(s.split()) >= 4]


def requests_from(papers: list[Paper], n: int, seed: int = 0) -> list[dict]:
    """n /recommend bodies from the papers' own titles and abstracts (module docstring)."""
    rng = random.Random(seed)
    usable = [p for p in papers if p.title and sentences(p.abstract)]
    bodies = []
    for i in range(n):
        cited, citing = rng.choice(usable), rng.choice(usable)
        words = rng.choice(sentences(cited.abstract)).rstrip(".").split()
        cut = rng.randint(min(4, len(words)), len(words))
        passage = " ".join(words[:cut])
        draft_abstract = " ".join(sentences(citing.abstract)[:2])
        kind = i % 3
        if kind == 0:
            body = {"title": cited.title, "abstract": passage}
        elif kind == 1:
            body = {"title": citing.title, "abstract": draft_abstract, "context": f"{passage} [CIT]."}
        else:
            text = (f"\\documentclass{{article}}\n\\title{{{citing.title}}}\n\\begin{{document}}\n"
                    f"\\begin{{abstract}}{draft_abstract}\\end{{abstract}}\n{passage} \\cite{{}}.\n\\end{{document}}\n")
            body = {"text": text, "cursor": text.index("\\cite{}") + 6}
        bodies.append({**body, "exclude": [cited.id]})
    return bodies


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def start_server(index: Path, port: int, threads: int) -> subprocess.Popen:
    """`serve` on 127.0.0.1:port, once /health answers."""
    process = subprocess.Popen([sys.executable, "-m", "recommender", "serve", "--index", str(index), "--port",
                                str(port), "--rate-limit", "0", "--threads", str(threads)], cwd=ROOT,
                               env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                return process
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not answer /health in 10 minutes") from None
            time.sleep(0.5)


def run_load(url: str, bodies: list[dict], clients: int, done: list[int]) -> list[tuple[float, int]]:
    """Send every body from `clients` threads; (seconds, status) per body, in order. `done[0]` counts answers."""
    results: list[tuple[float, int]] = [(0.0, 0)] * len(bodies)
    order = itertools.count()
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(base_url=url, timeout=300) as session:
            while (i := next(order)) < len(bodies):
                started = time.perf_counter()
                try:
                    status = session.post("/recommend", json=bodies[i]).status_code
                except httpx.TransportError:
                    status = -1
                results[i] = (time.perf_counter() - started, status)
                with lock:
                    done[0] += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def sample_memory(pid: int, done: list[int], samples: list[tuple[int, float]], stop: threading.Event) -> None:
    while not stop.wait(1.0):
        samples.append((done[0], rss_mib(pid)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", required=True, help="the index the server loads")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--threads", type=int, default=4, help="the server's --threads")
    parser.add_argument("--warm-up", type=int, default=200, help="requests sent before the timed ones")
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args()
    index = need(parser, args.index, "--index", "an index directory")
    papers = Index.load(index).all_papers()
    bodies = requests_from(papers, args.warm_up + args.requests)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    info = machine.describe()
    process = start_server(index, port, args.threads)
    try:
        run_load(url, bodies[:args.warm_up], args.clients, [0])
        rss_start, cpu_start = rss_mib(process.pid), cpu_seconds(process.pid)
        done, samples, stop = [0], [(0, rss_start)], threading.Event()
        sampler = threading.Thread(target=sample_memory, args=(process.pid, done, samples, stop))
        sampler.start()
        started = time.perf_counter()
        results = run_load(url, bodies[args.warm_up:], args.clients, done)
        wall = time.perf_counter() - started
        stop.set()
        sampler.join()
        samples.append((done[0], rss_mib(process.pid)))
        cpu = cpu_seconds(process.pid) - cpu_start
    finally:
        process.terminate()
        process.wait(timeout=60)
    seconds = np.array([s for s, status in results if status == 200]) * 1000
    errors = {str(status): sum(1 for _, s in results if s == status) for status in {s for _, s in results} - {200}}
    counts, rss = np.array([c for c, _ in samples]), np.array([r for _, r in samples])
    second_half = counts >= args.requests // 2
    slope = float(np.polyfit(counts[second_half], rss[second_half], 1)[0]) * 1000 if second_half.sum() > 2 else None
    tenths = [float(rss[np.searchsorted(counts, args.requests * t // 10)]) for t in range(1, 11)]
    report = {
        "machine": machine.line(info), "load_after": machine.load(), "index": str(index), "papers": len(papers),
        "requests": args.requests, "clients": args.clients, "server_threads": args.threads,
        "warm_up": args.warm_up, "answered": int(len(seconds)), "errors": errors,
        "p50_ms": round(float(np.percentile(seconds, 50)), 1), "p95_ms": round(float(np.percentile(seconds, 95)), 1),
        "p99_ms": round(float(np.percentile(seconds, 99)), 1), "max_ms": round(float(seconds.max()), 1),
        "requests_per_s": round(args.requests / wall, 1), "wall_s": round(wall, 1),
        "server_cpu_ms_per_request": round(cpu / args.requests * 1000, 2),
        "rss_mib_after_warm_up": round(rss_start, 1), "rss_mib_each_tenth": [round(r, 1) for r in tenths],
        "rss_mib_max": round(float(rss.max()), 1), "rss_growth_mib": round(float(rss[-1] - rss_start), 1),
        "rss_slope_mib_per_1000_second_half": round(slope, 3) if slope is not None else None,
    }
    for key, value in report.items():
        print(f"{key}: {value}")
    if args.json:
        write_json(Path(args.json), report)


if __name__ == "__main__":
    main()
