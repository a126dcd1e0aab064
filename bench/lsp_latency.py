"""Completion round trip of the citation language server, warm, against the engine called directly.

    python -m bench.lsp_latency --index .index/demo
    python -m bench.lsp_latency --index IDX/acm-full --queries ../shared/data/acm-cr/queries.jsonl.gz

The real server (`python -m recommender lsp`) runs as a subprocess and is driven over stdio as an editor would:
one document whose text is replaced for each query (didChange), then a completion request at the citation; the
time is from sending the request to reading its answer. Each query is a draft (LaTeX by default, or Markdown
with YAML front matter) written from a query file in `evaluate`'s format (context with [CIT], citing_title,
citing_abstract; default: the 80 English passages of bench/data/crosslang): the title, the abstract, and the
passage with `\\cite{` (or `[@`) at its first [CIT] (its other [CIT]s left out). A few other queries warm the
server first; every timed query is new to it, so no answer comes from a cache.

Then, the server closed, the same index is loaded in this process and asked directly, twice per query: with the
query the server built (`context.citation_query` on the same text: the top 10 must be the server's, item for
item), and with the query `evaluate` builds from the row (title, abstract, the passage with its one [CIT]: the
top 10 agree unless reading the draft's markup changed the words). Writes bench/results/lsp_latency-INDEX.json.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import RESULTS, ROOT, need, write_json
from recommender.pipeline.recommender import Recommender
from recommender.query import MARK_RE, Query
from recommender.serve.context import citation_query
from recommender.serve.lsp_client import StdioClient, position_of

CROSSLANG = Path(__file__).resolve().parent / "data" / "crosslang" / "queries.jsonl"
WARM_UP = 5
K = 10
_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "%": r"\%", "$": r"\$", "&": r"\&",
                   "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def read_rows(path: Path | None, limit: int) -> list[dict]:
    """Query rows (context with [CIT], citing_title, citing_abstract); the crosslang English passages by default."""
    if path is None:
        rows = [json.loads(line) for line in CROSSLANG.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = [{"qid": r["qid"], "context": r["en"], "citing_title": "", "citing_abstract": ""} for r in rows]
    else:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
    rows = [r for r in rows if MARK_RE.search(r.get("context") or "")]
    return rows[:limit] if limit else rows


def one_mark(context: str) -> str:
    """The passage with its first [CIT] kept and the others left out."""
    first = MARK_RE.search(context)
    return context[:first.end()] + MARK_RE.sub(" ", context[first.end():])


def draft(row: dict, form: str) -> tuple[str, int]:
    """The draft of a query row and the offset of the cursor in it (inside the citation at the first [CIT])."""
    context = one_mark(" ".join(row["context"].split()))
    before, after = MARK_RE.split(context, maxsplit=1)
    title, abstract = row.get("citing_title") or "", row.get("citing_abstract") or ""
    if form == "markdown":
        head = "---\n" + "".join(f"{name}: {json.dumps(value, ensure_ascii=False)}\n"
                                  for name, value in (("title", title), ("abstract", abstract)) if value)
        text = f"{head}---\n\n{before.rstrip()} [@"
        return text + "]" + after + "\n", len(text)
    head = "\\documentclass{article}\n" + (f"\\title{{{_latex_escape(title)}}}\n" if title else "")
    if abstract:
        head += f"\\begin{{document}}\n\\begin{{abstract}}\n{_latex_escape(abstract)}\n\\end{{abstract}}\n"
    else:
        head += "\\begin{document}\n"
    text = f"{head}\n{_latex_escape(before.rstrip())} \\cite{{"
    return text + "}" + _latex_escape(after) + "\n\\end{document}\n", len(text)


def _latex_escape(value: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in value)


def served(index: Path, drafts: list[tuple[str, int]], warm: list[tuple[str, int]],
           form: str) -> tuple[list[float], list[list[str]]]:
    """Round trips (seconds) of the drafts' completions after the `warm` ones, and the papers each offered."""
    with tempfile.TemporaryDirectory() as folder, StdioClient(
            [sys.executable, "-m", "recommender", "lsp", "--index", str(index)]) as client:
        root = Path(folder)
        client.initialize(root)
        uri = client.open(root / ("draft.md" if form == "markdown" else "draft.tex"), "", form)
        times, offered = [], []
        for number, (text, offset) in enumerate([*warm, *drafts]):
            client.replace(uri, text)
            started = time.perf_counter()
            completion = client.completion(uri, *position_of(text, offset))
            if number >= len(warm):
                times.append(time.perf_counter() - started)
                offered.append([item.data["paper_id"] for item in completion.items
                                if isinstance(item.data, dict)][:K])
    return times, offered


def percentiles(times: list[float]) -> dict:
    values = np.asarray(times) * 1000
    return {"p50_ms": round(float(np.percentile(values, 50)), 1), "p95_ms": round(float(np.percentile(values, 95)), 1),
            "mean_ms": round(float(values.mean()), 1), "max_ms": round(float(values.max()), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True, help="the index the server loads")
    parser.add_argument("--queries", help="a query file in evaluate's format (JSONL, optionally .gz); default: the "
                                          "crosslang English passages")
    parser.add_argument("--limit", type=int, default=0, help="the first N queries (0: all)")
    parser.add_argument("--format", choices=["latex", "markdown"], default="latex", help="the drafts' format")
    parser.add_argument("--out", help="the JSON report (default bench/results/lsp_latency-INDEX.json)")
    args = parser.parse_args(argv)
    index = need(parser, args.index, "--index", "DIR (an index directory)")
    rows = read_rows(need(parser, args.queries, "--queries", "FILE") if args.queries else None,
                     args.limit + WARM_UP if args.limit else 0)
    if len(rows) <= WARM_UP:
        parser.error("too few queries with a [CIT] in their context")
    warm_rows, rows = rows[:WARM_UP], rows[WARM_UP:]
    drafts = [draft(row, args.format) for row in rows]
    before = machine.describe()
    print(f"{len(drafts)} completions through the server on {index} ({machine.line(before)})", flush=True)
    times, offered = served(index, drafts, [draft(row, args.format) for row in warm_rows], args.format)
    print(f"server: {percentiles(times)}", flush=True)

    recommender = Recommender.load(index)
    def ask(query: Query) -> tuple[list[str], float]:
        started = time.perf_counter()
        answer = [r.paper_id for r in recommender.recommend(query)]
        return answer, time.perf_counter() - started

    for row in warm_rows:  # warmed as the server was
        ask(citation_query(*draft(row, args.format), k=K))
    direct_load = machine.load()
    direct_times, same, same_as_evaluate, overlap = [], 0, 0, []
    for (text, offset), row, papers in zip(drafts, rows, offered):
        direct, elapsed = ask(citation_query(text, offset, k=K))
        direct_times.append(elapsed)
        same += direct == papers
        local, _ = ask(Query(title=row.get("citing_title") or "", abstract=row.get("citing_abstract") or "",
                             context=one_mark(row["context"]), k=K))
        same_as_evaluate += local == papers
        overlap.append(len(set(local) & set(papers)) / max(len(local), 1))
    report = {
        "index": str(index), "queries": args.queries or str(CROSSLANG.relative_to(ROOT)), "format": args.format,
        "completions": len(times), "machine": machine.line(before), "load_direct": direct_load,
        "load_after": machine.load(),
        "server_round_trip": percentiles(times), "engine_direct": percentiles(direct_times),
        "same_top10_as_engine": f"{same}/{len(times)}",
        "same_top10_as_evaluate_query": f"{same_as_evaluate}/{len(times)}",
        "mean_top10_overlap_with_evaluate_query": round(float(np.mean(overlap)), 4),
    }
    print(json.dumps(report, indent=1))
    write_json(Path(args.out) if args.out else RESULTS / f"lsp_latency-{Path(index).name}.json", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
