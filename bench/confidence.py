"""Weak-match threshold: how close the best result is for real queries and for nonsense, on the demo corpus.

    python -m bench.confidence [--index DIR] [--json bench/results/confidence.json]

Real queries: every abstract sentence of six words or more of the demo corpus and every title, each run with
its own paper excluded (a draft is not in the corpus it searches); the 80 citation passages of
bench/data/crosslang in English, Chinese and German (passage mode); and a few queries on the corpus's topics in
German, French, Spanish and Chinese (bench/data/confidence/other_languages.json). Nonsense: random letter
strings, salads of everyday English words (the vocabulary of the off-topic texts), off-topic English
(bench/data/confidence/off_topic_en.txt: recipes, sport, weather, travel, ..., whole and sentence by
sentence), and off-topic text in those other languages. The first three content words of each title are
reported too (short keyword queries), not calibrated on.

Each scale's threshold (English: MiniLM cosine; multilingual: a non-English query's cosine under the
multilingual encoder; random strings are often taken for another language) is chosen on a tuning half of each
kind (even positions; xl001-xl040 of the passages) to maximise balanced accuracy, the mean over kinds of the
share judged right, and checked on the other half. The table gives how many queries of each kind
`recommender.pipeline.confidence` flags with its constants.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import string
import sys
import time
from pathlib import Path

import numpy as np

from bench import machine
from recommender.pipeline import confidence
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from workspace.demo import demo_papers, ensure_demo_index

DATA = Path(__file__).resolve().parent / "data" / "confidence"
SEED = 16
RANDOM_QUERIES = 300
REAL_KINDS = ("abstract sentence", "title", "citation passage (en)", "citation passage (zh)",
              "citation passage (de)", "other languages, on topic")
NONSENSE_KINDS = ("random letters", "word salad", "off-topic English", "other languages, off topic")
CROSSLANG = Path(__file__).resolve().parent / "data" / "crosslang" / "queries.jsonl"
CROSSLANG_TUNING_HALF = 40  # xl001-xl040 tune, xl041-xl080 check (bench/data/crosslang, docs/benchmarks.md)
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_STOP = {"a", "an", "the", "of", "for", "and", "in", "on", "to", "with", "by", "from", "via", "as", "at", "is"}


def draft(text: str, own_id: str = "") -> Query:
    """A title-and-abstract query; the paper it was taken from (if any) may not be returned."""
    return Query(abstract=text, k=10, exclude={own_id} if own_id else set())


def real_queries(papers) -> dict[str, list[Query]]:
    sentences = [draft(s, p.id) for p in papers for s in _SENTENCE_RE.split(p.abstract) if len(s.split()) >= 6]
    titles = [draft(p.title, p.id) for p in papers if p.title]
    words = [draft(" ".join([w for w in re.findall(r"[\w-]+", p.title) if w.lower() not in _STOP][:3]), p.id)
             for p in papers if p.title]
    passages = [json.loads(line) for line in CROSSLANG.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {"abstract sentence": sentences, "title": titles, "title words (3)": words,
            **{f"citation passage ({lang})": [Query(context=q[lang], k=10) for q in passages]
               for lang in ("en", "zh", "de")}}


def nonsense_queries(rng: random.Random) -> dict[str, list[Query]]:
    passages = [line.strip() for line in (DATA / "off_topic_en.txt").read_text(encoding="utf-8").splitlines()
                if line.strip()]
    off_topic = passages + [s for p in passages for s in _SENTENCE_RE.split(p) if len(s.split()) >= 4]
    vocabulary = sorted({w.lower() for p in passages for w in re.findall(r"[A-Za-z]{3,}", p)})

    def letters() -> str:
        return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 10)))
                        for _ in range(rng.randint(1, 8)))

    strings = ["zzzzqqq xxyyzz"] + [letters() for _ in range(RANDOM_QUERIES - 1)]
    salads = [" ".join(rng.choices(vocabulary, k=rng.randint(3, 25))) for _ in range(RANDOM_QUERIES)]
    return {"random letters": [draft(q) for q in strings], "word salad": [draft(q) for q in salads],
            "off-topic English": [draft(q) for q in off_topic]}


def other_language_queries() -> dict[str, list[Query]]:
    data = json.loads((DATA / "other_languages.json").read_text(encoding="utf-8"))
    return {"other languages, on topic": [draft(q) for q in data["on_topic"]],
            "other languages, off topic": [draft(q) for q in data["off_topic"]]}


def top_closeness(engine: Recommender, query: Query) -> tuple[float, str, bool]:
    """(best closeness of the ten results, its scale, flagged weak by recommender.pipeline.confidence)."""
    report = confidence.assess(engine, query, engine.recommend(query))
    return report.best, report.scale, report.weak


def best_threshold(real: list[np.ndarray], nonsense: list[np.ndarray]) -> tuple[float, float]:
    """The cosine cut (to 0.01) with the highest balanced accuracy (mean over kinds of the share judged right),
    and that accuracy; a plateau of equal accuracy gives its middle."""
    kinds = [(v, True) for v in real if len(v)] + [(v, False) for v in nonsense if len(v)]
    cuts = np.round(np.arange(0.0, 0.8, 0.01), 2)
    accuracy = np.array([np.mean([np.mean((v >= cut) == is_real) for v, is_real in kinds]) for cut in cuts])
    best = np.flatnonzero(accuracy >= accuracy.max() - 1e-12)
    plateau = best[best - best[0] == np.arange(len(best))]  # the first run of equally good cuts
    return float(np.round(cuts[plateau].mean(), 2)), float(accuracy.max())


def balanced_accuracy(real: list[np.ndarray], nonsense: list[np.ndarray], cut: float) -> float:
    kinds = [np.mean(v >= cut) for v in real if len(v)] + [np.mean(v < cut) for v in nonsense if len(v)]
    return float(np.mean(kinds))


def half(kind: str, tuning: bool) -> slice:
    """The queries of a kind that choose the threshold (tuning) or check it: even and odd positions, or for
    the cross-language passages the set's own halves."""
    if kind.startswith("citation passage"):
        return slice(None, CROSSLANG_TUNING_HALF) if tuning else slice(CROSSLANG_TUNING_HALF, None)
    return slice(0, None, 2) if tuning else slice(1, None, 2)


def on_scale(rows: list[tuple[float, str, bool]], scale: str, half: slice) -> np.ndarray:
    return np.array([cosine for cosine, s, _ in rows[half] if s == scale])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, help="an index directory (default: the demo index)")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "confidence.json")
    args = parser.parse_args()

    started = time.time()
    engine = Recommender.load(args.index or ensure_demo_index())
    kinds = {**real_queries(demo_papers()), **nonsense_queries(random.Random(SEED)), **other_language_queries()}
    rows = {}
    for kind, queries in kinds.items():
        rows[kind] = [top_closeness(engine, query) for query in queries]
        print(f"{kind}: {len(queries)} queries", file=sys.stderr)

    calibration = {}
    for scale in confidence.WEAK_MATCH_COSINE:
        def split(tuning: bool):
            return ([on_scale(rows[k], scale, half(k, tuning)) for k in REAL_KINDS],
                    [on_scale(rows[k], scale, half(k, tuning)) for k in NONSENSE_KINDS])
        cut, accuracy = best_threshold(*split(True))
        constant = confidence.WEAK_MATCH_COSINE[scale]
        calibration[scale] = {"best_cut_tuning_half": cut, "balanced_accuracy_tuning_half": round(accuracy, 4),
                              "constant": constant,
                              "balanced_accuracy_check_half_at_constant":
                                  round(balanced_accuracy(*split(False), constant), 4)}
        print(f"{scale} scale: best cut on the tuning half {cut:.2f} (balanced accuracy {accuracy:.3f}); "
              f"constant {constant:.2f}, balanced accuracy on the check half "
              f"{calibration[scale]['balanced_accuracy_check_half_at_constant']:.3f}")

    table = {}
    print("\n| Queries | Kind | n (English / multilingual scale) | Flagged weak | Best result strong "
          "| Best cosine: p5 / median / p95 |")
    print("|---|---|---|---:|---:|---|")
    for kind, found in rows.items():
        cosines = np.array([c for c, _, _ in found])
        flagged = sum(f for _, _, f in found)
        strong = sum(c >= confidence.STRONG_MATCH_COSINE[s] for c, s, _ in found)
        multilingual = sum(s == "multilingual" for _, s, _ in found)
        p5, p50, p95 = np.percentile(cosines, [5, 50, 95])
        table[kind] = {"queries": len(found), "multilingual_scale": multilingual, "flagged": flagged,
                       "best_result_strong": int(strong),
                       "cosine_p5_p50_p95": [round(float(x), 3) for x in (p5, p50, p95)]}
        role = "real" if kind in REAL_KINDS else "nonsense" if kind in NONSENSE_KINDS else "real (not calibrated on)"
        print(f"| {role} | {kind} | {len(found) - multilingual} / {multilingual} | {flagged} "
              f"({flagged / len(found):.1%}) | {strong / len(found):.0%} | {p5:.2f} / {p50:.2f} / {p95:.2f} |")
    print(f"\n{time.time() - started:.0f} s on {machine.line()}", file=sys.stderr)

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "index": str(args.index or "demo"), "machine": machine.line(),
        "weak_match_cosine": confidence.WEAK_MATCH_COSINE,
        "strong_match_cosine": confidence.STRONG_MATCH_COSINE, "calibration": calibration, "kinds": table,
        "queries": {kind: [[round(c, 4), s] for c, s, _ in found] for kind, found in rows.items()},
    }, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
