"""The reference check (issue 28) on reference lists with known errors, written at run time from corpus papers.

    python -m bench.reference_check [--corpora demo acm hepth] [--lists 10] [--seed 0] [--json OUT]

For each corpus, `--lists` lists of 60 references are written from its papers in the styles of the PDF
reference benchmark (`bench/references.py`: ACM, APA, IEEE, Springer, Chicago, Nature; numbered and wrapped as
copied from a PDF) and as BibTeX (`corpus.export.to_bibtex`), and errors are injected (the classes below). Each list
is parsed as a user's list would be and checked offline (`check_references` with the corpus as its source and a
Retraction Watch store written for the run); every reference's verdict is compared with the class it was made as.

Classes and the verdict each should get:
  correct             the paper as it is                                            verified
  correct, venue as its series
                      (ACM-CR) "Proceedings of SIGIR '20" for the venue's full name  verified
  correct, as its arXiv preprint
                      a published paper with an arXiv id cited by it, same year    verified
  retracted           a paper the run's Retraction Watch store marks as retracted  retracted
  fabricated          invented: a title recombined from two corpus titles' words,
                      corpus author names, a corpus venue and year                  not found
  fabricated outside  the same with a venue the corpus does not hold               not checked (offline)
  year +-1, year +-5  a wrong year                                                  details differ
  venue               another venue of the corpus                                   details differ
  authors dropped     one author left out (of two or more)                          details differ
  authors swapped     the first two authors swapped                                 details differ
  doi                 another corpus paper's DOI, or one with a changed digit      details differ
  arxiv               another corpus paper's arXiv id (corpora with arXiv ids)      details differ
  version swap        a published paper cited as its preprint (the year before),
                      or a preprint cited as published (another venue, a year on)   details differ (never worse)

Reported: per verdict precision and recall; per class the verdicts given; the share of correct references called
anything but verified (goal 0); detail errors called "not found" (goal 0); fabricated ones called "not found"
(goal >= 0.95); whether a "details differ" names the injected field; and the time of one 60-reference list checked
offline against the 108,857-paper ACM-CR index (goal <= 2 s), the one-time loading of the corpus source apart.

Real references: the lists above are written from the corpus, so every real reference is in it. Real lists cite
mostly works a corpus does not hold, and those must not be called "not found" (the false alarm checkers are known
for). So each corpus also checks the unArXive sample's 1,779 raw reference strings, as real authors wrote them, in
lists of 60: none is fabricated, so every "not found" is a false alarm (--examples prints them).

Corpora: demo (assets/demo_corpus.jsonl), acm (ACM-CR: the index --acm-index when given, else
the corpus file), hepth (the KDD Cup 2003 papers). Data under ../shared/data beside the checkout;
nothing derived from it is written outside a temporary folder.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from bench import machine, paths
from bench.references import FORMATTERS, NUMBER_FORMATS, split_name, venue_kind, wrap
from recommender.corpus.export import to_bibtex
from recommender.corpus.identifiers import normalize_title
from recommender.paper import Paper
from recommender.references.check import VERDICTS, check_references
from recommender.references.corpus_source import CorpusSource
from recommender.references.parse import parse_reference_list
from recommender.references.retractions import RetractionStore, import_csv
from recommender.references.venues import is_preprint_venue

DATA = paths.DATA
CORPUS_FILES = {"demo": paths.ROOT / "assets" / "demo_corpus.jsonl", "acm": DATA / "acm-cr" / "corpus.jsonl.gz",
                "hepth": DATA / "hepth-kddcup2003" / "papers.jsonl.gz"}
LIST_SIZE = 60
STYLES = [*FORMATTERS, "bibtex"]
DOI_STYLES = ["acm", "apa", "chicago", "bibtex"]  # styles that print a DOI
EXPECTED = {"correct": "verified", "correct, venue as its series": "verified",
            "correct, as its arXiv preprint": "verified", "retracted": "retracted", "fabricated": "not found",
            "fabricated outside": "not checked", "year +-1": "details differ", "year +-5": "details differ",
            "venue": "details differ", "authors dropped": "details differ", "authors swapped": "details differ",
            "doi": "details differ", "arxiv": "details differ", "version swap": "details differ"}
FIELDS = {"year +-1": {"year"}, "year +-5": {"year"}, "venue": {"venue"},
          "authors dropped": {"authors", "first author"}, "authors swapped": {"authors", "first author"},
          "doi": {"doi"}, "arxiv": {"arxiv"}, "version swap": {"version", "year", "venue"}}
# references of each class in a list of 60 (the rest correct); arxiv only where the corpus has arXiv ids
PER_LIST = {"correct, venue as its series": 3, "correct, as its arXiv preprint": 3, "retracted": 2, "fabricated": 6,
            "fabricated outside": 2, "year +-1": 3, "year +-5": 3, "venue": 3,
            "authors dropped": 3, "authors swapped": 3, "doi": 3, "arxiv": 3, "version swap": 3}
OUTSIDE_VENUES = ["Journal of Marine Sediment Dynamics", "Proceedings of the International Symposium on Orchard "
                  "Robotics", "Annals of Veterinary Dermatology", "Transactions on Bridge Acoustics",
                  "Quarterly Review of Medieval Numismatics"]
DETAIL_CLASSES = [name for name, verdict in EXPECTED.items() if verdict == "details differ"]


# ----------------------------------------------------------------------------------------------- corpora


def load_records(name: str) -> list[dict]:
    path = CORPUS_FILES[name]
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    for record in records:
        if name == "hepth":
            record.setdefault("arxiv", record["id"])
    return records


def corpus_source(name: str, records: list[dict], acm_index: Path | None) -> tuple[CorpusSource, float]:
    started = time.perf_counter()
    if name == "acm" and acm_index is not None and (acm_index / "CURRENT").is_file():
        from recommender.store.index import Index
        source = CorpusSource.from_index(Index.load(acm_index))
    else:
        source = CorpusSource.from_papers([Paper.from_dict(r) for r in records])
    return source, time.perf_counter() - started


def arxiv_of(record: dict) -> str:
    return str(record.get("arxiv") or "")


def kind_of(name: str, record: dict) -> str:
    venue = record.get("venue") or ""
    if not venue or is_preprint_venue(venue):
        return "preprint" if arxiv_of(record) else "other"
    return "journal" if name == "hepth" else venue_kind(venue)


# ----------------------------------------------------------------------------------------------- references


def facts(record: dict, rng: random.Random, kind: str, doi: bool) -> dict:
    first_page = rng.randint(1, 900)
    return {"authors": [split_name(a) for a in record["authors"]], "title": record["title"],
            "venue": record.get("venue") or "", "year": record["year"], "kind": kind,
            "volume": rng.randint(1, 60), "issue": rng.randint(1, 12),
            "pages": f"{first_page}–{first_page + rng.randint(5, 20)}",
            "doi": record.get("doi") if doi else None, "arxiv": arxiv_of(record) or None}


def fabricated(records: list[dict], titles: set[str], rng: random.Random, outside: bool) -> dict:
    """A reference to no paper: the first words of one corpus title and the last of another, corpus authors."""
    while True:
        a, b = rng.sample(records, 2)
        wa, wb = a["title"].split(), b["title"].split()
        if len(wa) < 3 or len(wb) < 3:
            continue
        title = " ".join(wa[:max(2, len(wa) // 2)] + wb[len(wb) // 2:])
        if normalize_title(title) not in titles:
            break
    names = [n for r in rng.sample(records, 3) for n in r["authors"][:2]]
    authors = rng.sample(names, min(len(names), rng.randint(1, 4))) or ["Anna Rossi"]
    host = rng.choice([r for r in records if r.get("venue") and not is_preprint_venue(r["venue"])])
    venue = rng.choice(OUTSIDE_VENUES) if outside else host["venue"]
    return {"title": title, "authors": authors, "venue": venue, "year": host["year"], "doi": "", "arxiv": ""}


def make_reference(cls: str, record: dict, corpus: str, records: list[dict], titles: set[str],
                   rng: random.Random) -> tuple[dict, str]:
    """(facts of the reference as written, its style) for one class."""
    if cls.startswith("fabricated"):
        record = fabricated(records, titles, rng, cls == "fabricated outside")
    style = rng.choice(DOI_STYLES if cls == "doi" else STYLES)
    kind = kind_of(corpus, record)
    if kind == "other":
        kind = "journal" if record.get("venue") else "conference"
    f = facts(record, rng, kind, doi=bool(record.get("doi")) and (cls == "doi" or rng.random() < 0.6))
    if cls == "year +-1":
        f["year"] += rng.choice((-1, 1))
    elif cls == "year +-5":
        f["year"] += rng.choice((-5, 5))
    elif cls == "venue":
        f["venue"] = other_venue(record, records, rng)
    elif cls == "correct, venue as its series":  # "Proceedings of SIGIR '20" for the full name
        f["venue"] = record["series"]
    elif cls == "correct, as its arXiv preprint":  # a published paper cited by its arXiv id, the same year
        f["kind"] = "preprint"
    elif cls == "authors dropped":
        del f["authors"][rng.randrange(len(f["authors"]))]
    elif cls == "authors swapped":
        f["authors"][0], f["authors"][1] = f["authors"][1], f["authors"][0]
    elif cls == "doi":
        other = rng.choice([r for r in records if r.get("doi") and r["doi"] != record.get("doi")])
        f["doi"] = other["doi"] if rng.random() < 0.5 else changed_digit(record["doi"], rng)
    elif cls == "arxiv":
        f["arxiv"] = rng.choice([arxiv_of(r) for r in records if arxiv_of(r) and arxiv_of(r) != arxiv_of(record)])
        f["kind"] = "preprint"
    elif cls == "version swap":
        if kind != "preprint":  # published, cited as its preprint the year before
            f["kind"], f["year"] = "preprint", f["year"] - 1
            f["arxiv"] = f["arxiv"] or f"{str(f['year'])[2:]}{rng.randint(1, 12):02d}.{rng.randint(10000, 99999)}"
        else:  # a preprint cited as published, a year on
            host = rng.choice([r for r in records if r.get("venue") and not is_preprint_venue(r["venue"])])
            f["kind"], f["venue"], f["year"], f["arxiv"] = "journal", host["venue"], f["year"] + 1, None
    return f, style


def other_venue(record: dict, records: list[dict], rng: random.Random) -> str:
    from recommender.references.venues import venue_words
    own = venue_words(record.get("venue") or "")
    while True:
        venue = rng.choice(records).get("venue") or ""
        if venue and not is_preprint_venue(venue) and venue_words(venue) and not (venue_words(venue) & own):
            return venue


def changed_digit(doi: str, rng: random.Random) -> str:
    places = [i for i, ch in enumerate(doi) if ch.isdigit() and i > doi.find("/")]
    i = rng.choice(places)
    return doi[:i] + str((int(doi[i]) + rng.randint(1, 9)) % 10) + doi[i + 1:]


def eligible(cls: str, record: dict, corpus: str) -> bool:
    if cls == "authors dropped":  # every style lists up to four authors in full
        return 2 <= len(record["authors"]) <= 4
    if cls == "authors swapped":
        return len(record["authors"]) >= 2
    if cls == "doi":
        return bool(record.get("doi"))
    if cls == "arxiv":
        return bool(arxiv_of(record))
    if cls == "venue":
        return bool(record.get("venue")) and not is_preprint_venue(record["venue"])
    if cls == "correct, venue as its series":
        return bool(record.get("series"))
    if cls == "correct, as its arXiv preprint":
        return bool(arxiv_of(record)) and bool(record.get("venue")) and not is_preprint_venue(record["venue"])
    return True


def as_bibtex(f: dict, key_hint: int) -> str:
    authors = [" ".join(given + [surname]) for given, surname in f["authors"]]
    extra = {"doi": f["doi"] or ""}
    if f["kind"] == "preprint" and f.get("arxiv"):
        extra.update({"arxiv": f["arxiv"], "entry_type": "misc"})
        venue = "arXiv preprint"
    else:
        venue = f["venue"]
        extra["entry_type"] = {"journal": "article", "book": "book"}.get(f["kind"], "inproceedings")
    entry = to_bibtex([Paper(id=str(key_hint), title=f["title"], authors=authors, venue=venue, year=f["year"],
                             extra={k: v for k, v in extra.items() if v})])
    return re.sub(r"^@(\w+)\{[^,]*,", lambda m: f"@{m.group(1)}{{ref{key_hint},", entry)


def applicable(records: list[dict]) -> list[str]:
    """The classes a corpus can make (DOI and arXiv errors need papers with DOIs and arXiv ids)."""
    arxiv = sum(bool(arxiv_of(r)) for r in records)
    return [cls for cls in PER_LIST if (cls != "doi" or sum(bool(r.get("doi")) for r in records) >= 10)
            and (cls not in ("arxiv", "correct, as its arXiv preprint") or arxiv >= 10)
            and (cls != "correct, venue as its series" or sum(bool(r.get("series")) for r in records) >= 10)]


def make_list(corpus: str, records: list[dict], titles: set[str], marked: set[str], rng: random.Random,
              bibtex: bool) -> tuple[str, list[str]]:
    """A list of LIST_SIZE references (text as copied from a PDF, or BibTeX) and the class of each, in order;
    `marked`: ids of the papers the run's Retraction Watch store marks."""
    classes = [cls for cls in applicable(records) for _ in range(PER_LIST[cls])]
    classes += ["correct"] * (LIST_SIZE - len(classes))
    rng.shuffle(classes)
    with_authors = [r for r in records if r.get("authors") and r.get("year") and r.get("title")]
    retracted = [r for r in with_authors if r["id"] in marked]
    with_authors = [r for r in with_authors if r["id"] not in marked]
    entries, labels = [], []
    for number, cls in enumerate(classes, start=1):
        pool = retracted if cls == "retracted" else with_authors
        record = rng.choice(pool)
        while not eligible(cls, record, corpus):
            record = rng.choice(pool)
        f, style = make_reference(cls, record, corpus, records, titles, rng)
        if bibtex:
            entries.append(as_bibtex(f, number))
        else:
            if style == "bibtex":
                style = rng.choice([s for s in (DOI_STYLES if cls == "doi" else FORMATTERS) if s != "bibtex"])
            entries.append(f"{NUMBER_FORMATS[style].format(number)} {FORMATTERS[style](f)}")
        labels.append(cls)
    if bibtex:
        return "\n".join(entries), labels
    width = rng.randint(70, 100)
    lines = [line for entry in entries for line in wrap(entry, width, rng, hyphenate=0.3)]
    return "\n".join(lines) + "\n", labels


def retraction_store(records: list[dict], rng: random.Random, folder: Path) -> tuple[RetractionStore, set[str]]:
    """A Retraction Watch CSV marking a few corpus papers as retracted (by DOI; in a corpus without DOIs by title,
    "unavailable" standing for the DOI as in the real file), imported into a store."""
    with_doi = [r for r in records if r.get("doi") and r.get("authors") and r.get("year")]
    if len(with_doi) < 10:
        with_doi = [{**r, "doi": "unavailable"} for r in records if r.get("authors") and r.get("year")
                    and len(r.get("title", "").split()) >= 5]
    chosen = rng.sample(with_doi, min(20, len(with_doi) // 3))
    header = ["Record ID", "Title", "Subject", "Institution", "Journal", "Publisher", "Country", "Author", "URLS",
              "ArticleType", "RetractionDate", "RetractionDOI", "RetractionPubMedID", "OriginalPaperDate",
              "OriginalPaperDOI", "OriginalPaperPubMedID", "RetractionNature", "Reason", "Paywalled", "Notes"]
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows([i, r["title"], "", "", r.get("venue", ""), "", "", ";".join(r["authors"]), "",
                      "Research Article;", f"3/1/{r['year'] + 2} 0:00", f"10.9999/notice.{i}", "0",
                      f"1/1/{r['year']} 0:00", r["doi"], "0", "Retraction", "+Error in Data;", "No", ""]
                     for i, r in enumerate(chosen))
    csv_path = folder / "retraction_watch.csv"
    csv_path.write_text(out.getvalue(), encoding="utf-8")
    import_csv(csv_path, folder / "retractions.sqlite")
    return RetractionStore(folder / "retractions.sqlite"), {r["id"] for r in chosen}


# ----------------------------------------------------------------------------------------------- the run


def align(items, labels: list[str], bibtex: bool) -> list[tuple[str, object]]:
    """(class, item) for each reference read: by entry number (text) or key (BibTeX)."""
    pairs = []
    for item in items:
        index = int(item.key[3:]) if bibtex and item.key.startswith("ref") else item.number
        if index and 1 <= index <= len(labels):
            pairs.append((labels[index - 1], item))
    return pairs


def real_references(source: CorpusSource, store: RetractionStore, folder: Path) -> dict:
    """Real works as real authors cite them: the unArXive sample's 1,779 raw reference strings (from the reference
    lists of 49 arXiv papers of Dec 2022, every field), in lists of 60, checked offline against `source`. None is
    fabricated, so each "not found" is a false alarm; a "details differ" may be a real slip or a false alarm."""
    path = DATA / "unarxive-sample" / "corpus.jsonl.gz"
    if not path.is_file():
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        raws = [json.loads(line)["title"] for line in handle if line.strip()]
    verdicts, shown = Counter(), []
    for start in range(0, len(raws), LIST_SIZE):
        text = "\n".join(f"[{n}] {raw}" for n, raw in enumerate(raws[start:start + LIST_SIZE], start=1))
        list_path = folder / f"real{start}.txt"
        list_path.write_text(text, encoding="utf-8")
        items = parse_reference_list(list_path)
        for item, check in zip(items, check_references(items, [source], store)):
            verdicts[check.verdict] += 1
            if check.verdict in ("not found", "details differ"):
                shown.append({"reference": item.raw[:300], "verdict": check.verdict,
                              "differences": check.differences})
    return {"strings": len(raws), "read": sum(verdicts.values()), "verdicts": dict(verdicts), "flagged": shown}


def run_corpus(name: str, lists: int, seed: int, acm_index: Path | None) -> dict:
    rng = random.Random(f"{name}-{seed}")
    records = load_records(name)
    titles = {normalize_title(r["title"]) for r in records if r.get("title")}
    source, load_s = corpus_source(name, records, acm_index)
    folder = Path(tempfile.mkdtemp(prefix="refcheck-"))
    store, marked = retraction_store(records, rng, folder)
    outcomes: list[tuple[str, str, set[str]]] = []  # (class, verdict, fields named)
    times, misread, examples = [], 0, defaultdict(list)
    for number in range(lists):
        bibtex = number % 4 == 3
        text, labels = make_list(name, records, titles, marked, rng, bibtex)
        path = folder / f"list{number}.{'bib' if bibtex else 'txt'}"
        path.write_text(text, encoding="utf-8")
        items = parse_reference_list(path)
        pairs = align(items, labels, bibtex)
        misread += len(labels) - len(pairs)
        started = time.perf_counter()
        checks = check_references([item for _, item in pairs], [source], store)
        times.append(time.perf_counter() - started)
        for (cls, item), check in zip(pairs, checks):
            outcomes.append((cls, check.verdict, set(check.differences)))
            if check.verdict != EXPECTED[cls] and len(examples[cls]) < 3:
                examples[cls].append({"reference": item.raw[:300], "verdict": check.verdict,
                                      "differences": check.differences, "note": check.note[:300]})
    return {"corpus": name, "papers": source.size, "lists": lists, "references": len(outcomes),
            "misread": misread, "load_s": round(load_s, 2), "times": times, "outcomes": outcomes,
            "examples": dict(examples), "real": real_references(source, store, folder)}


def summarise(run: dict) -> dict:
    outcomes = run["outcomes"]
    per_class = {cls: Counter(v for c, v, _ in outcomes if c == cls) for cls in EXPECTED}
    per_class = {cls: counts for cls, counts in per_class.items() if counts}
    per_verdict = {}
    for verdict in VERDICTS:
        predicted = sum(1 for _, v, _ in outcomes if v == verdict)
        gold = sum(1 for c, _, _ in outcomes if EXPECTED[c] == verdict)
        right = sum(1 for c, v, _ in outcomes if v == verdict and EXPECTED[c] == verdict)
        per_verdict[verdict] = {"predicted": predicted, "gold": gold,
                                "precision": right / predicted if predicted else None,
                                "recall": right / gold if gold else None}
    correct = [v for c, v, _ in outcomes if EXPECTED[c] == "verified"]
    details = [(c, v, f) for c, v, f in outcomes if c in DETAIL_CLASSES]
    fabricated = [v for c, v, _ in outcomes if c == "fabricated"]
    flagged = [(c, f) for c, v, f in details if v == "details differ"]
    return {
        "per_class": {cls: dict(counts) for cls, counts in per_class.items()},
        "per_verdict": per_verdict,
        "correct_not_verified": sum(v != "verified" for v in correct) / max(1, len(correct)),
        "details_not_found": sum(v == "not found" for _, v, _ in details) / max(1, len(details)),
        "details_worse_than_differ": sum(v not in ("details differ", "verified") for _, v, _ in details)
        / max(1, len(details)),
        "fabricated_not_found": sum(v == "not found" for v in fabricated) / max(1, len(fabricated)),
        "field_named": sum(bool(f & FIELDS[c]) for c, f in flagged) / max(1, len(flagged)),
        "list_s_median": statistics.median(run["times"]), "list_s_max": max(run["times"]),
    }


def print_report(runs: list[dict], summaries: list[dict]) -> None:
    print(f"\nmachine: {machine.line()}; date {time.strftime('%Y-%m-%d')}\n")
    print("| corpus | papers | lists | references (misread) | correct called other than verified (goal 0) | detail "
          "errors called not found (goal 0) | fabricated called not found (goal ≥ 0.95) | details differ naming the "
          "injected field | 60-reference list, median / max s | corpus source load s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for run, s in zip(runs, summaries):
        print(f"| {run['corpus']} | {run['papers']:,} | {run['lists']} | {run['references']} ({run['misread']}) | "
              f"{s['correct_not_verified']:.3f} | {s['details_not_found']:.3f} | {s['fabricated_not_found']:.3f} | "
              f"{s['field_named']:.3f} | {s['list_s_median']:.3f} / {s['list_s_max']:.3f} | {run['load_s']:.1f} |")
    real = [run for run in runs if run["real"]]
    if real:
        print("\nReal references (the unArXive sample's raw reference strings, every field; none fabricated), "
              "checked offline:\n")
        print("| corpus | references read | " + " | ".join(VERDICTS) + " | not found (false alarms, goal 0) |")
        print("| --- | ---: | " + " | ".join("---:" for _ in VERDICTS) + " | ---: |")
        for run in real:
            counts, read = run["real"]["verdicts"], run["real"]["read"]
            print(f"| {run['corpus']} | {read} | " + " | ".join(str(counts.get(v, 0)) for v in VERDICTS) +
                  f" | {counts.get('not found', 0) / max(1, read):.4f} |")
    for run, s in zip(runs, summaries):
        print(f"\n{run['corpus']}: verdict per class\n")
        print("| class | expected | n | " + " | ".join(VERDICTS) + " |")
        print("| --- | --- | ---: | " + " | ".join("---:" for _ in VERDICTS) + " |")
        for cls, counts in s["per_class"].items():
            n = sum(counts.values())
            print(f"| {cls} | {EXPECTED[cls]} | {n} | " + " | ".join(str(counts.get(v, 0)) for v in VERDICTS) + " |")
        print(f"\n{run['corpus']}: precision and recall per verdict\n")
        print("| verdict | given | expected | precision | recall |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for verdict, m in s["per_verdict"].items():
            p = "–" if m["precision"] is None else f"{m['precision']:.3f}"
            r = "–" if m["recall"] is None else f"{m['recall']:.3f}"
            print(f"| {verdict} | {m['predicted']} | {m['gold']} | {p} | {r} |")


def numbers_only(run: dict) -> dict:
    """A run as the results file keeps it: counts and times, no reference's text (the lists are written from the
    benchmark data, which nothing committed may hold)."""
    kept = {k: v for k, v in run.items() if k not in ("outcomes", "examples", "real")}
    return {**kept, "real": {k: v for k, v in run["real"].items() if k != "flagged"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", nargs="+", default=["demo", "acm", "hepth"], choices=sorted(CORPUS_FILES))
    parser.add_argument("--lists", type=int, default=10, help="lists of 60 references per corpus (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--acm-index", type=Path, help="the ACM-CR index (its records and look-up tables: the "
                        "timed source); without one, the corpus file")
    parser.add_argument("--json", type=Path, help="also write the numbers here (never a reference's text)")
    parser.add_argument("--examples", action="store_true", help="print a few references per class whose verdict "
                                                                 "was not the expected one")
    args = parser.parse_args()
    runs = []
    for name in args.corpora:
        print(f"{name}: writing and checking {args.lists} lists…", file=sys.stderr)
        runs.append(run_corpus(name, args.lists, args.seed, args.acm_index))
    summaries = [summarise(run) for run in runs]
    print_report(runs, summaries)
    if args.examples:
        for run in runs:
            for flagged in run["real"].get("flagged", []):
                print(f"\n[{run['corpus']} / real] {flagged['verdict']}: {flagged['reference']}\n"
                      f"    {flagged['differences']}")
            for cls, shown in run["examples"].items():
                for example in shown:
                    print(f"\n[{run['corpus']} / {cls}] {example['verdict']}: {example['reference']}\n"
                          f"    {example['differences']} {example['note']}")
    if args.json:
        out = {"machine": machine.line(), "date": time.strftime("%Y-%m-%d"), "load": machine.load(),
               "command": " ".join(sys.argv),
               "runs": [{**numbers_only(run), **summary} for run, summary in zip(runs, summaries)]}
        paths.write_json(args.json, out, default=str)


if __name__ == "__main__":
    main()
