"""Uncited claims that ask the corpus: the closeness weights of `recommender.review.claims`, chosen and checked on ACM-CR.

    python -m bench.claims_evidence --index IDX/acm-full [--data ../shared/data]

Labelled sentences are made at run time from the development paragraphs of ACM-CR (`queries.jsonl.gz`): a
sentence holding a citation is positive, the paragraph's other sentences negative (markers removed, as in
bench/claims.py). Each sentence asks the full index for its nearest papers, as a review does, never among
the papers its submission still cites: a negative sentence's submission cites every paper of its citing paper;
a positive one lost the citations of its own paragraph (as a reviewer sees a removed citation).

The citing papers are split in two halves (bench/claims.py's hash): the weights (GRID) are chosen on one ("tune": the
most positives flagged at CLAIM_THRESHOLD with no more flags on negative sentences per 1,000 words than the
cues alone; among ties, the first in grid order) and reported on the other ("check"), with 95% intervals over
papers.
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.claims import is_development, labelled_sentences
from bench.paths import DATA, need
from recommender.review.claims import CLAIM_THRESHOLD, EVIDENCE_WEIGHTS, ClaimScorer, corpus_evidence
from recommender.pipeline.recommender import Recommender
from recommender.review.document import PLACE_K

GRID = {"closeness": [0.0, 1.0, 2.0, 3.0, 4.0], "close": [0.5, 0.55, 0.6, 0.65, 0.7],
        "paraphrase": [0.0, 10.0, 20.0, 40.0, 80.0], "paraphrase_cosine": [0.65, 0.7, 0.75, 0.8],
        "distinct": [0.0, 10.0, 20.0, 40.0], "distinct_margin": [0.1, 0.15, 0.2, 0.3]}


def sentences(data: Path, recommender: Recommender) -> list[dict]:
    """Each labelled sentence with its paper, words, cue-only score and retrieval evidence."""
    rows = [json.loads(line) for line in gzip.open(data / "acm-cr" / "queries.jsonl.gz", "rt")]
    cited_by_paper: dict[str, set[str]] = {}
    for row in rows:
        cited_by_paper.setdefault(row["citing_id"], set()).update(row["relevant"])
    out = []
    for row in rows:
        labelled = labelled_sentences(row["context"])
        for positive in (True, False):
            texts = [text for text, cited in labelled if cited == positive]
            exclude = cited_by_paper[row["citing_id"]] - (set(row["relevant"]) if positive else set())
            for text, (_, cosines) in zip(texts, recommender.nearest_papers(texts, exclude, PLACE_K)):
                cosines = list(cosines) + [0.0, 0.0]
                out.append({"paper": row["citing_id"], "positive": positive, "words": len(text.split()),
                            "cue": ClaimScorer().score([text])[0],
                            "closeness": float(cosines[0]), "margin": float(cosines[0] - cosines[1])})
    return out


def scores(rows: list[dict], *weights: float) -> np.ndarray:
    """Claim scores with the corpus evidence weighed by `weights` (GRID's order, as `claims.EVIDENCE_WEIGHTS`)."""
    logits = np.array([math.log(r["cue"] / (1 - r["cue"])) + corpus_evidence(r["closeness"], r["margin"], weights)
                       for r in rows])
    return 1 / (1 + np.exp(-logits))


def measure(rows: list[dict], values: np.ndarray) -> dict:
    positive = np.array([r["positive"] for r in rows])
    flagged = values >= CLAIM_THRESHOLD
    words = sum(r["words"] for r, p in zip(rows, positive) if not p)
    return {"flagged_positives": float(flagged[positive].mean()),
            "false_flags_per_1000_words": 1000 * float(flagged[~positive].sum()) / max(words, 1)}


def interval(rows: list[dict], values: np.ndarray, key: str, rounds: int = 1000) -> list[float]:
    rng = np.random.default_rng(0)
    papers = sorted({r["paper"] for r in rows})
    by_paper = {p: [i for i, r in enumerate(rows) if r["paper"] == p] for p in papers}
    found = []
    for _ in range(rounds):
        picked = [i for k in rng.integers(0, len(papers), len(papers)) for i in by_paper[papers[k]]]
        found.append(measure([rows[i] for i in picked], values[picked])[key])
    return [float(np.percentile(found, 2.5)), float(np.percentile(found, 97.5))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--index", type=Path, required=True, help="the full ACM-CR index")
    args = parser.parse_args(argv)
    need(parser, args.data / "acm-cr" / "queries.jsonl.gz", "--data", "DIR (the shared benchmark data, with acm-cr/)")
    need(parser, args.index, "--index", "DIR (the full ACM-CR index)")
    started = time.time()
    rows = sentences(args.data, Recommender.load(args.index))
    tune = [r for r in rows if is_development(r["paper"])]
    check = [r for r in rows if not is_development(r["paper"])]
    none = (0.0, 0.0, 0.0, 1.0, 0.0, 1.0)
    cues_only = measure(tune, scores(tune, *none))
    best, best_recall = none, -1.0
    for weights in itertools.product(*GRID.values()):
        found = measure(tune, scores(tune, *weights))
        if found["false_flags_per_1000_words"] <= cues_only["false_flags_per_1000_words"] and \
                found["flagged_positives"] > best_recall:
            best, best_recall = weights, found["flagged_positives"]
    shipped = EVIDENCE_WEIGHTS
    report = {"machine": machine.line(), "date": time.strftime("%Y-%m-%d"),
              "sentences": {"tune": len(tune), "check": len(check)},
              "positives": {"tune": sum(r["positive"] for r in tune), "check": sum(r["positive"] for r in check)},
              "chosen_on_tune": dict(zip(GRID, best)), "shipped": dict(zip(GRID, shipped))}
    for name, weights in (("cues only", none), ("chosen", best), ("shipped", shipped)):
        for half_name, half in (("tune", tune), ("check", check)):
            values = scores(half, *weights)
            found = measure(half, values)
            if half_name == "check":
                found["flagged_positives_interval"] = interval(half, values, "flagged_positives")
            report[f"{name} / {half_name}"] = found
    report["seconds"] = round(time.time() - started, 1)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
