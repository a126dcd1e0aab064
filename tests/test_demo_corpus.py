"""The built-in demo corpus is sound data, loadable by the normal loader."""
import itertools
import json
import unicodedata
from collections import Counter, defaultdict

from recommender.corpus.identifiers import normalize_title
from recommender.corpus.loaders import load_corpus
from workspace.demo import DEMO_CORPUS

# Initials-only names from the fact file that match a full name in the corpus but belong to someone else
# (chen2019citation's Y. Liu and Y. Zhang, bai2019scientific's M. Wang and Z. Yang).
DIFFERENT_PEOPLE = {
    frozenset(pair) for pair in [
        ("Y. Liu", "Yinhan Liu"), ("Y. Zhang", "Ya Zhang"), ("Y. Zhang", "Yuxuan Zhang"),
        ("M. Wang", "Mingzhe Wang"), ("Z. Yang", "Zhilin Yang"), ("Z. Yang", "Zichao Yang"),
    ]
}


def records() -> list[dict]:
    with open(DEMO_CORPUS, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_demo_corpus_loads_cleanly_with_summaries_years_and_resolved_links():
    result = load_corpus(DEMO_CORPUS, strict=True)
    papers = result.papers
    assert len(papers) >= 200 and not result.problems
    titles = Counter(normalize_title(p.title) for p in papers)
    assert [t for t, n in titles.items() if n > 1] == []
    ids = {p.id for p in papers}
    assert all(ref in ids for p in papers for ref in p.references)
    assert all(p.abstract.strip() and isinstance(p.year, int) for p in papers)
    assert all(p.extra.get("summary_source") == "project" for p in papers)
    for paper in papers:
        curated = paper.extra.get("curated_references", [])
        assert set(curated) <= set(paper.references)
        assert not curated or paper.extra.get("added") or paper.references


def test_demo_corpus_has_a_connected_citation_structure():
    papers = load_corpus(DEMO_CORPUS).papers
    cited = {ref for p in papers for ref in p.references}
    linked = {p.id for p in papers if p.references} | cited
    assert len(linked) / len(papers) > 0.8


def test_ids_are_unique_and_every_link_points_to_a_paper_in_the_corpus():
    rows = records()
    assert [i for i, n in Counter(r["id"] for r in rows).items() if n > 1] == []
    ids = {r["id"] for r in rows}
    dangling = [(r["id"], ref) for r in rows for ref in r["references"] if ref not in ids]
    assert dangling == []
    assert [r["id"] for r in rows if len(set(r["references"])) != len(r["references"])] == []


def test_no_paper_cites_a_newer_paper_or_itself():
    rows = records()
    year = {r["id"]: r["year"] for r in rows}
    newer = [(r["id"], ref) for r in rows for ref in r["references"] if year[ref] > r["year"]]
    assert newer == []
    assert [r["id"] for r in rows if r["id"] in r["references"]] == []


def test_the_citation_graph_has_no_cycles():
    cites = {r["id"]: set(r["references"]) for r in records()}
    # Peel off papers that cite nothing left in the graph; whatever cannot be peeled lies on or behind a cycle.
    remaining = dict(cites)
    while True:
        leaves = [paper for paper, refs in remaining.items() if not refs & remaining.keys()]
        if not leaves:
            break
        for paper in leaves:
            del remaining[paper]
    assert sorted(remaining) == []


def _name_parts(name: str) -> tuple[str, list[str]]:
    """Surname and given names, accents and case folded, hyphenated given names split ("Chung-Shu" -> chung, shu)."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).lower()
    tokens = folded.replace(".", " ").replace(",", " ").split()
    return tokens[-1], [part for token in tokens[:-1] for part in token.split("-") if part]


def _same_given_name(a: str, b: str) -> bool:
    """Equal, an initial of the other, or a short form of it ("Jeff" for "Jeffrey")."""
    if a == b:
        return True
    if len(a) == 1 or len(b) == 1:
        return a[0] == b[0]
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short)


def spelled_alike(a: str, b: str) -> bool:
    """Whether two author strings could be one person written two ways."""
    (surname_a, given_a), (surname_b, given_b) = _name_parts(a), _name_parts(b)
    if surname_a != surname_b:
        return False
    return not given_a or not given_b or all(_same_given_name(x, y) for x, y in zip(given_a, given_b))


def test_name_variants_are_recognised():
    assert spelled_alike("T. Mikolov", "Tomáš Mikolov") and spelled_alike("Tomas Mikolov", "Tomáš Mikolov")
    assert spelled_alike("Jeff Dean", "Jeffrey Dean") and spelled_alike("Jon Kleinberg", "Jon M. Kleinberg")
    assert spelled_alike("K. Sparck Jones", "Karen Sparck Jones")
    assert not spelled_alike("Zihang Dai", "Zhuyun Dai") and not spelled_alike("Sun Kim", "Sunkyu Kim")
    assert not spelled_alike("Chung-Shu Yang", "Cheng Yang")


def test_each_author_is_spelled_one_way_and_listed_once_per_paper():
    rows = records()
    assert [r["id"] for r in rows if len(set(r["authors"])) != len(r["authors"])] == []
    by_surname = defaultdict(set)
    for name in {a for r in rows for a in r["authors"]}:
        by_surname[_name_parts(name)[0]].add(name)
    variants = [
        pair for names in by_surname.values() for pair in itertools.combinations(sorted(names), 2)
        if spelled_alike(*pair) and frozenset(pair) not in DIFFERENT_PEOPLE
    ]
    assert variants == []
