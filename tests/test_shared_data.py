"""Checks on the real benchmark data; each skips with a reason when ../shared/data is absent."""
import gzip
import json

from support.data import shared_data
from recommender.corpus.loaders import load_corpus


def test_hepth_corpus_loads_with_its_citation_graph():
    result = load_corpus(shared_data("hepth-kddcup2003") / "papers.jsonl.gz", strict=True)
    assert result.kept == 29555
    assert sum(len(p.references) for p in result.papers) == 352768
    assert all(p.extra.get("date") for p in result.papers)


def test_acm_cr_queries_point_into_the_corpus():
    folder = shared_data("acm-cr")
    ids = {p.id for p in load_corpus(folder / "corpus.jsonl.gz").papers}
    with gzip.open(folder / "queries.jsonl.gz", "rt", encoding="utf-8") as handle:
        queries = [json.loads(line) for line in handle]
    assert queries and all("[CIT]" in q["context"] for q in queries)
    assert all(set(q["relevant"]) <= ids and q["citing_id"] not in ids for q in queries)
