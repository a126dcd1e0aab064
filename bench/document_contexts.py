"""Citation contexts read from PDFs (the `contexts` command) against the same contexts given as a file, on ACM-CR.

    python -m bench.document_contexts --index IDX/acm-pool [--data ../shared/data/acm-cr]

Each of the 25 citing papers of ACM-CR's development half is typeset as a two-column PDF (bench/pdf_writer.py:
hyphenated line ends, a reference list in a smaller font) into a temporary folder: its title, abstract, and its
paragraph contexts with numbered markers. Each `[CIT]` cites the papers its sentence cites in the sentence file
(a sentence with fewer cited papers than markers cites one out-of-corpus reference per extra marker; the last
marker of a sentence takes any papers left, as "[3, 4]"); the reference list gives authors, year, title and venue
from the corpus, without DOIs, so papers are found by title as in most PDFs, and made-up entries for the rest. Then:

1. reading: how many references the PDFs give back and match to the right corpus paper, and how many of the
   paragraphs come back as contexts with the same cited papers;
2. training: the passage reranker cross-validated by citing paper as in bench/local_learning.py (same folds,
   same pools), each fold's model trained once on the gold context rows and once on the contexts read from the
   PDFs of the same citing papers, both scored on the gold paragraph and sentence queries of the held-out papers.

Writes bench/results/document_contexts.json. The PDFs are derived from the data set: they stay in --work.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench import machine
from bench.local_learning import (POOL, SETS, CachedVectors, add_inputs, cached_pools, gain_interval, metrics,
                                  parse_inputs)
from bench.paths import RESULTS, write_json
from bench.pdf_writer import Draft, write_pdf
from recommender.config import METHODS
from recommender.embedding.encoders import get_encoder
from recommender.pipeline.learned import load_head
from recommender.pipeline.local_features import LOCAL_FEATURES
from recommender.pipeline.recommender import Recommender
from recommender.store.index import Index
from recommender.training.document_contexts import contexts_from_files, write_contexts
from recommender.training.local import collect_pools, fit_pools, grouped_folds, pool_config, read_contexts

MARK = "[CIT]"


def reference_entry(paper) -> str:
    """A reference as a PDF's list prints it: initials and surnames, year, title, venue (no DOI)."""
    names = []
    for author in paper.authors[:6]:
        parts = author.split()
        names.append(" ".join([*(p[0] + "." for p in parts[:-1]), parts[-1]]) if parts else author)
    authors = ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else "Anonymous"
    return f"{authors}. {paper.year or ''}. {paper.title}. In {paper.venue or 'Proceedings'}."


WORDS = ("adaptive", "queries", "users", "models", "learning", "neural", "search", "ranking", "graphs", "signals",
         "sessions", "networks", "evaluation", "documents", "retrieval", "language", "behaviour", "systems")
SURNAMES = ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Ivanova", "Haddad", "Costa", "Novak", "Schultz", "Reyes")
VENUES = ("Journal of Applied Things", "Proceedings of a Workshop", "Technical Report", "Doctoral thesis")


def outside_entry(key: str) -> str:
    """A plausible reference outside the corpus (seeded by `key`): the list's other entries, which a reading
    must not lose or match."""
    rng = random.Random(key)
    title = " ".join(rng.sample(WORDS, rng.randint(4, 7))).capitalize()
    return f"{rng.choice('ABCDEJKLMR')}. {rng.choice(SURNAMES)}. {rng.randint(1980, 2019)}. {title}. " \
           f"{rng.choice(VENUES)}."


def typeset(paragraphs: list[dict], sentences: list[dict], index: Index) -> tuple[Draft, dict[int, str]]:
    """One citing paper as a Draft with numbered markers, and the corpus id of each reference number."""
    numbers: dict[str, int] = {}
    cited_by_number: dict[int, str] = {}

    def number(key: str) -> int:
        if key not in numbers:
            numbers[key] = len(numbers) + 1
        return numbers[key]

    body = []
    for paragraph in paragraphs:
        text, qid = paragraph["context"], paragraph["qid"]
        spans = sorted((text.index(s["context"]), s) for s in sentences if s["context"] in text)
        pieces, cursor, outside = [], 0, 0
        for start, sentence in spans:
            if start < cursor:
                continue
            pieces.append(text[cursor:start].replace(MARK, f"[{number(f'outside-{qid}-{outside}')}]"))
            outside += 1
            chunk, cited = sentence["context"], list(sentence["relevant"])
            marks = chunk.count(MARK)
            for j in range(marks):
                if j < marks - 1:
                    keys = cited[j:j + 1] or [f"extra-{sentence['qid']}-{j}"]
                else:
                    keys = cited[j:] or [f"extra-{sentence['qid']}-{j}"]
                chunk = chunk.replace(MARK, "[" + ", ".join(str(number(k)) for k in keys) + "]", 1)
            pieces.append(chunk)
            cursor = start + len(sentence["context"])
        pieces.append(text[cursor:].replace(MARK, f"[{number(f'outside-{qid}-end')}]"))
        body.append("".join(pieces))
    references = []
    for key, n in sorted(numbers.items(), key=lambda item: item[1]):
        if key in index.position:
            cited_by_number[n] = key
            references.append(f"[{n}] " + reference_entry(index.papers([index.position[key]])[0]))
        else:
            references.append(f"[{n}] " + outside_entry(key))
    first = paragraphs[0]
    return Draft(title=first["citing_title"], authors="An Author and Another Author",
                 abstract=first["citing_abstract"], sections=[("1 Introduction", body)], references=references,
                 columns=2), cited_by_number


def read_rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_inputs(parser, "ACM-CR index (the 10K pool of local_learning)", "local_learning's cache")
    parser.add_argument("--work", type=Path, help="where the PDFs go (default: a temporary folder, removed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=RESULTS / "document_contexts.json")
    args = parse_inputs(parser)
    started = time.time()
    index = Index.load(args.index)
    paragraphs, sentences = (read_rows(args.data / SETS[name]) for name in ("paragraphs", "sentences"))
    by_paper: dict[str, list[dict]] = defaultdict(list)
    for row in paragraphs:
        by_paper[row["citing_id"]].append(row)
    sentences_of: dict[str, list[dict]] = defaultdict(list)
    for row in sentences:
        sentences_of[row["citing_id"]].append(row)

    work = args.work or Path(tempfile.mkdtemp(prefix="document-contexts-"))
    work.mkdir(parents=True, exist_ok=True)
    file_of, expected, written = {}, {}, 0
    for citing, rows in sorted(by_paper.items()):
        name = re.sub(r"[^\w.-]", "_", citing) + ".pdf"
        draft, cited = typeset(rows, sentences_of[citing], index)
        write_pdf(work / name, draft)
        file_of[name], expected[name] = citing, cited
        written += len(draft.references)
    typeset_seconds = time.time() - started

    read_started = time.time()
    found = contexts_from_files(sorted(work.glob("*.pdf")), index, progress=False)
    read_seconds = time.time() - read_started
    in_corpus = sum(len(cited) for cited in expected.values())
    matched = sum(d.matched for d in found)
    references = sum(d.references for d in found)
    extracted = [row for d in found for row in d.rows]
    read_sets = {(file_of[row["source"]], frozenset(row["relevant"])) for row in extracted
                 if row["granularity"] == "paragraph"}
    reading = {"papers": len(found), "unreadable": [d.name for d in found if d.problem],
               "references_written": written, "references_read": references,
               "references_in_corpus": in_corpus, "references_matched": matched,
               "paragraphs": len(paragraphs),
               "paragraph_contexts_read": sum(row["granularity"] == "paragraph" for row in extracted),
               "paragraphs_read_with_the_same_cited_papers": sum((p["citing_id"], frozenset(p["relevant"])) in read_sets
                                                                 for p in paragraphs),
               "sentence_contexts_read": sum(row["granularity"] == "sentence" for row in extracted),
               "typeset_seconds": round(typeset_seconds, 1), "read_seconds": round(read_seconds, 1)}
    print(json.dumps(reading, indent=1), file=sys.stderr)

    # training: gold rows against rows read from the PDFs, the same folds by citing paper
    contexts = {name: read_contexts(args.data / file, index) for name, file in SETS.items()}
    queries = [q for c in contexts.values() for q in c.queries]
    groups = [g for c in contexts.values() for g in c.groups]
    key = hashlib.sha256(json.dumps([index.version.name, [c.sha256 for c in contexts.values()], LOCAL_FEATURES,
                                     repr(pool_config().with_(pool=POOL))]).encode()).hexdigest()[:16]
    args.cache.mkdir(parents=True, exist_ok=True)
    path = work / "read.jsonl"
    for row in extracted:
        row["citing_id"] = file_of[row["source"]]  # the fold unit: the same citing paper as the gold rows
    write_contexts(extracted, path)
    read_set = read_contexts(path, index)
    texts = sorted({t for q in [*queries, *read_set.queries] for t in (q.query.main_text, q.query.global_text) if t})
    encoder = CachedVectors(get_encoder("sbert", index.manifest["max_tokens"]), args.cache / "vectors.npz", texts)
    rec = Recommender(index, head=load_head(index.root, index.dense.shape[1]), encoder=encoder)
    gold = cached_pools(rec, queries, args.cache / f"pools-{key}.pkl")
    pools_started = time.time()
    read_pools = collect_pools(rec, read_set.queries, pool_config().with_(pool=POOL), progress=False)
    pools_seconds = time.time() - pools_started
    folds = grouped_folds(groups, 5, args.seed)
    fold_of = dict(zip(groups, folds.tolist()))
    read_folds = np.array([fold_of[g] for g in read_set.groups])

    scores = {"learned-local, gold contexts": [None] * len(queries), "learned-local, contexts read from PDFs":
              [None] * len(queries)}
    for fold in range(int(folds.max()) + 1):
        models = {"learned-local, gold contexts": fit_pools([p for p, f in zip(gold, folds) if f != fold],
                                                            seed=args.seed),
                  "learned-local, contexts read from PDFs": fit_pools(
                      [p for p, f in zip(read_pools, read_folds) if f != fold], seed=args.seed)}
        for i in np.flatnonzero(folds == fold):
            for name, model in models.items():
                scores[name][i] = model.score(gold[i].features)

    results, offset = {}, 0
    for name, context_set in contexts.items():
        span = range(offset, offset + len(context_set.queries))
        offset += len(context_set.queries)
        hybrid = METHODS["hybrid"].with_(pool=POOL)
        runs = {"hybrid": [([index.ids[p] for p in rec.rank(queries[i].query, hybrid, k=1000).positions],
                            queries[i].relevant) for i in span],
                "full (default)": [([index.ids[int(gold[i].candidates[j])] for j in np.argsort(-gold[i].fused,
                                                                                                kind="stable")],
                                    queries[i].relevant) for i in span]}
        for method, method_scores in scores.items():
            runs[method] = [([index.ids[int(gold[i].candidates[j])] for j in np.argsort(-method_scores[i],
                                                                                       kind="stable")],
                             queries[i].relevant) for i in span]
        results[name] = {method: {**metrics(r), "ndcg@10_gain_ci95": gain_interval(r, runs["hybrid"],
                                                                                     [groups[i] for i in span],
                                                                                     args.seed)}
                         for method, r in runs.items()}
    report = {"index": str(args.index), "papers": len(index), "date": time.strftime("%Y-%m-%d"), "reading": reading,
              "read_contexts": len(read_set.queries), "read_pools_seconds": round(pools_seconds, 1),
              "seconds": round(time.time() - started), "machine": machine.line(), "results": results}
    write_json(args.json, report, say=False)
    for name, rows in results.items():
        print(f"\n### {name}\n\n| method | R@10 | nDCG@10 | MRR | nDCG@10 vs hybrid (95% interval) |\n"
              "| --- | ---: | ---: | ---: | ---: |")
        for method, m in rows.items():
            low, high = m["ndcg@10_gain_ci95"]
            gain = 100 * (m["ndcg@10"] / rows["hybrid"]["ndcg@10"] - 1)
            versus = "baseline" if method == "hybrid" else f"{gain:+.1f}% ({low:+.1f}% to {high:+.1f}%)"
            print(f"| {method} | {m['recall@10']:.4f} | {m['ndcg@10']:.4f} | {m['mrr']:.4f} | {versus} |")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{report['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
