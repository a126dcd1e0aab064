"""Choose the weights of a glossed non-English query: BM25 on the gloss (`w_lexical_multilingual`) and the
English encoder on the gloss (`w_gloss`), next to the multilingual field (`w_dense`).

Grid search on the first half of the cross-language query set (xl001-xl040; mean R@10 of Chinese and German,
then MRR); the second half (xl041-xl080) is reported alongside as a check, never used to choose. Full pipeline (graph expansion on), depth 100.

    python -m bench.crosslang_weights --index IDX/acm_demo_ml
    python -m bench.crosslang_weights --index IDX/acm_demo_ml --vocabulary 50000 30000 20000 10000

`--vocabulary N ...` instead compares glossary sizes at the default weights: the index's glossary cut to its
N most frequent words (what an index built with that size would hold), on the whole query set.
"""
from __future__ import annotations

import argparse
import itertools
import os
from pathlib import Path

from bench.crosslang import QUERIES, read_queries
from bench.paths import need
from recommender.config import DEFAULT
from recommender.evaluation.metrics import summarize
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store.gloss import Glossary

LEXICAL = (0.0, 0.1, 0.2, 0.3)
GLOSS = (0.0, 0.1, 0.2, 0.3, 0.4)
DEPTH = 100


def evaluate(recommender: Recommender, queries: list[dict], lang: str, config) -> dict[str, dict]:
    """R@10 and MRR on each half of the query set."""
    halves: dict[str, list] = {"A": [], "B": []}
    for row in queries:
        relevant = set(row["relevant"]) & set(recommender.index.position)
        ranking = recommender.rank(Query(context=row[lang], k=DEPTH), config, k=DEPTH)
        ranked = [recommender.index.ids[p] for p in ranking.positions]
        halves["A" if row["qid"] <= "xl040" else "B"].append((ranked, relevant))
    return {half: summarize(runs, cutoffs=(10,)) for half, runs in halves.items()}


def compare_sizes(recommender: Recommender, queries: list[dict], sizes: list[int]) -> None:
    full = recommender.index.glossary
    config = DEFAULT.with_(pool=max(DEFAULT.pool, DEPTH), diversity=0.0)
    for size in sizes:
        recommender.index.glossary = Glossary(full.words[:size], full.vectors[:size])
        recommender.clear_caches()
        scores = {lang: evaluate(recommender, queries, lang, config) for lang in ("zh", "de")}
        print(f"{size} words: " + "  ".join(
            f"{lang} R@10 {(s['A']['recall@10'] + s['B']['recall@10']) / 2:.3f}" for lang, s in scores.items()),
            flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="a multilingual index holding the demo corpus")
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--vocabulary", type=int, nargs="+", help="compare these glossary sizes instead")
    args = parser.parse_args(argv)
    need(parser, args.index, "--index", "DIR (a multilingual index holding the demo corpus)")
    need(parser, args.queries, "--queries", "FILE (the cross-language passages)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    recommender = Recommender.load(args.index)
    queries = read_queries(args.queries)
    if args.vocabulary:
        compare_sizes(recommender, queries, args.vocabulary)
        return 0
    rows = []
    for lexical, gloss in itertools.product(LEXICAL, GLOSS):
        config = DEFAULT.with_(w_lexical_multilingual=lexical, w_gloss=gloss, pool=max(DEFAULT.pool, DEPTH),
                               diversity=0.0)
        scores = {lang: evaluate(recommender, queries, lang, config) for lang in ("zh", "de")}
        mean_a = tuple(sum(s["A"][m] for s in scores.values()) / len(scores) for m in ("recall@10", "mrr"))
        rows.append((mean_a, lexical, gloss, scores))
        print(f"lexical {lexical:.1f} gloss {gloss:.1f}: " + "  ".join(
            f"{lang} R@10 A {s['A']['recall@10']:.3f} B {s['B']['recall@10']:.3f} MRR A {s['A']['mrr']:.3f} "
            f"B {s['B']['mrr']:.3f}" for lang, s in scores.items()), flush=True)
    best = max(rows, key=lambda row: row[0])  # R@10, then MRR
    print(f"\nbest on half A (mean of zh and de: R@10 {best[0][0]:.3f}, MRR {best[0][1]:.3f}): "
          f"w_lexical_multilingual {best[1]}, w_gloss {best[2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
