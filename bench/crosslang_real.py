"""Cross-language quality on real citation contexts: ACM-CR development paragraphs and sentences as researchers
write them in Chinese and German (`../shared/data/acm-cr-translated`), against the same contexts in English.

Each context is asked in local mode with the default pipeline (diversity 0, depth 100), alone and with the citing
paper's English title and abstract. A language's share is its R@10 over the English contexts' R@10 on the same
contexts and index. The 25 citing papers are split into a tuning half (13) and a reporting half (12): sorted by a hash
of the citing id, alternately; settings may be chosen on the tuning half only. 95%
intervals of the share: 2,000 draws of the half's citing papers with replacement (all their contexts).

    python -m bench.crosslang_real --data ../shared/data                    # pool: cited papers + 8,000 (seed 7)
    python -m bench.crosslang_real --data ../shared/data --index IDX/acm-full-ml --pool 0   # a multilingual full index

The pool's index is built on first use into --index-dir (multilingual field and glossary); nothing derived from the
data is written into the checkout unless --json names a file there (aggregates only).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import INDEXES, need, write_json
from recommender.config import DEFAULT
from recommender.corpus.loaders import load_corpus
from recommender.evaluation.metrics import ndcg_at, recall_at
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store.build import build_index
from recommender.store.versions import IndexDirectoryError, current_version

LANGUAGES = ("en", "zh", "de")
DEPTH, K, DRAWS = 100, 10, 2000
TARGET = 0.85


def read_contexts(folder: Path) -> dict[str, list[dict]]:
    """The contexts of each language, in the same order."""
    out = {}
    for lang in LANGUAGES:
        with gzip.open(folder / f"queries_{lang}.jsonl.gz", "rt", encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        for row in rows:
            if isinstance(row["relevant"], str):
                row["relevant"] = json.loads(row["relevant"].replace("'", '"'))
        out[lang] = rows
    if len({len(rows) for rows in out.values()}) != 1:
        raise SystemExit("the language files hold different numbers of contexts")
    return out


def tuning_half(contexts: list[dict]) -> set[str]:
    """Every other citing paper in the order of a hash of its id: the half settings may be chosen on."""
    papers = sorted({row["citing_id"] for row in contexts}, key=lambda p: hashlib.sha1(p.encode("utf-8")).hexdigest())
    return set(papers[::2])


def open_pool(corpus: Path, root: Path, size: int, seed: int, contexts: list[dict]) -> Recommender:
    """A multilingual index of the cited papers plus `size` others (seeded), built on first use."""
    try:
        current_version(root)
    except IndexDirectoryError:
        papers = load_corpus(corpus).papers
        cited = {pid for row in contexts for pid in row["relevant"]}
        chosen = [p for p in papers if p.id in cited]
        rest = [p for p in papers if p.id not in cited]
        chosen += random.Random(seed).sample(rest, min(size, len(rest)))
        print(f"indexing {len(chosen)} papers into {root}", file=sys.stderr)
        build_index(chosen, root, multilingual=True, progress_bar=True,
                    source={"file": str(corpus), "pool": size, "seed": seed})
    return Recommender.load(root)


def rank_all(recommender: Recommender, contexts: dict[str, list[dict]], with_draft: bool) -> dict[str, list]:
    """Per language, per context: (citing id, R@10, nDCG@10), or None when the index holds none of its papers."""
    ids = recommender.index.ids
    known = set(ids)
    config = DEFAULT.with_(diversity=0.0, pool=max(DEFAULT.pool, DEPTH))
    out = {}
    for lang, rows in contexts.items():
        scored = []
        for row in rows:
            relevant = set(row["relevant"]) & known
            if not relevant:
                scored.append(None)
                continue
            query = Query(context=row["context"], k=DEPTH, exclude={row["citing_id"]},
                          title=row["citing_title"] if with_draft else "",
                          abstract=row["citing_abstract"] if with_draft else "")
            ranked = [ids[p] for p in recommender.rank(query, config, k=DEPTH).positions]
            scored.append((row["citing_id"], recall_at(ranked, relevant, K), ndcg_at(ranked, relevant, K)))
        out[lang] = scored
    return out


def shares(scored: dict[str, list], keep) -> dict:
    """Mean R@10 and nDCG@10 per language over the contexts whose citing paper `keep` accepts, and each other
    language's R@10 share of English with a 95% interval over citing papers."""
    rows = [i for i, s in enumerate(scored["en"]) if s is not None and keep(s[0])]
    papers = sorted({scored["en"][i][0] for i in rows})
    by_paper = {p: [i for i in rows if scored["en"][i][0] == p] for p in papers}
    arrays = {lang: np.array([[scored[lang][i][1], scored[lang][i][2]] for i in rows]) for lang in scored}
    out = {"contexts": len(rows), "citing_papers": len(papers)}
    for lang, values in arrays.items():
        out[lang] = {"R@10": round(float(values[:, 0].mean()), 4), "nDCG@10": round(float(values[:, 1].mean()), 4)}
    rng = np.random.default_rng(0)
    position = {i: n for n, i in enumerate(rows)}
    draws = [[position[i] for p in rng.choice(papers, len(papers)) for i in by_paper[p]] for _ in range(DRAWS)]
    english = arrays["en"][:, 0]
    for lang in scored:
        if lang == "en":
            continue
        mine = arrays[lang][:, 0]
        ratios = [mine[d].mean() / english[d].mean() for d in draws if english[d].mean() > 0]
        out[lang]["share_of_english"] = round(float(mine.mean() / english.mean()), 3) if english.mean() else 0.0
        out[lang]["share_95"] = [round(float(np.percentile(ratios, q)), 3) for q in (2.5, 97.5)]
    return out


def report(results: dict) -> str:
    lines = ["| query | half (papers, contexts) | en R@10 | zh R@10 | de R@10 | zh share [95%] | de share [95%] |",
             "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    for form, halves in results.items():
        for half, m in halves.items():
            cells = " | ".join(f"{m[lang]['R@10']:.3f}" for lang in LANGUAGES)
            share = " | ".join(f"**{m[lang]['share_of_english']:.2f}** [{m[lang]['share_95'][0]:.2f}, "
                               f"{m[lang]['share_95'][1]:.2f}]" for lang in ("zh", "de"))
            lines.append(f"| {form} | {half} ({m['citing_papers']}, {m['contexts']}) | {cells} | {share} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="the shared data folder (acm-cr, acm-cr-translated)")
    parser.add_argument("--index", type=Path, help="a multilingual index to use (default: the pool's, built here)")
    parser.add_argument("--index-dir", type=Path, default=INDEXES / "crosslang_real")
    parser.add_argument("--pool", type=int, default=8000, help="papers besides the cited ones (0 with --index)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--granularity", choices=("paragraph", "sentence", "both"), default="both")
    parser.add_argument("--json", type=Path, help="write the aggregates here")
    args = parser.parse_args(argv)
    data = need(parser, args.data, "--data", "the shared data folder")
    contexts = read_contexts(need(parser, data / "acm-cr-translated", "--data", "a folder with acm-cr-translated/"))
    if args.granularity != "both":
        keep = [i for i, row in enumerate(contexts["en"]) if row["granularity"] == args.granularity]
        contexts = {lang: [rows[i] for i in keep] for lang, rows in contexts.items()}
    if args.index:
        recommender = Recommender.load(args.index)
    else:
        root = args.index_dir / f"pool{args.pool}-seed{args.seed}"
        corpus = need(parser, data / "acm-cr" / "corpus.jsonl.gz", "--data", "a folder with acm-cr/corpus.jsonl.gz")
        recommender = open_pool(corpus, root,
                                args.pool, args.seed, contexts["en"])
    tune, results, started = tuning_half(contexts["en"]), {}, time.time()
    for form, with_draft in (("context alone", False), ("context + title and abstract", True)):
        scored = rank_all(recommender, contexts, with_draft)
        results[form] = {"tune": shares(scored, lambda p: p in tune),
                         "report": shares(scored, lambda p: p not in tune),
                         "all": shares(scored, lambda p: True)}
    print(report(results))
    print(f"{len(recommender.index.ids):,} papers; {time.time() - started:.0f} s", file=sys.stderr)
    if args.json:
        write_json(args.json, {"machine": machine.describe(), "papers": len(recommender.index.ids),
                               "granularity": args.granularity, "target": TARGET, "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
