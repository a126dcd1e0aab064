"""Uncited claims: does `recommender.review.claims` pick out the sentences that authors cite?

    python -m bench.claims [DATA] [--json OUT] [--tune]

DATA is the unarXive sample (default: ../shared/data/unarxive-sample beside the checkout). Labelled sentences are
made at run time, never stored: every paragraph of `queries.jsonl.gz` (one copy per paper) is split with
`recommender.review.claims.split_sentences`; a sentence holding a citation (a `[CIT]`, or a `\\cite{...}` that
unarXive left unlinked) is positive, the paragraph's other sentences are negative. The markers, and the
brackets and "see also" they leave empty, are removed before a sentence is scored, and cross-references
("Theorem REF") read "Theorem 1" as in a real draft. Sentences of fewer than three words are left out.

Papers are split by `citing_id` (parity of a SHA-1 of the id) into a development half, on which the
scorer's weights and `CLAIM_THRESHOLD` were chosen, and a held-out half, which is reported. Both halves are
scored by the shipped scorer and by a keyword baseline (a sentence is flagged when it holds one of a short
list of cue words; its count of such words ranks sentences for average precision). `--tune` fits the
scorer's cue-group weights and threshold on the development half only and prints them; nothing is written.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import average_precision_score, precision_recall_fscore_support

from bench import machine
from bench.paths import DATA
from recommender.review.claims import CLAIM_THRESHOLD, ClaimScorer, split_sentences

DEFAULT_DATA = DATA / "unarxive-sample"
_CITATION = re.compile(r"\[CIT\]|\\cite[a-zA-Z]*\*?\s*(?:\[[^\]]*\]\s*)*\{[^}]*\}")
_EMPTY_BRACKETS = re.compile(r"[(\[]\s*(?:(?:see|e\.g\.|cf\.|also|and|and references therein|for example)"
                             r"[\s,;.]*)*[)\]]", re.IGNORECASE)
_CROSS_REFERENCE = re.compile(r"\bREF\b")
BASELINE_CUES = ("et al", "proposed", "previous", "prior", "recent", "shown", "studied", "known",
                 "introduced", "literature", "reported", "widely", "state of the art", "state-of-the-art")


def load_paragraphs(folder: Path) -> dict[str, list[str]]:
    """Each citing paper's distinct paragraphs, in file order."""
    papers: dict[str, list[str]] = {}
    with gzip.open(folder / "queries.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            paragraphs = papers.setdefault(row["citing_id"], [])
            if row["paragraph"] not in paragraphs:
                paragraphs.append(row["paragraph"])
    return papers


def clean(sentence: str) -> str:
    """The sentence as the scorer may see it: citations removed, cross-references numbered."""
    return tidy(_CITATION.sub(" ", sentence))


def tidy(text: str) -> str:
    """Text as its authors wrote it, where a data set took its citations or cross-references out: brackets left
    empty ("(see )") removed, spaces before punctuation closed ("theory ."), "Theorem REF" read "Theorem 1"."""
    text = _EMPTY_BRACKETS.sub(" ", text)
    text = _CROSS_REFERENCE.sub("1", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,;:)])", r"\1", text)
    return re.sub(r"[,;]+(?=[.,;:])", "", text.replace("( ", "("))


def labelled_sentences(paragraph: str) -> list[tuple[str, bool]]:
    """(cleaned sentence, whether the author cited in it) for each sentence of three words or more."""
    result = []
    for _, _, sentence in split_sentences(paragraph):
        text = clean(sentence)
        if len(text.split()) >= 3:
            result.append((text, bool(_CITATION.search(sentence))))
    return result


def is_development(citing_id: str) -> bool:
    """The fixed half of the papers on which weights and threshold may be chosen."""
    return hashlib.sha1(citing_id.encode("utf-8")).digest()[0] % 2 == 0


def baseline_scores(sentences: list[str]) -> list[float]:
    """How many of the baseline's cue words a sentence holds."""
    return [float(sum(cue in s.lower() for cue in BASELINE_CUES)) for s in sentences]


def metrics(labels: list[bool], scores: list[float], threshold: float) -> dict[str, float]:
    """Precision, recall and F1 of `score > threshold`, and average precision of the ranking."""
    y = np.asarray(labels, dtype=bool)
    predicted = np.asarray(scores) > threshold
    precision, recall, f1, _ = precision_recall_fscore_support(y, predicted, average="binary", zero_division=0)
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1),
            "average_precision": float(average_precision_score(y, scores)), "flagged": int(predicted.sum())}


class Half:
    """The labelled sentences of one half of the papers, with the paper each comes from."""

    def __init__(self) -> None:
        self.sentences: list[str] = []
        self.labels: list[bool] = []
        self.papers: list[str] = []


def halves(folder: Path) -> dict[str, Half]:
    """{"development": Half, "held-out": Half} from the benchmark's paragraphs."""
    result = {"development": Half(), "held-out": Half()}
    for citing_id, paragraphs in load_paragraphs(folder).items():
        half = result["development" if is_development(citing_id) else "held-out"]
        for paragraph in paragraphs:
            for sentence, cited in labelled_sentences(paragraph):
                half.sentences.append(sentence)
                half.labels.append(cited)
                half.papers.append(citing_id)
    return result


def paper_bootstrap(half: Half, scores: list[float], baseline: list[float], rounds: int = 1000) -> dict:
    """95% intervals, over papers drawn with replacement, of the scorer's AP and of its lead over the baseline."""
    rng = np.random.default_rng(12)
    ids = sorted(set(half.papers))
    rows = {i: np.flatnonzero(np.asarray(half.papers) == i) for i in ids}
    y, a, b = np.asarray(half.labels), np.asarray(scores), np.asarray(baseline)
    ap, lead = [], []
    for _ in range(rounds):
        picked = np.concatenate([rows[ids[k]] for k in rng.integers(0, len(ids), len(ids))])
        if y[picked].any():
            ap.append(average_precision_score(y[picked], a[picked]))
            lead.append(ap[-1] - average_precision_score(y[picked], b[picked]))
    return {"average_precision": [float(np.percentile(ap, 2.5)), float(np.percentile(ap, 97.5))],
            "lead_over_baseline": [float(np.percentile(lead, 2.5)), float(np.percentile(lead, 97.5))]}


def best_threshold(labels: list[bool], scores: list[float]) -> float:
    """The threshold (steps of 0.05) with the best F0.5 (precision counts twice) on these sentences."""
    y = np.asarray(labels, dtype=bool)
    best, best_value = 0.5, -1.0
    for threshold in np.arange(0.05, 0.951, 0.05):
        flagged = np.asarray(scores) > threshold
        hits = int((flagged & y).sum())
        precision, recall = hits / max(int(flagged.sum()), 1), hits / max(int(y.sum()), 1)
        value = 1.25 * precision * recall / max(0.25 * precision + recall, 1e-12)
        if value > best_value + 1e-9:
            best, best_value = round(float(threshold), 2), value
    return best


def tune(half: Half) -> None:
    """Print cue-group weights fitted on the development half, and the threshold for the shipped scorer."""
    from sklearn.linear_model import LogisticRegression

    scorer = ClaimScorer()
    rows = [scorer.features(s) for s in half.sentences]
    names = list(rows[0])
    model = LogisticRegression(C=1.0, max_iter=1000).fit([[r[n] for n in names] for r in rows], half.labels)
    weights = {"bias": round(float(model.intercept_[0]), 1)}
    weights.update({n: round(float(w), 1) for n, w in zip(names, model.coef_[0])})
    print("weights fitted on the development half:", json.dumps(weights))
    print("F0.5-best threshold of the shipped scorer on the development half:",
          best_threshold(half.labels, scorer.score(half.sentences)))


def evaluate(sentences: list[str], labels: list[bool]) -> dict[str, dict[str, float]]:
    """The scorer at CLAIM_THRESHOLD, the keyword baseline (one cue word or more), the scorer flagging as many
    sentences as the baseline (its top ones), and flagging everything."""
    scores = ClaimScorer().score(sentences)
    baseline = metrics(labels, baseline_scores(sentences), 0.5)
    cut = sorted(scores, reverse=True)[baseline["flagged"] - 1] if baseline["flagged"] else 1.0
    return {"scorer": metrics(labels, scores, CLAIM_THRESHOLD),
            "keyword baseline": baseline,
            "scorer, as many flagged as the baseline": metrics(labels, scores, np.nextafter(cut, -1.0)),
            "flag every sentence": metrics(labels, [1.0] * len(sentences), 0.5)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA,
                        help="the unarxive-sample folder (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="write the metrics (numbers only) to this file")
    parser.add_argument("--tune", action="store_true", help="fit weights and threshold on the development half")
    args = parser.parse_args(argv)
    if not (args.data / "queries.jsonl.gz").is_file():
        print(f"bench.claims: no benchmark data at {args.data} (expected {args.data / 'queries.jsonl.gz'}); "
              "pass the unarxive-sample folder as the first argument", file=sys.stderr)
        return 2
    sets = halves(args.data)
    if args.tune:
        tune(sets["development"])
        return 0
    report: dict[str, object] = {"command": "python -m bench.claims " + " ".join(argv or sys.argv[1:]),
                                 "machine": machine.line(),
                                 "claim_threshold": CLAIM_THRESHOLD, "halves": {}}
    for name in ("held-out", "development"):
        half = sets[name]
        results = evaluate(half.sentences, half.labels)
        intervals = paper_bootstrap(half, ClaimScorer().score(half.sentences), baseline_scores(half.sentences))
        papers, count, cited = len(set(half.papers)), len(half.labels), sum(half.labels)
        report["halves"][name] = {"papers": papers, "sentences": count, "cited": cited, **results,
                                  "95% interval over papers": intervals}
        print(f"\n{name}: {papers} papers, {count} sentences, {cited} cited ({cited / count:.1%})")
        print("| method | precision | recall | F1 | average precision | flagged |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for method, m in results.items():
            print(f"| {method} | {m['precision']:.3f} | {m['recall']:.3f} | {m['f1']:.3f} | "
                  f"{m['average_precision']:.3f} | {m['flagged']} |")
        print("95% interval over papers (bootstrap): scorer's AP {:.3f}-{:.3f}; its lead over the baseline's AP "
              "{:.3f}-{:.3f}".format(*intervals["average_precision"], *intervals["lead_over_baseline"]))
    text = "\n\n".join(p for paragraphs in load_paragraphs(args.data).values() for p in paragraphs)
    started = time.perf_counter()
    sentences = [s for _, _, s in split_sentences(text)]
    ClaimScorer().score(sentences)
    seconds = time.perf_counter() - started
    report["seconds_per_300_sentences"] = seconds / len(sentences) * 300
    print(f"\nsplit + score of all paragraphs: {seconds:.2f} s for {len(sentences)} sentences "
          f"({report['seconds_per_300_sentences'] * 1000:.0f} ms per 300)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
