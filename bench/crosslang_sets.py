"""Cross-language quality on both passage sets: the project's one-paper passages (`queries.jsonl`) and the harder
related-work passages with several citations each (`hard.jsonl`), English pipeline vs multilingual pipeline.

For each set and language it reports R@10 and MRR (depth 100, full pipeline, no diversity) of

  en  with the English pipeline          (multilingual="off": the reference)
  zh / de with the English pipeline      (multilingual="off")
  zh / de with the multilingual pipeline (multilingual="auto")

and the ratio of the multilingual R@10 to the English passages' R@10 (issue 17's goal: >= 0.70 on the hard set).
Each set is reported by half: the old set by the halves its README describes (xl001-040 / xl041-080), the hard
set by its `split` field (dev: the odd passages, used to tune; test: the even ones, reported and never tuned on).

    python -m bench.crosslang_sets                                    # the demo pool (built on first use)
    python -m bench.crosslang_sets --index IDX/crosslang/demo+acm4000 --json out.json   # another pool

`--index` takes any multilingual index that holds the demo corpus (for example one built by
`python -m bench.crosslang --acm ... --acm-sample N --build-only`).
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bench import machine
from bench import crosslang
from bench.crosslang import DEMO_CORPUS, INDEX_DIR, QUERIES, ensure_index, read_queries
from bench.paths import need, write_json
from recommender.config import DEFAULT
from recommender.evaluation.metrics import summarize
from recommender.pipeline.recommender import Recommender
from recommender.query import Query

HARD = QUERIES.parent / "hard.jsonl"
DEPTH = crosslang.DEPTH
RUNS = [run for run in crosslang.RUNS if run[2] != "on"]  # (name, language, multilingual): the forced field left out
TARGET = 0.70


def half_of(row: dict) -> str:
    """The part of its set a passage belongs to: the hard set's `split`, else the old set's half."""
    return row.get("split") or ("xl001-040" if row["qid"] <= "xl040" else "xl041-080")


def run_set(recommender: Recommender, rows: list[dict], languages: tuple[str, ...] = ("en", "zh", "de"),
            config=DEFAULT) -> dict:
    """R@10 and MRR per run and per half (and over the whole set)."""
    ids = set(recommender.index.ids)
    out = {}
    for name, lang, mode in RUNS:
        if lang not in languages:
            continue
        cfg = config.with_(multilingual=mode, pool=max(config.pool, DEPTH), diversity=0.0)
        runs: dict[str, list] = {}
        for row in rows:
            relevant = set(row["relevant"]) & ids
            if not relevant:
                continue
            ranking = recommender.rank(Query(context=row[lang], k=DEPTH), cfg, k=DEPTH)
            ranked = [recommender.index.ids[p] for p in ranking.positions]
            runs.setdefault(half_of(row), []).append((ranked, relevant))
        runs["all"] = [run for half in list(runs) for run in runs[half]]
        out[name] = {}
        for half, half_runs in runs.items():
            metrics = summarize(half_runs, cutoffs=(10,))
            out[name][half] = {"queries": len(half_runs), "recall@10": metrics["recall@10"], "mrr": metrics["mrr"]}
    return out


def ratios(results: dict) -> dict:
    """Multilingual R@10 over the English passages' R@10, per language and half."""
    english = results["en / English pipeline"]
    return {lang: {half: (m["recall@10"] / english[half]["recall@10"] if english[half]["recall@10"] else 0.0)
                   for half, m in results[f"{lang} / multilingual pipeline"].items()}
            for lang in ("zh", "de") if f"{lang} / multilingual pipeline" in results}


def table(results: dict, halves: list[str]) -> str:
    head = " | ".join(f"{h} R@10 | {h} MRR" for h in halves)
    lines = [f"| queries / pipeline | {head} |", "| --- |" + " ---: |" * (2 * len(halves))]
    for name, by_half in results.items():
        cells = " | ".join(f"{by_half[h]['recall@10']:.3f} | {by_half[h]['mrr']:.3f}" for h in halves)
        lines.append(f"| {name} | {cells} |")
    for lang, by_half in ratios(results).items():
        cells = " | ".join(f"**{by_half[h]:.2f}** | " for h in halves)
        lines.append(f"| {lang}: multilingual R@10 / English R@10 | {cells}|")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="a multilingual index holding the demo corpus "
                        f"(default: the demo pool, built under {INDEX_DIR / 'demo'} on first use)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.index:
        need(parser, args.index, "--index", "DIR (a multilingual index holding the demo corpus)")
    root = args.index or ensure_index(INDEX_DIR / "demo", [DEMO_CORPUS], {}, None)
    recommender = Recommender.load(root)
    report = {"date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
              "index": str(root), "papers": len(recommender.index), "depth": DEPTH, "sets": {}}
    for name, path in (("one-paper passages (queries.jsonl)", QUERIES), ("hard passages (hard.jsonl)", HARD)):
        rows = read_queries(path)
        started = time.time()
        results = run_set(recommender, rows)
        halves = sorted({half_of(r) for r in rows}) + ["all"]
        report["sets"][name] = {"results": results, "ratio_of_english_r@10": ratios(results)}
        print(f"\n### {name}, {len(recommender.index)} papers ({time.time() - started:.0f} s)\n")
        print(table(results, halves), flush=True)
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
