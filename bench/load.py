"""Lab server load: N browser sessions open the same deep link at the same moment.

    python -m bench.load [--sessions 20] [--returning] [--static-proxy] [--index DIR] [--root CHECKOUT]

Starts `streamlit run app.py` on a free local port (on the demo corpus unless --index is given) and warms
it with one session that answers another query (models loaded, as on a server that has been up for a
while). Then N fresh browser contexts open the deep link at once: each is its own Streamlit session with
an empty browser cache, as N colleagues clicking a shared link. With --returning, each browser has been
on the app's start page before and holds its static files, as a colleague who uses the app daily.
Reports per session the time from navigation to the results heading (p50/p95/max), the sessions that
failed (timeout or an exception on the page), the server process's CPU seconds per session (user +
system from /proc, so the browsers' own CPU is not counted) and the server's resident memory after.

With --static-proxy, nginx (apt-get install nginx-light) stands in front of the server, as a lab would
put one for HTTPS, and serves Streamlit's own static files (the page's JavaScript) itself; nginx's CPU
seconds are reported apart. --root serves another checkout (e.g. an older commit, for a before/after).

The browsers run on the same machine as the server and compete with it for the cores: answer times
include that contention, the server's CPU seconds do not.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

from bench import machine
from workspace.app_server import app_server, free_port

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
TITLE = "Recommending citations for a scientific draft"
ABSTRACT = ("We suggest papers a manuscript should cite, from the text of its title and abstract, combining word "
            "matching, sentence embeddings and the citation graph.")
WARM_UP_TITLE = "Dense passage retrieval for open-domain question answering"
ANSWER = re.compile(r"^\d+ (recommendations|nearest papers)")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (fields 14 and 15 of the line)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def open_session(context, url: str, timeout_s: float) -> dict:
    """A new tab of `context` opens `url`; the time until the results heading shows, or the failure."""
    page = await context.new_page()
    started = time.perf_counter()
    try:
        await page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        await page.get_by_text(ANSWER).first.wait_for(timeout=timeout_s * 1000)
        seconds = time.perf_counter() - started
        failed = await page.get_by_test_id("stException").count()
        return {"seconds": seconds, "error": "exception shown on the page" if failed else None}
    except Exception as exc:  # a timeout or a crashed page: counted as an error, the run goes on
        return {"seconds": time.perf_counter() - started, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    finally:
        await page.close()


async def visit_start_page(context, base: str, timeout_s: float) -> None:
    """A returning visitor: the browser has been on the app before and holds its static files."""
    page = await context.new_page()
    await page.goto(base, wait_until="commit", timeout=timeout_s * 1000)
    await page.get_by_text("Find citations for your draft").first.wait_for(timeout=timeout_s * 1000)
    await page.close()


async def warm_up(browser, base: str, timeout_s: float) -> None:
    """One session answers another query: the server has loaded the index and the models and run every path once."""
    context = await browser.new_context()
    result = await open_session(context, f"{base}/?{urlencode({'title': WARM_UP_TITLE})}", timeout_s)
    await context.close()
    if result["error"]:
        raise RuntimeError(f"the warm-up session failed: {result['error']}")


NGINX_CONF = """
user root;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log;
events {{ worker_connections 1024; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location /static/ {{
            alias {static}/static/;
            add_header Cache-Control "public, immutable, max-age=31536000";
        }}
        location / {{
            proxy_pass http://127.0.0.1:{upstream};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_set_header Host $host;
            proxy_read_timeout 86400;
        }}
    }}
}}
"""


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError):  # a process that ended meanwhile
            continue
    return found


@contextmanager
def static_proxy(upstream: str):
    """nginx on a free port: Streamlit's static files from disk, everything else passed to `upstream`.

    Yields (base URL, pids of nginx's processes)."""
    import streamlit

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="citrec-nginx-") as folder:
        conf = Path(folder) / "nginx.conf"
        conf.write_text(NGINX_CONF.format(folder=folder, port=port, upstream=upstream.rsplit(":", 1)[1],
                                          static=Path(streamlit.__file__).parent / "static"))
        subprocess.run(["nginx", "-c", str(conf), "-p", folder], check=True)
        try:
            master = int((Path(folder) / "nginx.pid").read_text())
            deadline = time.monotonic() + 10
            while not children(master) and time.monotonic() < deadline:  # the worker is forked after the pid file
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}", [master, *children(master)]
        finally:
            subprocess.run(["nginx", "-c", str(conf), "-p", folder, "-s", "stop"], check=False)


@contextmanager
def profiled(pid: int, path: Path | None):
    """Sample the server with py-spy (`pip install py-spy`) into `path` (speedscope JSON) while the block runs."""
    if path is None:
        yield
        return
    spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--format", "speedscope", "--output", str(path),
                            "--rate", "200", "--gil"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=60)


async def burst(base: str, pids: list[int], sessions: int, timeout_s: float, returning: bool,
                profile: Path | None = None) -> dict:
    """Warm up, then N sessions open the deep link at once; `pids`: the server first, then any proxy."""
    pid = pids[0]
    from playwright.async_api import async_playwright

    link = f"{base}/?{urlencode({'title': TITLE, 'abstract': ABSTRACT})}"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        await warm_up(browser, base, timeout_s)
        contexts = [await browser.new_context(viewport={"width": 1360, "height": 1000}) for _ in range(sessions)]
        if returning:
            for context in contexts:
                await visit_start_page(context, base, timeout_s)
        await asyncio.sleep(2)
        cpu_before, wall_before = [cpu_seconds(p) for p in pids], time.perf_counter()
        with profiled(pid, profile):
            runs = await asyncio.gather(*(open_session(context, link, timeout_s) for context in contexts))
            wall = time.perf_counter() - wall_before
            await asyncio.sleep(2)  # let the server finish what it sends after the heading
            cpu = [cpu_seconds(p) - before for p, before in zip(pids, cpu_before)]
        await browser.close()
    answered = [r["seconds"] for r in runs if not r["error"]]
    return {"sessions": sessions, "browser_cache": "warm" if returning else "empty", "answered": len(answered),
            "errors": [r["error"] for r in runs if r["error"]],
            "p50_s": round(float(np.percentile(answered, 50)), 2) if answered else None,
            "p95_s": round(float(np.percentile(answered, 95)), 2) if answered else None,
            "max_s": round(max(answered), 2) if answered else None,
            "burst_wall_s": round(wall, 2), "server_cpu_s": round(cpu[0], 2),
            "server_cpu_s_per_session": round(cpu[0] / sessions, 3),
            "proxy_cpu_s_per_session": round(sum(cpu[1:]) / sessions, 3) if len(pids) > 1 else None,
            "server_rss_mib_after": round(rss_mib(pid), 1), "machine": machine.line()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--index", type=Path, help="index directory (default: the demo corpus)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds a session may wait for its answer")
    parser.add_argument("--returning", action="store_true",
                        help="each browser has visited the app before (its static files are cached)")
    parser.add_argument("--static-proxy", action="store_true",
                        help="nginx in front of the server serves Streamlit's static files")
    parser.add_argument("--rounds", type=int, default=1, help="bursts in a row on the same server")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose app is served (e.g. an older commit, for a before/after)")
    parser.add_argument("--log", type=Path, default=Path("/tmp/citrec-load.log"), help="the server's output")
    parser.add_argument("--out", type=Path, help="write the results as JSON")
    parser.add_argument("--profile", type=Path, help="sample the server with py-spy during the last burst")
    args = parser.parse_args()
    env = {**os.environ, **({"CITREC_INDEX": str(args.index.resolve())} if args.index else {})}
    results = []
    server = app_server(args.log, env, args.root, start_timeout_s=120, stop_timeout_s=30)
    with server as (base, pid), ExitStack() as stack:
        pids = [pid]
        if args.static_proxy:
            base, proxy_pids = stack.enter_context(static_proxy(base))
            pids += proxy_pids
        for round_ in range(args.rounds):
            profile = args.profile if round_ == args.rounds - 1 else None
            results.append(asyncio.run(burst(base, pids, args.sessions, args.timeout, args.returning, profile)))
            print(json.dumps(results[-1]), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
