"""Reference lists as a reviewer copies them out of a PDF, and how well they are matched to the corpus.

    python -m bench.references generate --seed 2 --out bench/data/reference_lists
    python -m bench.references evaluate [--lists bench/data/reference_lists | --seeds 10:30] [--baseline REV]

`generate` writes one list per citation style (ACM, APA, IEEE, Springer, Chicago, Nature) and variant
(numbered, unnumbered) from the demo corpus's facts: about 20 corpus papers and 5 references the corpus
does not hold (invented titles; some by corpus authors, some extending or sharing the start of a corpus
title). Lines are wrapped greedily at a width of 60-90 characters that varies a little from line to line
(a proportional font), long words are hyphenated at line ends, long URLs broken, and some lists carry a
page number between two pages. `gold.json` records which corpus paper each entry is (null: none).

`evaluate` parses every list, matches it against the demo corpus and reports, per style, the precision and
recall of the set of corpus papers found (the set a reviewer's suggestions exclude). `--baseline REV`
measures the parser and matcher at git revision REV instead (one file, `recommender/references.py`, in revisions
before the engine was grouped into packages).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

from recommender.paper import Paper

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "assets" / "demo_corpus.jsonl"
STYLES = ["acm", "apa", "ieee", "springer", "chicago", "nature"]
NUMBER_FORMATS = {"acm": "[{}]", "ieee": "[{}]", "springer": "{}.", "nature": "{}.", "apa": "{}.", "chicago": "({})"}
CORPUS_ENTRIES, DISTRACTORS = 20, 5
PARTICLES = {"van", "von", "der", "den", "de", "del", "dos", "ter", "della", "di", "da", "du", "le", "la"}
JOURNAL_WORDS = ("Journal", "Transactions", "Science", "Scientometrics", "Documentation", "Computation", "Programming",
                 "Learning", "Networks", "Research", "Review", "review", "Computer", "Communications", "Foundations",
                 "Access", "Bulletin", "Systems", "Evaluation", "Physics", "Forum", "Libraries", "Series")
BOOK_WORDS = ("Press", "University", "Springer", "Handbook", "Report", "Prentice")

# Invented references: words to build titles and names the corpus does not hold.
TOPICS = ["citation recommendation", "query expansion", "dense retrieval", "scholarly search", "reviewer assignment",
          "entity linking", "document ranking", "graph embeddings", "topic models", "passage reranking",
          "author disambiguation", "keyword extraction", "collaborative filtering", "question answering",
          "text classification", "relevance feedback", "learning to rank", "sentence embeddings"]
QUALIFIERS = ["scalable", "robust", "interpretable", "contrastive", "hierarchical", "multilingual", "incremental",
              "federated", "explainable", "privacy-preserving", "few-shot", "unsupervised", "efficient"]
SETTINGS = ["scientific literature", "patent search", "legal documents", "biomedical abstracts", "code search",
            "digital libraries", "news archives", "e-commerce catalogues", "low-resource languages"]
TEMPLATES = ["{Q} {t} for {s}", "Towards {q} {t} in {s}", "On the limits of {t} for {s}", "{T} with {q} signals",
             "A study of {q} {t}", "Revisiting {t}: lessons from {s}", "What makes {t} work in {s}?",
             "{T} at scale: a case study on {s}"]
EXTENSIONS = [": An extended study", " revisited", ": A reproducibility study", " for code search",
              " in the biomedical domain", ": Lessons learned"]
GIVEN = ["Anna", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hiroshi", "Ines", "Jonas", "Kavya", "Lucas",
         "Mei", "Nadia", "Oskar", "Priya", "Rafael", "Sofia", "Tomasz", "Yara", "Ji-Won", "Marie-Claire"]
FAMILY = ["Andersen", "Barbosa", "Castellano", "Dubois", "Eriksen", "Fujimoto", "Gallagher", "Haddad", "Ivanova",
          "Janssen", "Kowalczyk", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rossi",
          "Schäfer", "Tanaka", "van den Berg", "Wójcik", "Yilmaz", "Zhou"]


# ----------------------------------------------------------------------------------------------- facts


def load_corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_name(name: str) -> tuple[list[str], str]:
    """(given names, surname) of "Given Middle Surname", keeping particles such as "van den" in the surname."""
    tokens = name.replace(",", " ").split()
    while len(tokens) > 2 and tokens[-1].rstrip(".").lower() in ("jr", "sr", "ii", "iii", "iv"):
        tokens.pop()  # "S. James Gates, Jr": written as references usually do, without the suffix
    start = len(tokens) - 1
    while start > 1 and tokens[start - 1].lower() in PARTICLES:
        start -= 1
    return tokens[:start], " ".join(tokens[start:])


def initials(given: list[str], spaced: bool = True) -> str:
    """"W. B." for ["W.", "Bruce"]; "J.-Y." for ["Jun-Yan"]."""
    parts = ["-".join(piece[0] + "." for piece in token.split("-") if piece) for token in given]
    return (" " if spaced else "").join(parts)


def venue_kind(venue: str) -> str:
    if not venue or "arXiv" in venue or venue == "CoRR":
        return "preprint"
    if any(word in venue for word in BOOK_WORDS):
        return "book"
    if any(word in venue for word in JOURNAL_WORDS):
        return "journal"
    return "conference"


def sentence_case(title: str) -> str:
    """APA/Nature titles: lower case except the first word, acronyms and words after a colon."""
    words, out, capitalise = title.split(), [], True
    for word in words:
        keep = capitalise or any(ch.isupper() for ch in word[1:]) or word.isupper()
        out.append(word if keep else word.lower())
        capitalise = word.endswith(":")
    return " ".join(out)


def entry_facts(record: dict, rng: random.Random) -> dict:
    """What a style needs to write one reference, with invented volume and pages."""
    first_page = rng.randint(1, 900)
    kind = venue_kind(record.get("venue") or "")
    if record.get("arxiv") and kind == "conference" and rng.random() < 0.2:
        kind = "preprint"
    return {"authors": [split_name(a) for a in record["authors"]], "title": record["title"],
            "venue": record.get("venue") or "", "year": record["year"], "kind": kind,
            "volume": rng.randint(1, 60), "issue": rng.randint(1, 12),
            "pages": f"{first_page}–{first_page + rng.randint(5, 20)}",
            "doi": record.get("doi") if rng.random() < 0.6 else None, "arxiv": record.get("arxiv")}


def invented_title(rng: random.Random) -> str:
    topic, qualifier, setting = rng.choice(TOPICS), rng.choice(QUALIFIERS), rng.choice(SETTINGS)
    title = rng.choice(TEMPLATES).format(q=qualifier, Q=qualifier.capitalize(), t=topic, T=topic.capitalize(),
                                         s=setting)
    return title[0].upper() + title[1:]


def invented_authors(rng: random.Random) -> list[str]:
    return [f"{rng.choice(GIVEN)} {rng.choice(FAMILY)}" for _ in range(rng.randint(1, 4))]


def distractors(records: list[dict], taken: set[str], rng: random.Random) -> list[dict]:
    """References the corpus does not hold: invented, by corpus authors, extending or starting like a corpus title."""
    titles = {r["title"].casefold() for r in records}
    others = [r for r in records if r["id"] not in taken and r["authors"]]
    venues = sorted({r["venue"] for r in records if r.get("venue")})
    made = []
    for kind in ("invented", "invented", "same-authors", "extended", "half-title"):
        source = rng.choice(others)
        if kind == "invented":
            record = {"authors": invented_authors(rng), "title": invented_title(rng), "year": rng.randint(1995, 2025)}
        elif kind == "same-authors":
            record = {"authors": source["authors"], "title": invented_title(rng),
                      "year": source["year"] + rng.randint(0, 3)}
        elif kind == "extended":
            record = {"authors": source["authors"], "title": source["title"] + rng.choice(EXTENSIONS),
                      "year": source["year"] + rng.randint(1, 4)}
        else:
            words = source["title"].split()
            tail = invented_title(rng).split()
            record = {"authors": invented_authors(rng),
                      "title": " ".join(words[:max(2, len(words) // 2)] + tail[len(tail) // 2:]),
                      "year": rng.randint(1995, 2025)}
        if record["title"].casefold() in titles:
            continue
        record["venue"] = rng.choice(venues)
        made.append(record)
    return made


# ----------------------------------------------------------------------------------------------- styles


def name_list(names: list[str], last_joiner: str, serial_comma: bool = True) -> str:
    if len(names) <= 1:
        return "".join(names)
    if len(names) == 2:
        return f"{names[0]}{last_joiner}{names[1]}"
    comma = "," if serial_comma else ""
    return ", ".join(names[:-1]) + f"{comma}{last_joiner}{names[-1]}"


def closed(title: str, mark: str = ".") -> str:
    """A title with the punctuation that ends it, unless it ends with its own question or exclamation mark."""
    return title if title.endswith(("?", "!")) else title + mark


def doi_url(facts: dict) -> str:
    return f" https://doi.org/{facts['doi']}" if facts["doi"] else ""


def acm(f: dict) -> str:
    authors = name_list([" ".join(g + [s]) for g, s in f["authors"]], " and ")
    head = f"{authors}. {f['year']}. {closed(f['title'])}"
    if f["kind"] == "preprint" and f["arxiv"]:
        return f"{head} arXiv:{f['arxiv']} ({f['year']})."
    if f["kind"] == "journal":
        return f"{head} {f['venue']} {f['volume']}, {f['issue']} ({f['year']}), {f['pages']}.{doi_url(f)}"
    if f["kind"] == "book":
        return f"{head} {f['venue']}.{doi_url(f)}"
    return f"{head} In Proceedings of {f['venue']}. {f['pages']}.{doi_url(f)}"


def apa(f: dict) -> str:
    names = [f"{s}, {initials(g)}" for g, s in f["authors"]][:20]
    authors = name_list(names, ", & " if len(names) > 2 else ", & ", serial_comma=False).replace(",, &", ", &")
    head = f"{authors} ({f['year']}). {closed(sentence_case(f['title']))}"
    if f["kind"] == "preprint" and f["arxiv"]:
        return f"{head} arXiv. https://arxiv.org/abs/{f['arxiv']}"
    if f["kind"] == "journal":
        return f"{head} {f['venue']}, {f['volume']}({f['issue']}), {f['pages']}.{doi_url(f)}"
    if f["kind"] == "book":
        return f"{head} {f['venue']}."
    return f"{head} In Proceedings of {f['venue']} (pp. {f['pages']}).{doi_url(f)}"


def ieee(f: dict) -> str:
    names = [f"{initials(g)} {s}".strip() for g, s in f["authors"]]
    authors = f"{names[0]} et al." if len(names) > 6 else name_list(names, " and ")
    head = f"{authors}, “{f['title']},”"
    if f["kind"] == "preprint" and f["arxiv"]:
        return f"{head} arXiv:{f['arxiv']}, {f['year']}."
    if f["kind"] == "journal":
        return f"{head} {f['venue']}, vol. {f['volume']}, no. {f['issue']}, pp. {f['pages']}, {f['year']}."
    if f["kind"] == "book":
        return f"{head} {f['venue']}, {f['year']}."
    doi = f", doi: {f['doi']}" if f["doi"] else ""
    return f"{head} in Proc. {f['venue']}, {f['year']}, pp. {f['pages']}{doi}."


def springer(f: dict) -> str:
    names = [f"{s}, {initials(g, spaced=False)}" for g, s in f["authors"]]
    authors = f"{names[0]}, et al." if len(names) > 4 else ", ".join(names)
    head = f"{authors}: {closed(f['title'])}"
    if f["kind"] == "preprint" and f["arxiv"]:
        return f"{head} arXiv preprint arXiv:{f['arxiv']} ({f['year']})"
    if f["kind"] == "journal":
        return f"{head} {f['venue']} {f['volume']}({f['issue']}), {f['pages']} ({f['year']})"
    if f["kind"] == "book":
        return f"{head} {f['venue']} ({f['year']})"
    return f"{head} In: Proceedings of {f['venue']}, pp. {f['pages']} ({f['year']})"


def chicago(f: dict) -> str:
    (g0, s0), rest = f["authors"][0], f["authors"][1:]
    names = [f"{s0}, {' '.join(g0)}".rstrip(", ")] + [" ".join(g + [s]) for g, s in rest]
    if len(names) > 10:
        authors = ", ".join(names[:7]) + ", et al"
    else:
        authors = name_list(names, ", and " if len(names) > 2 else " and ", serial_comma=False)
    head = f"{authors}. {f['year']}. “{closed(f['title'])}”"
    if f["kind"] == "preprint" and f["arxiv"]:
        return f"{head} arXiv preprint, arXiv:{f['arxiv']}."
    if f["kind"] == "journal":
        return f"{head} {f['venue']} {f['volume']} ({f['issue']}): {f['pages']}.{doi_url(f)}"
    if f["kind"] == "book":
        return f"{head} {f['venue']}."
    return f"{head} In Proceedings of {f['venue']}, {f['pages']}.{doi_url(f)}"


def nature(f: dict) -> str:
    names = [f"{s}, {initials(g)}" for g, s in f["authors"]]
    authors = f"{names[0]} et al." if len(names) > 5 else name_list(names, " & ", serial_comma=False)
    head = f"{authors} {closed(sentence_case(f['title']))}"
    if f["kind"] == "preprint" and f["arxiv"]:
        return f"{head} Preprint at https://arxiv.org/abs/{f['arxiv']} ({f['year']})."
    if f["kind"] == "journal":
        return f"{head} {f['venue']} {f['volume']}, {f['pages']} ({f['year']})."
    if f["kind"] == "book":
        return f"{head} ({f['venue']}, {f['year']})."
    return f"{head} in Proc. {f['venue']} {f['pages']} ({f['year']})."


FORMATTERS = {"acm": acm, "apa": apa, "ieee": ieee, "springer": springer, "chicago": chicago, "nature": nature}


# ----------------------------------------------------------------------------------------------- wrapping


def wrap(text: str, width: int, rng: random.Random, hyphenate: float = 0.6) -> list[str]:
    """Greedy line breaking as a PDF viewer copies justified text: widths vary a little, words get hyphenated."""
    lines, line = [], ""
    limit = width + rng.randint(-4, 0)
    words = text.split()
    index = 0
    while index < len(words):
        word = words[index]
        room = limit - len(line) - (1 if line else 0)
        if len(word) <= room:
            line = f"{line} {word}" if line else word
            index += 1
            continue
        head, tail = split_word(word, room, rng, hyphenate)
        if head:
            line = f"{line} {head}" if line else head
            words[index] = tail
        elif not line:  # a word longer than a whole line
            head, tail = word[:limit], word[limit:]
            line, words[index] = head, tail
        lines.append(line)
        line, limit = "", width + rng.randint(-4, 0)
    if line:
        lines.append(line)
    return lines


def split_word(word: str, room: int, rng: random.Random, hyphenate: float) -> tuple[str, str]:
    """("", word) to move the word to the next line, else the piece that stays and the piece that moves."""
    if word.startswith(("http", "doi:")) or "/" in word:  # URLs break after a slash or a dot, without a hyphen
        cuts = [i + 1 for i, ch in enumerate(word[:room]) if ch in "/." and 8 < i + 1 < len(word) - 3]
        return (word[:cuts[-1]], word[cuts[-1]:]) if cuts and room >= 12 else ("", word)
    if "-" in word[:room] and rng.random() < hyphenate:  # break a compound at its own hyphen
        cut = word[:room].rindex("-") + 1
        if cut > 2:
            return word[:cut], word[cut:]
    letters = sum(ch.isalpha() for ch in word)
    if letters < 7 or room < 4 or rng.random() >= hyphenate:
        return "", word
    cuts = [i for i in range(3, min(room - 1, len(word) - 3) + 1)
            if word[i - 1].isalpha() and word[i].isalpha() and word[i:].rstrip(".,;:”)").isalpha()
            and len(word[i:].rstrip(".,;:”)")) >= 3]
    if not cuts:
        return "", word
    cut = rng.choice(cuts)
    return word[:cut] + "-", word[cut:]


# ----------------------------------------------------------------------------------------------- lists


def make_list(style: str, numbered: bool, records: list[dict], rng: random.Random) -> tuple[str, list[str | None]]:
    """The text of one copied reference list and the corpus id (or None) of each entry, in order."""
    chosen = rng.sample([r for r in records if r["authors"] and r.get("year")], CORPUS_ENTRIES)
    entries = [(r["id"], r) for r in chosen]
    entries += [(None, r) for r in distractors(records, {r["id"] for r in chosen}, rng)]
    if numbered:
        rng.shuffle(entries)
    else:
        entries.sort(key=lambda e: (split_name(e[1]["authors"][0])[1].casefold(), e[1]["year"]))
    width = rng.randint(60, 90)
    lines: list[str] = []
    for number, (_, record) in enumerate(entries, start=1):
        text = FORMATTERS[style](entry_facts(record, rng))
        if numbered:
            text = f"{NUMBER_FORMATS[style].format(number)} {text}"
        lines.extend(wrap(text, width, rng))
    if rng.random() < 0.5:  # a page break: the page number of the next page between two lines
        at = rng.randint(len(lines) // 3, 2 * len(lines) // 3)
        lines.insert(at, str(rng.randint(9, 30)))
    return "\n".join(lines) + "\n", [pid for pid, _ in entries]


def generate(seed: int, out: Path) -> None:
    records = load_corpus()
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    gold = {}
    for style in STYLES:
        for numbered in (True, False):
            name = f"{style}-{'numbered' if numbered else 'unnumbered'}.txt"
            text, ids = make_list(style, numbered, records, rng)
            (out / name).write_text(text, encoding="utf-8")
            gold[name] = {"style": style, "numbered": numbered, "entries": ids}
    (out / "gold.json").write_text(json.dumps({"seed": seed, "lists": gold}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(gold)} lists to {out}", file=sys.stderr)


# ----------------------------------------------------------------------------------------------- evaluation


def load_references_module(revision: str | None):
    """The reference-list parser and matcher as they are now, or as they were at a git revision (before the
    engine was grouped into packages: `recommender/references.py`, loaded from `git show`)."""
    if revision is None:
        from recommender.references import match, parse
        return SimpleNamespace(ReferenceIndex=match.ReferenceIndex, parse_reference_list=parse.parse_reference_list)
    source = subprocess.run(["git", "show", f"{revision}:recommender/references.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "references_at_revision.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("recommender.references_at_revision", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def evaluate(folders: list[Path], revision: str | None) -> dict:
    references = load_references_module(revision)
    index = references.ReferenceIndex([Paper.from_dict(r) for r in load_corpus()])
    per_style: dict[str, dict[str, int]] = {}
    for lists in folders:
        gold = json.loads((lists / "gold.json").read_text(encoding="utf-8"))["lists"]
        for name, info in gold.items():
            count_list(references, index, (lists / name).read_text(encoding="utf-8"), info, per_style)
    per_style["all"] = {key: sum(c[key] for c in per_style.values()) for key in next(iter(per_style.values()))}
    for counts in per_style.values():
        counts["precision"] = counts["tp"] / max(1, counts["tp"] + counts["fp"])
        counts["recall"] = counts["tp"] / max(1, counts["tp"] + counts["fn"])
    return per_style


def count_list(references, index, text: str, info: dict, per_style: dict) -> None:
    """Add one list's entries, references read and true/false positives to its style's counts."""
    items = references.parse_reference_list(text)
    found = index.match(items)
    expected = {pid for pid in info["entries"] if pid}
    counts = per_style.setdefault(info["style"], {"lists": 0, "entries": 0, "read": 0, "split_ok": 0,
                                                   "tp": 0, "fp": 0, "fn": 0})
    counts["lists"] += 1
    counts["entries"] += len(info["entries"])
    counts["read"] += len(items)
    counts["split_ok"] += len(items) == len(info["entries"])
    counts["tp"] += len(found & expected)
    counts["fp"] += len(found - expected)
    counts["fn"] += len(expected - found)


def print_table(per_style: dict, label: str) -> None:
    print(f"\n{label}\n")
    print("| style | lists | entries | references read | lists split exactly | precision | recall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for style, c in per_style.items():
        print(f"| {style} | {c['lists']} | {c['entries']} | {c['read']} | {c['split_ok']} | "
              f"{c['precision']:.3f} | {c['recall']:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("generate", help="write the reference lists and gold.json")
    make.add_argument("--seed", type=int, default=2)
    make.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "reference_lists")
    check = commands.add_parser("evaluate", help="precision and recall of reference -> corpus paper matching")
    check.add_argument("--lists", type=Path, default=ROOT / "bench" / "data" / "reference_lists")
    check.add_argument("--seeds", metavar="FIRST:LAST", help="instead of --lists, generate lists for these seeds "
                       "(LAST excluded) into a temporary folder and measure them all together")
    check.add_argument("--baseline", metavar="REV", help="measure the parser and matcher at this git revision")
    check.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.seed, args.out)
        return
    if args.seeds:
        first, last = (int(part) for part in args.seeds.split(":"))
        folders = [Path(tempfile.mkdtemp()) / str(seed) for seed in range(first, last)]
        for seed, folder in zip(range(first, last), folders):
            generate(seed, folder)
        source = f"seeds {first} to {last - 1}"
    else:
        folders, source = [args.lists], str(args.lists)
    per_style = evaluate(folders, args.baseline)
    print_table(per_style, f"the reference parser and matcher at {args.baseline or 'the working tree'}, lists: {source}")
    if args.json:
        args.json.write_text(json.dumps(per_style, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
