"""Missing citations on real papers: real citing sentences, citations removed, reviewed end to end (issue 26).

    python -m bench.review_real --index IDX/acm-full [--data ../shared/data] [--unarxive-index DIR]

ACM-CR (development half): each citing paper with at least 3 citing sentences becomes a plain-text submission,
written into a temporary folder (never into the repository): its title, its abstract, its real citing sentences
in order with numbered markers, four to a paragraph, and a numbered ACM-style reference list built from the
corpus's metadata (a reference outside the corpus: its DOI). Up to 3 citations are removed from each (seeded):
sentences of at least three words that cite exactly one paper, of the corpus, which no other sentence cites lose
their marker and that paper's entry; the sentence stays as its authors wrote it (where a data set's "sentence" is
several, the one that held the marker is the removed sentence a flag must hit), closed up where the marker went,
and cross-references numbered as a reader sees them (unArXive writes "Fig. REF").
unArXive sample: the same from each paper's real paragraphs (non-citing sentences included), its reference list
the raw reference strings.

Reported, per data set: the removed papers found in `missing` (top 10, R@10); the same for local mode told where
the citation goes (the removed sentence with [CIT], the paper's title and abstract: the ceiling); their ratio,
with a bootstrap interval over submissions; the share of removed sentences flagged as uncited claims; the cited
papers wrongly listed as missing (must be 0); flags on other sentences per 1,000 words of them (false alarms);
the references of corpus papers matched to them, and references matched to a wrong paper; seconds per review.
Each figure is given over all papers and over each half of them (`bench.claims.is_development`: "tune", on which
settings may be chosen, and "check"), with 95% intervals from papers drawn with replacement. `--claims cues` reviews
with the claim scorer's cues alone (the scorer before issue 26), for a baseline.
`--index` should be the full ACM-CR index (`python -m recommender index
../shared/data/acm-cr/corpus.jsonl.gz --out DIR`, about 36 minutes of embedding on 2 cores).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench import machine
from bench.claims import is_development, tidy
from bench.paths import DATA, need
from recommender.documents.read import read_document
from recommender.store.build import build_index
from recommender.store.versions import IndexDirectoryError, current_version
from recommender.corpus.loaders import load_corpus
from recommender.query import CITATION_MARK
from recommender.pipeline.recommender import Recommender
from recommender.review.claims import ClaimScorer, split_sentences
from recommender.review.document import DocumentReviewer

K = 10
MIN_SENTENCES = 3
REMOVED = 3
PER_PARAGRAPH = 4
_CIT = re.compile(re.escape(CITATION_MARK))
_WORD = re.compile(r"\w+")
_PROBE = "Qzqremovedqzq"  # where a removed marker stood, while its sentence is found
_AUTHORS_CIT = re.compile(r"(?:^|,\s*)" + re.escape(CITATION_MARK) + r"(?=\s+[a-z])")  # "[CIT] propose", ", [CIT] show"


@dataclass
class Submission:
    """A real paper as a reviewer gets it: sentences with the papers they cite, some citations removed."""

    name: str
    title: str
    abstract: str
    paragraphs: list[list[tuple[str, list[str]]]]  # sentences ([CIT] where a marker goes) and the ids they cite
    removed: dict[str, str] = field(default_factory=dict)  # removed paper id -> its sentence (with [CIT])
    # removed paper id -> the sentence that held its marker, as `write_text` wrote it (where the data set's "sentence"
    # is several, the one the marker stood in)
    written: dict[str, str] = field(default_factory=dict)

    def cited(self) -> list[str]:
        """The ids the submission still cites, in order of first citation."""
        ids = [pid for paragraph in self.paragraphs for _, cited in paragraph for pid in cited]
        return [pid for pid in dict.fromkeys(ids) if pid not in self.removed]


def remove_citations(submission: Submission, corpus: set[str], rng: random.Random) -> None:
    """Up to REMOVED citations of sentences that cite exactly one paper, of the corpus, that no other sentence
    cites."""
    counts: dict[str, int] = {}
    for paragraph in submission.paragraphs:
        for _, cited in paragraph:
            for pid in set(cited):
                counts[pid] = counts.get(pid, 0) + 1
    candidates = [(p, s) for p, paragraph in enumerate(submission.paragraphs) for s, (text, cited) in
                  enumerate(paragraph) if len(cited) == 1 and cited[0] in corpus and counts[cited[0]] == 1
                  and CITATION_MARK in text and len(_WORD.findall(_CIT.sub(" ", text))) >= 3]
    for p, s in rng.sample(candidates, min(REMOVED, len(candidates))):
        text, cited = submission.paragraphs[p][s]
        submission.removed[cited[0]] = text


def write_text(submission: Submission, entry, names=lambda pid: "") -> str:
    """The submission as plain text: title, abstract, paragraphs with [n] markers, numbered references. A removed
    citation that stood for its authors ("[CIT] propose ...", where ACM-CR's annotators replaced "Smith et al.
    [3]"; also after a comma: "Lately, [CIT] introduce") is written with the authors' names (`names`), as the
    sentence read before the annotation. What the data set took out is closed up as its authors wrote it
    (`bench.claims.tidy`: no "theory ." where a marker went, "Fig. 1" for unArXive's "Fig. REF")."""
    numbers = {pid: n for n, pid in enumerate(submission.cited(), start=1)}
    body = []
    for paragraph in submission.paragraphs:
        sentences = []
        for text, cited in paragraph:
            kept = [numbers[pid] for pid in cited if pid in numbers]
            marker = f"[{', '.join(map(str, kept))}]" if kept else ""
            if not kept and cited and _AUTHORS_CIT.search(text):
                marker = names(cited[0])
            sentences.append(tidy(_CIT.sub(lambda _: marker, text, count=1).replace(CITATION_MARK, "")))
            for pid in cited:
                if pid in submission.removed:
                    submission.written[pid] = _marked_sentence(text, marker)
        body.append(" ".join(sentences))
    references = [f"[{n}] {entry(pid)}" for pid, n in numbers.items()]
    return "\n\n".join([submission.title, "Abstract", submission.abstract, "1 Introduction", *body, "References",
                        "\n".join(references)]) + "\n"


def _marked_sentence(text: str, marker: str) -> str:
    """The sentence of `text` (a data set's sentence, which may be several) that holds its first [CIT], written with
    `marker` there and the other [CIT]s removed."""
    probe = " ".join(_CIT.sub(lambda _: f"{marker} {_PROBE}", text, count=1).replace(CITATION_MARK, "").split())
    held = [sentence for _, _, sentence in split_sentences(probe) if _PROBE in sentence] or [probe]
    return tidy(held[0].replace(_PROBE, ""))


def author_names(records: dict, pid: str) -> str:
    """"Smith et al.", "Smith and Jones" or "Smith": how a sentence names a paper's authors."""
    authors = [name.split()[-1] for name in (records[pid].authors if pid in records else []) if name.split()]
    if not authors:
        return "Prior work"
    return authors[0] + (" et al." if len(authors) > 2 else f" and {authors[1]}" if len(authors) == 2 else "")


def acm_entry(records: dict, pid: str) -> str:
    """An ACM-style reference from the corpus's record, or the DOI of a paper outside the corpus."""
    if pid.startswith("no-doi-"):
        return "A reference outside the corpus, without a DOI."
    if pid not in records:
        return f"A reference outside the corpus. doi:{pid}."
    record = records[pid].to_dict()
    authors = record.get("authors") or []
    names = ", ".join(authors[:-1]) + (" and " if len(authors) > 1 else "") + (authors[-1] if authors else "")
    venue = f" In {record['venue']}." if record.get("venue") else ""
    return f"{names or 'Anonymous'}. {record.get('year') or ''}. {record['title'].rstrip('.')}.{venue}"


def acm_submissions(data: Path) -> list[Submission]:
    rows = [json.loads(line) for line in gzip.open(data / "acm-cr" / "queries_sentences.jsonl.gz", "rt")]
    by_paper: dict[str, list[dict]] = {}
    for row in sorted(rows, key=lambda r: r["qid"]):
        by_paper.setdefault(row["citing_id"], []).append(row)
    out = []
    for citing, sentences in sorted(by_paper.items()):
        if len(sentences) < MIN_SENTENCES:
            continue
        # the references outside the corpus keep their markers too; one without a DOI is named by its sentence
        pairs = [(row["context"], list(dict.fromkeys([*_ids(row["relevant"]), *_ids(row["cited_ref_dois_all"])]))
                  or [f"no-doi-{row['qid']}"]) for row in sentences]
        out.append(Submission(citing, sentences[0]["citing_title"], sentences[0]["citing_abstract"],
                              [pairs[i:i + PER_PARAGRAPH] for i in range(0, len(pairs), PER_PARAGRAPH)]))
    return out


def unarxive_submissions(data: Path) -> list[Submission]:
    """Each paper's paragraphs in order; a sentence query's [CIT]s stand for its cited ids, other sentences of the
    paragraph keep no marker."""
    rows = [json.loads(line) for line in gzip.open(data / "unarxive-sample" / "queries.jsonl.gz", "rt")]
    by_paper: dict[str, dict[str, list[dict]]] = {}
    for row in rows:
        by_paper.setdefault(row["citing_id"], {}).setdefault(row["paragraph"], []).append(row)
    out = []
    for citing, paragraphs in sorted(by_paper.items()):
        if sum(len(v) for v in paragraphs.values()) < MIN_SENTENCES:
            continue
        first = next(iter(paragraphs.values()))[0]
        written = []
        for paragraph, queries in paragraphs.items():
            pieces, cursor = [], 0
            for query in queries:
                start = paragraph.find(query["context"], cursor)
                if start < 0:
                    continue
                if paragraph[cursor:start].strip():
                    pieces.append((paragraph[cursor:start].replace(CITATION_MARK, "").strip(), []))
                pieces.append((query["context"], [str(pid) for pid in _ids(query["relevant"])]))
                cursor = start + len(query["context"])
            if paragraph[cursor:].strip():
                pieces.append((paragraph[cursor:].replace(CITATION_MARK, "").strip(), []))
            written.append(pieces)
        out.append(Submission(citing, first["citing_title"], first["citing_abstract"], written))
    return out


def _ids(value) -> list[str]:
    return value if isinstance(value, list) else json.loads(value.replace("'", '"'))


def review_all(reviewer: DocumentReviewer, submissions: list[Submission], corpus: set[str], entry, names,
               folder: Path) -> list[dict]:
    rows = []
    for submission in submissions:
        path = folder / (re.sub(r'[^\w.-]', '_', submission.name) + '.txt')
        path.write_text(write_text(submission, entry, names), encoding="utf-8")
        document = read_document(path)
        start = time.perf_counter()
        report = reviewer.review(document)
        seconds = time.perf_counter() - start
        missing = [paper.paper_id for paper in report.missing[:K]]
        cited = set(submission.cited())
        ceiling_lists = reviewer.suggest(document, list(submission.removed.values()), report.cited, K)
        flagged_text = [" ".join(claim.sentence.split()) for claim in report.uncited]
        # the removed sentences as the submission reads (with the authors' names written back)
        removed_plain = {pid: submission.written.get(pid) or tidy(_CIT.sub("", text))
                         for pid, text in submission.removed.items()}
        hit_flags = {pid for pid, text in removed_plain.items()
                     if any(_overlaps(text, claim) for claim in flagged_text)}
        false_flags = [claim for claim in flagged_text
                       if not any(_overlaps(text, claim) for text in removed_plain.values())]
        other_words = sum(len(_WORD.findall(text)) for paragraph in submission.paragraphs for text, cited_ids in
                          paragraph if not (len(cited_ids) == 1 and cited_ids[0] in submission.removed))
        rows.append({
            "name": submission.name, "removed": len(submission.removed),
            "found": sum(pid in missing for pid in submission.removed),
            "ceiling": sum(pid in [s.paper_id for s in answer] for pid, answer in zip(submission.removed,
                                                                                     ceiling_lists)),
            "flagged": len(hit_flags), "cited_in_missing": sum(pid in cited for pid in missing),
            "false_flags": len(false_flags), "other_words": other_words, "seconds": seconds,
            "references": sum(pid in corpus for pid in cited),  # entries of corpus papers
            "matched": sum(pid in report.matches for pid in cited if pid in corpus),
            "wrong_matches": sum(1 for pid in report.matches if pid and pid not in cited),
        })
    return rows


def _overlaps(removed: str, claim: str) -> bool:
    """Is the flagged claim (a sentence as the reader split it) the removed sentence, or a part of it? A text of
    fewer than three words ("[CIT].", where the data set cut a sentence) is no sentence to match."""
    if min(len(_WORD.findall(removed)), len(_WORD.findall(claim))) < 3:
        return False
    return claim[:60] in removed or removed[:60] in claim


def _totals(rows: list[dict]) -> dict[str, float]:
    removed = max(sum(r["removed"] for r in rows), 1)
    return {"ratio": sum(r["found"] for r in rows) / max(sum(r["ceiling"] for r in rows), 1),
            "flagged": sum(r["flagged"] for r in rows) / removed,
            "false_flags_per_1000_words": 1000 * sum(r["false_flags"] for r in rows) / max(sum(r["other_words"]
                                                                                                for r in rows), 1)}


def summarise(rows: list[dict], samples: int = 2000) -> dict:
    """Totals over all reviews; 95% intervals of the ratio, the flagged share and the false alarms from papers drawn
    with replacement (all their seeds)."""
    removed = sum(r["removed"] for r in rows)
    found, ceiling = sum(r["found"] for r in rows), sum(r["ceiling"] for r in rows)
    rng = np.random.default_rng(0)
    papers = sorted({r["name"] for r in rows})
    by_paper = {name: [r for r in rows if r["name"] == name] for name in papers}
    drawn: dict[str, list[float]] = {}
    for _ in range(samples if papers else 0):
        picked = [r for i in rng.integers(0, len(papers), len(papers)) for r in by_paper[papers[i]]]
        for key, value in _totals(picked).items():
            if key != "ratio" or sum(r["ceiling"] for r in picked):
                drawn.setdefault(key, []).append(value)

    def interval(key: str) -> list[float] | None:
        values = drawn.get(key)
        return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))] if values else None

    return {
        "papers": len(papers), "reviews": len(rows), "removed": removed,
        "missing_r@10": found / max(removed, 1), "ceiling_r@10": ceiling / max(removed, 1),
        "ratio": found / max(ceiling, 1), "ratio_interval_95": interval("ratio"),
        "flagged": sum(r["flagged"] for r in rows) / max(removed, 1), "flagged_interval_95": interval("flagged"),
        "cited_in_missing": sum(r["cited_in_missing"] for r in rows),
        "false_flags_per_1000_words": 1000 * sum(r["false_flags"] for r in rows) / max(sum(r["other_words"]
                                                                                            for r in rows), 1),
        "false_flags_interval_95": interval("false_flags_per_1000_words"),
        "reference_recall": sum(r["matched"] for r in rows) / max(sum(r["references"] for r in rows), 1),
        "wrong_reference_matches": sum(r["wrong_matches"] for r in rows),
        "seconds_per_review": float(np.mean([r["seconds"] for r in rows])),
        "rows": rows,
    }


class CuesOnly(ClaimScorer):
    """The claim scorer without what the corpus says (the cues alone, as before issue 26)."""

    def score(self, sentences: list[str], nearest=None) -> list[float]:
        return super().score(sentences)


def load_index(path: Path, corpus: Path) -> Recommender:
    try:
        current_version(path)
    except (IndexDirectoryError, FileNotFoundError):
        build_index(load_corpus(corpus).papers, path)
    return Recommender.load(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--index", type=Path, required=True, help="the full ACM-CR index (built here if missing)")
    parser.add_argument("--unarxive-index", type=Path, help="an index of the unArXive sample (built here if missing)")
    parser.add_argument("--seeds", type=int, default=5, help="removals drawn per paper (seeds 0..N-1)")
    parser.add_argument("--claims", choices=["default", "cues"], default="default",
                        help="cues: the claim scorer's cues alone, as before issue 26 (a baseline)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    need(parser, args.data / "acm-cr", "--data", "DIR (the shared benchmark data, with acm-cr/)")
    if args.unarxive_index:
        need(parser, args.data / "unarxive-sample", "--data", "DIR (the shared benchmark data, with unarxive-sample/)")
    results = {"machine": machine.line(), "date": time.strftime("%Y-%m-%d"),
               "load_before": os.getloadavg()[0]}
    sets = [("acm-cr", args.index, acm_submissions, "acm-cr/corpus.jsonl.gz")]
    if args.unarxive_index:
        sets.append(("unarxive", args.unarxive_index, unarxive_submissions, "unarxive-sample/corpus.jsonl.gz"))
    for name, index_dir, make, corpus in sets:
        recommender = load_index(index_dir, args.data / corpus)
        records = {paper.id: paper for paper in recommender.index.all_papers()}
        entry = (lambda pid: acm_entry(records, pid)) if name == "acm-cr" else (lambda pid: records[pid].title)
        names = (lambda pid: author_names(records, pid)) if name == "acm-cr" else (lambda pid: "")
        reviewer = DocumentReviewer(recommender, claims=CuesOnly() if args.claims == "cues" else None)
        reviewer.review(read_document(b"Warm-up sentence about retrieval.", "warmup.txt"))
        rows = []
        for seed in range(args.seeds):  # each seed removes other citations from the same papers
            submissions = make(args.data)
            rng = random.Random(seed)
            for submission in submissions:
                remove_citations(submission, set(records), rng)
            with tempfile.TemporaryDirectory() as folder:
                rows += review_all(reviewer, [s for s in submissions if s.removed], set(records), entry, names,
                                   Path(folder))
        results[name] = summarise(rows)
        results[name]["halves"] = {half: {k: v for k, v in summarise(
            [r for r in rows if is_development(r["name"]) == (half == "tune")]).items() if k != "rows"}
            for half in ("tune", "check")}
        summary = {k: v for k, v in results[name].items() if k != "rows"}
        print(name, json.dumps(summary, indent=1), flush=True)
    results["load_after"] = os.getloadavg()[0]
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
