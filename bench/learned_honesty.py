"""Does the passage reranker's test foretell its gain on other papers? (issue 31)

    python -m bench.learned_honesty --index IDX/acm-full [--data ../shared/data/acm-cr] [--splits 20]

`train --contexts` tests its model by citing paper (`training/local.py`: 5 folds, each context ranked by a model
that never saw its paper, nDCG@10 against the untrained order) and reports the gain with the interval in which the
gain on as many other papers would fall (a paired bootstrap over citing papers); it keeps the model only when that
interval's lower bound is above zero, and with at least MIN_PAPERS citing papers. This is the outer loop of a nested
cross-validation of that rule: the 25 citing papers of ACM-CR's development half are split into two halves by citing
paper (stratified by venue); the test run on half A's contexts reports a gain, its interval and a decision, the model
trained on all of half A is measured on half B, and the other way round. Split 0 is the one reported; --splits more
random ones give how often the interval held the gain measured on the other half and how often a kept model gained
there. Smaller training sets (--sizes papers, the rest of the 25 measured) show what too few papers do. Two context
files: the paragraphs, and paragraphs with citing sentences (what `contexts` reads from full papers). Pools are
cached in --cache. Writes bench/results/learned_honesty.json.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import pickle
import random
import sys
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import DATA, RESULTS, SCRATCH, need, write_json
from recommender.evaluation.metrics import ndcg_at
from recommender.pipeline.local_features import LOCAL_FEATURES
from recommender.pipeline.recommender import Recommender
from recommender.training.local import (MIN_PAPERS, assess, collect_pools, decide, fit_pools, pool_config, ranked,
                                        read_contexts)

SETS = {"paragraphs": "queries.jsonl.gz", "sentences": "queries_sentences.jsonl.gz"}
FILES = {"paragraphs": ("paragraphs",), "paragraphs + sentences": ("paragraphs", "sentences")}


def venues(path: Path) -> dict[str, str]:
    """Citing paper -> its venue, from a query file."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return {row["citing_id"]: row["citing_venue"] for row in map(json.loads, filter(str.strip, handle))}


def halves(by_venue: dict[str, str], seed: int) -> tuple[list[str], list[str]]:
    """The citing papers in two halves: each venue's papers shuffled, venue after venue, dealt alternately."""
    rng, order = random.Random(seed), []
    for venue in sorted(set(by_venue.values())):
        papers = sorted(p for p, v in by_venue.items() if v == venue)
        rng.shuffle(papers)
        order += papers
    return sorted(order[0::2]), sorted(order[1::2])


class ContextFile:
    """The pools, queries and citing papers of one context file, and the corpus positions of paper ids."""

    def __init__(self, pools, queries, groups, position):
        self.pools, self.queries, self.groups, self.position = pools, queries, groups, position

    def part(self, papers: set[str]):
        rows = [i for i, g in enumerate(self.groups) if g in papers]
        return [self.pools[i] for i in rows], [self.queries[i] for i in rows], [self.groups[i] for i in rows]

    def ndcg(self, pools, queries, scores) -> np.ndarray:
        return np.array([ndcg_at(ranked(p, s), {self.position[r] for r in q.relevant}, 10)
                         for p, q, s in zip(pools, queries, scores)])

    def check(self, train: list[str], test: list[str], seed: int, min_papers: int = MIN_PAPERS) -> dict:
        """The test's report on the `train` papers against the gain measured on the `test` papers of the model fitted
        on all `train` papers (gains relative to the untrained order's nDCG@10 on the same contexts)."""
        pools, queries, groups = self.part(set(train))
        report = assess(pools, queries, groups, self.position, seed=seed)
        base, change = report["fused"]["ndcg@10"], report["ndcg@10_difference"]
        model = fit_pools(pools, seed=seed)
        pools_b, queries_b, _ = self.part(set(test))
        before = self.ndcg(pools_b, queries_b, [p.fused for p in pools_b])
        after = self.ndcg(pools_b, queries_b, [model.score(p.features) if len(p.candidates) else p.fused
                                               for p in pools_b])
        predicted = [round(100 * change[k] / base, 2) for k in ("delta", "low", "high")]
        gain = round(float(100 * (after.mean() / before.mean() - 1)), 2)
        return {"train_papers": len(train), "test_papers": len(test), "train_contexts": len(queries),
                "test_contexts": len(queries_b), "predicted": predicted,
                "decision": decide(report, len(train), min_papers), "measured": gain,
                "inside": bool(predicted[1] <= gain <= predicted[2])}


def load_files(args) -> tuple[dict[str, ContextFile], dict[str, str]]:
    """The two context files over the index's pools (collected once, then cached), and each citing paper's venue."""
    rec = Recommender.load(args.index)
    if rec.local_reranker is not None:
        raise SystemExit(f"{args.index} holds a passage reranker: give an index without one (the untrained order)")
    index = rec.index
    contexts = {name: read_contexts(args.data / file, index) for name, file in SETS.items()}
    key = hashlib.sha256(json.dumps([index.version.name, [c.sha256 for c in contexts.values()], LOCAL_FEATURES,
                                     repr(pool_config())]).encode()).hexdigest()[:16]
    args.cache.mkdir(parents=True, exist_ok=True)
    pools = {}
    for name, context_set in contexts.items():
        path = args.cache / f"pools-{name}-{key}.pkl"
        if not path.is_file():
            started = time.time()
            path.write_bytes(pickle.dumps(collect_pools(rec, context_set.queries, progress=False)))
            print(f"{name}: {len(context_set.queries)} pools in {time.time() - started:.0f} s", file=sys.stderr)
        pools[name] = pickle.loads(path.read_bytes())
    files = {name: ContextFile([p for s in sets for p in pools[s]], [q for s in sets for q in contexts[s].queries],
                               [g for s in sets for g in contexts[s].groups], index.position)
             for name, sets in FILES.items()}
    by_venue = {**venues(args.data / SETS["sentences"]), **venues(args.data / SETS["paragraphs"])}
    return files, by_venue


def rates(checks: list[dict]) -> dict:
    """How often the interval held the other half's gain, and what the kept models gained there."""
    kept = [c for c in checks if c["decision"] == "kept"]
    return {"checks": len(checks), "inside": sum(c["inside"] for c in checks),
            "below": sum(c["measured"] < c["predicted"][1] for c in checks),
            "above": sum(c["measured"] > c["predicted"][2] for c in checks),
            "kept": len(kept), "kept_gained": sum(c["measured"] > 0 for c in kept),
            "mean_measured_when_kept": round(float(np.mean([c["measured"] for c in kept])), 2) if kept else None,
            "mean_predicted": round(float(np.mean([c["predicted"][0] for c in checks])), 2),
            "mean_measured": round(float(np.mean([c["measured"] for c in checks])), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True, help="an ACM-CR index without a passage reranker")
    parser.add_argument("--data", type=Path, default=DATA / "acm-cr", help="the ACM-CR folder (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=SCRATCH / "learned_honesty", help="pools between runs")
    parser.add_argument("--splits", type=int, default=20, help="random halves after the first (default 20)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[3, 6], help="smaller training sets (papers)")
    parser.add_argument("--draws", type=int, default=10, help="random training sets per size (default 10)")
    parser.add_argument("--json", type=Path, default=RESULTS / "learned_honesty.json")
    args = parser.parse_args()
    need(parser, args.index, "--index", "DIR (an ACM-CR index)")
    for file in SETS.values():
        need(parser, args.data / file, "--data", "DIR (the ACM-CR folder of the shared data)")
    started = time.time()
    files, by_venue = load_files(args)
    papers = sorted(by_venue)

    report = {"index": str(args.index), "papers": len(papers), "min_papers": MIN_PAPERS, "files": {}}
    for name, file in files.items():
        a, b = halves(by_venue, 0)
        first = {"A": a, "B": b, "A→B": file.check(a, b, 0), "B→A": file.check(b, a, 0)}
        splits = []
        for seed in range(1, args.splits + 1):
            a2, b2 = halves(by_venue, seed)
            splits += [file.check(a2, b2, seed), file.check(b2, a2, seed)]
        small = {}
        for size in args.sizes:
            rng = random.Random(size)
            runs = []
            for draw in range(args.draws):
                train = sorted(rng.sample(papers, size))
                runs.append(file.check(train, [p for p in papers if p not in train], draw, min_papers=2))
            small[size] = {"runs": runs, **rates(runs)}
        pools, queries, groups = file.part(set(papers))
        whole = assess(pools, queries, groups, file.position)  # what `train --contexts` reports on all 25
        whole["decision"] = decide(whole, len(papers))
        report["files"][name] = {"contexts": len(file.queries), "all_papers": whole, "halves": first, "splits": splits,
                                 "splits_summary": rates(splits), "smaller": small}
        print(f"{name}: done at {time.time() - started:.0f} s", file=sys.stderr)
    report.update({"seconds": round(time.time() - started), "machine": machine.line(),
                   "date": time.strftime("%Y-%m-%d")})
    write_json(args.json, report, say=False)

    for name, result in report["files"].items():
        whole = result["all_papers"]
        base, change = whole["fused"]["ndcg@10"], whole["ndcg@10_difference"]
        print(f"\n### {name} ({result['contexts']} contexts)\n\nall {whole['papers']} papers: nDCG@10 {base:.4f} untrained, "
              f"{whole['learned']['ndcg@10']:.4f} learned, {100 * change['delta'] / base:+.1f}% "
              f"({100 * change['low'] / base:+.1f}% to {100 * change['high'] / base:+.1f}%): {whole['decision']}\n")
        print("| tested on | reported gain (95% interval for as many other papers) | decision | "
              "measured on the other half | inside |\n| --- | ---: | --- | ---: | --- |")
        for direction in ("A→B", "B→A"):
            c = result["halves"][direction]
            print(f"| {direction[0]} ({c['train_papers']} papers, {c['train_contexts']} contexts) | "
                  f"{c['predicted'][0]:+.1f}% ({c['predicted'][1]:+.1f}% to {c['predicted'][2]:+.1f}%) | "
                  f"{c['decision']} | {c['measured']:+.1f}% on {direction[-1]} ({c['test_papers']} papers, "
                  f"{c['test_contexts']} contexts) | {'yes' if c['inside'] else 'no'} |")
        rows = [(f"{size} papers", s) for size, s in result["smaller"].items()]
        rows += [("halves (12 or 13 papers)", result["splits_summary"])] if result["splits"] else []
        print("\n| training papers | checks | measured inside / below / above | mean reported | mean measured | "
              "kept (smaller sets: by the interval alone) | kept that gained |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for label, s in rows:
            print(f"| {label} | {s['checks']} | {s['inside']} / {s['below']} / {s['above']} | "
                  f"{s['mean_predicted']:+.1f}% | {s['mean_measured']:+.1f}% | {s['kept']} | {s['kept_gained']} |")
    print(f"\n{report['seconds']} s; {report['machine']}", file=sys.stderr)


if __name__ == "__main__":
    main()
