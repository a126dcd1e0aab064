"""What the closeness labels mean: how often a result labelled close, partial or weak is one the authors cited.

    python -m bench.match_labels --index IDX/acm-full [--data ../shared/data] [--json bench/results/match_labels.json]

Queries: the ACM-CR development citing passages as their authors wrote them (150 paragraphs, 303 sentences, with
[CIT] where the citation stood), each asked twice: the passage alone, and with its citing paper's title and abstract
(a draft's passage). Relevant: the papers that the passage cites and the corpus holds. Each gets the default
pipeline's ten results and `recommender.pipeline.confidence.assess`'s closeness (English scale; the index needs no
multilingual field).

A label's precision@10 is the share of the top-10 results with that label that are relevant, pooled over queries.
The 25 citing papers are split into two halves, alternately in each venue (sorted by a hash of the DOI): the strong
("close") cut is chosen on the tuning half as the lowest cosine (to 0.01) from which, at every cut up to MAX_CUT,
close's precision is at least twice partial's even at the lower end of the ratio's 95% interval; the other half
checks it. Intervals: 2,000 draws of the half's citing papers with replacement (all their queries). The tables give
each label's precision at the shipped constants and at the strong cut before this calibration (PREVIOUS_STRONG).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import DATA, RESULTS, need, write_json
from recommender.pipeline import confidence
from recommender.pipeline.recommender import Recommender
from recommender.query import Query

K = 10
SETS = {"paragraphs": "queries.jsonl.gz", "sentences": "queries_sentences.jsonl.gz"}
FORMS = ("passage", "passage + draft")
PREVIOUS_STRONG = 0.50  # the strong cut before issue 31 (set on the demo corpus's citation passages)
CUTS = np.round(np.arange(0.40, 0.851, 0.01), 2)
MAX_CUT = 0.80  # the tuning rule looks up to here; at 0.80 close holds 2-3% of the results (ACM-CR dev)
TARGET_RATIO = 2.0
DRAWS = 2000
TOP_TERMS = 25
_SHARED = re.compile(r"shares the terms ((?:“[^”]+”(?:, )?)+)", re.IGNORECASE)


def halves(citing: list[str], venue: dict[str, str]) -> dict[str, str]:
    """Citing paper -> "tune" or "check": alternately within each venue, in the order of a hash of the id."""
    ordered = sorted(set(citing), key=lambda p: (venue[p], hashlib.sha1(p.encode("utf-8")).hexdigest()))
    return {p: ("tune", "check")[i % 2] for i, p in enumerate(ordered)}


def run_queries(engine: Recommender, folder: Path) -> list[dict]:
    """One row per result: citing paper, query set and id, form, rank, closeness, relevant, the shared terms its
    explanation quotes."""
    known = set(engine.index.ids)
    rows = []
    for name, file in SETS.items():
        with gzip.open(folder / file, "rt", encoding="utf-8") as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
        for line in lines:
            relevant = set(line["relevant"]) & known
            if not relevant:
                continue
            for form in FORMS:
                draft = form == "passage + draft"
                query = Query(context=line["context"], k=K, exclude={line["citing_id"]},
                              title=line["citing_title"] if draft else "",
                              abstract=line["citing_abstract"] if draft else "")
                result = engine.recommend(query)
                report = confidence.assess(engine, query, result)
                for rank, (rec, match) in enumerate(zip(result, report.matches), 1):
                    rows.append({"citing": line["citing_id"], "venue": line["citing_venue"], "set": name,
                                 "qid": line["qid"], "terms": shown_terms(rec.explanation),
                                 "form": form, "rank": rank, "closeness": match.closeness,
                                 "relevant": rec.paper_id in relevant})
        print(f"{name}: {len(lines)} passages asked", file=sys.stderr)
    return rows


def shown_terms(explanation: str) -> list[str]:
    """The words an explanation quotes as shared terms."""
    found = _SHARED.search(explanation)
    return re.findall(r"“([^”]+)”", found.group(1)) if found else []


def terms_report(rows: list[dict], lexical) -> dict:
    """How many results quote shared terms, how many each, and the words quoted most, with the share of the
    corpus's papers that hold each."""
    quoted = Counter(term for r in rows for term in r["terms"])

    def corpus_share(word: str) -> float:
        return round(max(lexical.document_frequencies(word).values(), default=0) / lexical.documents, 4)

    return {"results_with_terms": round(float(np.mean([bool(r["terms"]) for r in rows])), 4),
            "terms_per_result": round(float(np.mean([len(r["terms"]) for r in rows])), 3),
            "most_quoted": [[term, count, corpus_share(term)] for term, count in quoted.most_common(TOP_TERMS)]}


class Half:
    """The results of one half's citing papers, per paper, for precision by label and its bootstrap."""

    def __init__(self, rows: list[dict]):
        self.papers = sorted({r["citing"] for r in rows})
        self.closeness = [np.array([r["closeness"] for r in rows if r["citing"] == p]) for p in self.papers]
        self.relevant = [np.array([r["relevant"] for r in rows if r["citing"] == p]) for p in self.papers]

    def counts(self, strong: np.ndarray, weak: float) -> np.ndarray:
        """papers x cuts x (close, partial, weak) x (results, relevant)."""
        out = np.zeros((len(self.papers), len(strong), 3, 2))
        for i, (cos, rel) in enumerate(zip(self.closeness, self.relevant)):
            close = cos[None, :] >= strong[:, None]
            below = cos < weak
            for j, labelled in enumerate((close, ~close & ~below[None, :], np.broadcast_to(below, close.shape))):
                out[i, :, j, 0] = labelled.sum(1)
                out[i, :, j, 1] = (labelled & rel[None, :]).sum(1)
        return out

    def precision(self, strong: np.ndarray, weak: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Per cut: each label's precision and result count, close/partial ratio, and their 95% intervals."""
        counts = self.counts(strong, weak)
        with np.errstate(divide="ignore", invalid="ignore"):
            def measures(total: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
                precision = total[..., 1] / total[..., 0]  # cuts x labels
                return precision, precision[:, 0] / precision[:, 1]

            precision, ratio = measures(counts.sum(0))
            drawn = [measures(counts[rng.integers(0, len(self.papers), len(self.papers))].sum(0))
                     for _ in range(DRAWS)]
        with warnings.catch_warnings():  # a cut where a label never holds a result has no interval (nan)
            warnings.simplefilter("ignore", RuntimeWarning)
            precision_95, ratio_95 = (np.nanpercentile(np.stack([d[part] for d in drawn]), [2.5, 97.5], axis=0,
                                                       method="nearest")  # "nearest": a ratio may be inf
                                      for part in (0, 1))
        return {"cuts": strong, "precision": precision, "results": counts.sum(0)[..., 0], "ratio": ratio,
                "precision_95": precision_95, "ratio_95": ratio_95}


def chosen_cut(tuning: dict[str, np.ndarray]) -> float | None:
    """The lowest cut from which the tuning half's ratio has its 95% lower end at TARGET_RATIO or more at every cut
    up to MAX_CUT (None when there is none)."""
    cuts, low = tuning["cuts"], tuning["ratio_95"][0]
    upto = cuts <= MAX_CUT + 1e-9
    for i in np.flatnonzero(upto):
        if np.all(low[i:][upto[i:]] >= TARGET_RATIO):
            return float(cuts[i])
    return None


def at(measured: dict[str, np.ndarray], cut: float) -> dict:
    """The labels at one of the measured strong cuts: precision, its interval and result count per label; the
    ratio."""
    i = int(np.argmin(np.abs(measured["cuts"] - cut)))
    labels = {}
    for j, label in enumerate(("close", "partial", "weak")):
        labels[label] = {"results": int(measured["results"][i, j]),
                         "precision_at_10": round(float(measured["precision"][i, j]), 4),
                         "interval_95": [round(float(x), 4) for x in measured["precision_95"][:, i, j]]}
    return {"strong_cut": float(measured["cuts"][i]), "labels": labels,
            "ratio_close_partial": round(float(measured["ratio"][i]), 3),
            "ratio_interval_95": [round(float(x), 3) for x in measured["ratio_95"][:, i]]}


def with_a_close_result(rows: list[dict], cut: float) -> float:
    """The share of queries whose ten results hold at least one at `cut` or above."""
    best: dict[tuple, float] = {}
    for r in rows:
        key = (r["set"], r["qid"], r["form"])
        best[key] = max(best.get(key, -1.0), r["closeness"])
    return round(float(np.mean([b >= cut for b in best.values()])), 4)


def table(title: str, rows: dict[str, dict]) -> str:
    lines = [f"\n{title}\n", "| Half | Strong cut | Close: P@10 [95%] (n) | Partial: P@10 [95%] (n) "
             "| Weak: P@10 (n) | Close / partial [95%] |", "|---|---:|---|---|---|---|"]
    for name, found in rows.items():
        cells = []
        for label in ("close", "partial"):
            lab = found["labels"][label]
            lo, hi = lab["interval_95"]
            cells.append(f"{lab['precision_at_10']:.3f} [{lo:.3f}, {hi:.3f}] ({lab['results']})")
        weak = found["labels"]["weak"]
        lo, hi = found["ratio_interval_95"]
        lines.append(f"| {name} | {found['strong_cut']:.2f} | {cells[0]} | {cells[1]} "
                     f"| {weak['precision_at_10']:.3f} ({weak['results']}) "
                     f"| {found['ratio_close_partial']:.2f} [{lo:.2f}, {hi:.2f}] |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, help="the full ACM-CR index")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=RESULTS / "match_labels.json")
    args = parser.parse_args()
    index = need(parser, args.index, "--index", "DIR (the full ACM-CR index)")
    folder = need(parser, args.data / "acm-cr", "--data", "DIR (the shared benchmark data, with acm-cr/)")

    started = time.time()
    engine = Recommender.load(index)
    rows = run_queries(engine, folder)
    side = halves([r["citing"] for r in rows], {r["citing"]: r["venue"] for r in rows})
    weak, shipped = confidence.WEAK_MATCH_COSINE["english"], confidence.STRONG_MATCH_COSINE["english"]
    rng = np.random.default_rng(0)
    measured = {name: Half([r for r in rows if side[r["citing"]] == name]).precision(CUTS, weak, rng)
                for name in ("tune", "check")}
    cut = chosen_cut(measured["tune"])
    report = {
        "index": str(index), "date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
        "queries": len(rows) // K, "citing_papers": {name: sum(s == name for s in side.values())
                                                     for name in ("tune", "check")},
        "weak_cut": weak, "chosen_cut_tuning_half": cut, "shipped_strong_cut": shipped,
        "before": {name: at(m, PREVIOUS_STRONG) for name, m in measured.items()},
        "after": {name: at(m, shipped) for name, m in measured.items()},
        "ratio_by_cut": {name: {f"{c:.2f}": [round(float(m["ratio"][i]), 3),
                                             *[round(float(x), 3) for x in m["ratio_95"][:, i]]]
                                for i, c in enumerate(CUTS)} for name, m in measured.items()},
        "queries_with_a_close_result": {"before": with_a_close_result(rows, PREVIOUS_STRONG),
                                        "after": with_a_close_result(rows, shipped)},
        "by_set_and_form": {},
        "shared_terms": terms_report(rows, engine.index.lexical),
    }
    for name in SETS:
        for form in FORMS:
            part = Half([r for r in rows if r["set"] == name and r["form"] == form])
            report["by_set_and_form"][f"{name}, {form}"] = at(part.precision(np.array([shipped]), weak, rng), shipped)
    report["seconds"] = round(time.time() - started)

    print(f"strong cut chosen on the tuning half: {cut}; shipped: {shipped:.2f}; queries with a close result: "
          f"{report['queries_with_a_close_result']['before']:.1%} at {PREVIOUS_STRONG:.2f}, "
          f"{report['queries_with_a_close_result']['after']:.1%} at {shipped:.2f}")
    print(table(f"Before (strong cut {PREVIOUS_STRONG:.2f})", report["before"]))
    print(table(f"After (strong cut {shipped:.2f})", report["after"]))
    print(table(f"By query set and form, both halves (strong cut {shipped:.2f})", report["by_set_and_form"]))
    terms = report["shared_terms"]
    print(f"\nShared terms: quoted by {terms['results_with_terms']:.1%} of the results, "
          f"{terms['terms_per_result']:.2f} a result; most quoted (share of the corpus's papers holding it): "
          + ", ".join(f"{t} {n} ({share:.1%})" for t, n, share in terms["most_quoted"]))
    print(f"\n{report['seconds']} s on {machine.line()}", file=sys.stderr)
    write_json(args.json, report)


if __name__ == "__main__":
    main()
