"""Memory and disk of a lab server while private imports come and go.

    python -m bench.lab_uploads [--cycles 12] [--papers 100] [--index DIR]

In one process, as in one server: each cycle opens a new session of the real app (AppTest, the app's own
caches), uploads a corpus file on the Corpus page (the first --papers demo papers under new ids), builds it
as the session's private corpus, asks one query on it, and ends; then the clean-up pass the server runs
after a session's grace period removes the session's shelf and frees its cached engines. Reports, after
each cycle, the process's resident memory and what the corpora folder holds on disk.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from streamlit.testing.v1 import AppTest  # noqa: E402

from workspace import corpora  # noqa: E402
from workspace import engine_caches  # noqa: E402
from workspace.demo import DEMO_CORPUS  # noqa: E402


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def disk_mib(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20 if folder.exists() else 0.0


def upload_file(cycle: int, papers: int) -> bytes:
    """The first `papers` demo papers under ids of this cycle, so that every import builds new files."""
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()[:papers]
    records = []
    for line in lines:
        record = json.loads(line)
        record["id"] = f"c{cycle}-{record['id']}"
        record["references"] = [f"c{cycle}-{r}" for r in record.get("references", [])]
        records.append(json.dumps(record))
    return "\n".join(records).encode()


def one_session(cycle: int, papers: int) -> None:
    """A session that imports a corpus, asks one query on it, and leaves."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("pages/corpus.py").run()
    at.file_uploader(key="imp_file").set_value((f"lab{cycle}.jsonl", upload_file(cycle, papers), "text/plain")).run()
    at.radio(key="imp_action").set_value("Create a new corpus from this file")
    at.checkbox(key="imp_multilingual").uncheck()
    at.text_input(key="imp_name").input(f"lab {cycle}")
    at.button[-1].click().run()
    at.switch_page("pages/recommend.py").run()
    at.text_area(key="q_text").input("Recommending citations for a draft from its abstract with BM25 and embeddings.")
    at.button(key="FormSubmitter:query_form-Recommend").click().run()
    if at.exception or not at.session_state["results"]["recs"]:
        raise RuntimeError(f"cycle {cycle}: the session failed: {at.exception}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=12)
    parser.add_argument("--papers", type=int, default=100)
    parser.add_argument("--index", type=Path, help="the default corpus (default: the demo index)")
    args = parser.parse_args()
    if args.index:
        os.environ["CITREC_INDEX"] = str(args.index.resolve())
    root = Path(tempfile.mkdtemp(prefix="citrec-corpora-"))
    os.environ["CITREC_CORPORA"] = str(root)
    rows = []
    for cycle in range(args.cycles):
        started = time.perf_counter()
        one_session(cycle, args.papers)
        on_disk = disk_mib(root)
        removed = corpora.sweep_private_shelves(lambda owner: False, grace_s=-1, idle_limit_s=float("inf"),
                                                on_remove=engine_caches.release)
        rows.append({"cycle": cycle + 1, "seconds": round(time.perf_counter() - started, 1),
                     "disk_mib_while_open": round(on_disk, 1), "shelves_removed": removed,
                     "disk_mib_after_sweep": round(disk_mib(root), 1), "rss_mib": round(rss_mib(), 1)})
        print(json.dumps(rows[-1]), flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cycles": args.cycles, "papers_per_import": args.papers, "peak_rss_mib": round(peak, 1)}))


if __name__ == "__main__":
    main()
