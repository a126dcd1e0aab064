"""Tests of recommender.references: normalization, reference-list parsing and corpus matching."""
from __future__ import annotations

import gzip

import pytest

from recommender.paper import Paper
from recommender.references import (
    ReferenceIndex,
    ReferenceItem,
    match_references,
    normalize_doi,
    normalize_title,
    parse_reference_line,
    parse_reference_list,
)

CORPUS = [
    Paper("p1", title="Dense Passage Retrieval for Open-Domain Question Answering", extra={"doi": "10.18653/v1/2020.emnlp-main.550"}),
    Paper("10.1145/3331184.3331185", title="Some ACM Paper About Ranking"),
    Paper("p3", title="Learning to Rank for Information Retrieval"),
    Paper("p4", title="Graph Neural Networks"),
    Paper("p5", title="Attention"),
    Paper("p6", title="Über Méthodes de Recherche"),
    Paper("p7", title="Neural Ranking Models"),
    Paper("p8", title="Neural Ranking Models with Weak Supervision"),
]


def test_normalize_title():
    assert normalize_title("  Über-Méthode:  A  Study!! ") == "uber methode a study"
    assert normalize_title("BERT's {R}anking") == "berts ranking"
    assert normalize_title(r"M\"{u}ller and M\'ethode") == "muller and methode"
    assert normalize_title("Straße") == "strasse"
    assert normalize_title("") == ""
    assert normalize_title("Learning to Rank") == normalize_title("learning-to-rank.")


@pytest.mark.parametrize("raw", [
    "10.1145/ABC.123", "https://doi.org/10.1145/abc.123", "http://dx.doi.org/10.1145/ABC.123",
    "doi:10.1145/abc.123", "DOI: 10.1145/abc.123", " 10.1145/abc.123. ",
])
def test_normalize_doi(raw):
    assert normalize_doi(raw) == "10.1145/abc.123"


def test_parse_acm_style_line():
    item = parse_reference_line("A. Smith and B. Jones. 2019. Some title here. In Proc. X.")
    assert item.title == "Some title here" and item.year == 2019 and item.doi == ""


def test_parse_numbered_lines_with_doi_quotes_and_apa():
    text = "\n".join([
        "References",
        "[12] A. Smith and B. Jones. 2019. Why do Neural Rankers Work? In Proc. SIGIR. https://doi.org/10.1145/3331184.3331185.",
        "",
        '3. A. Smith, B. Jones, \u201cDense passage retrieval for QA,\u201d in Proc. EMNLP, 2020, pp. 1-10.',
        "Smith, A., & Jones, B. (2018). Learning to rank with BERT. Journal of IR, 3(2), 1-10.",
    ])
    items = parse_reference_list(text)
    assert [i.line for i in items] == [1, 2, 4, 5]
    acm, ieee, apa = items[1:]
    assert acm.raw.startswith("A. Smith") and acm.doi == "10.1145/3331184.3331185"
    assert acm.title == "Why do Neural Rankers Work?"
    assert ieee.title == "Dense passage retrieval for QA" and ieee.year == 2020
    assert apa.title == "Learning to rank with BERT" and apa.year == 2018
    assert all(i.kind == "text" for i in items)


BIB_LIST = r"""@inproceedings{karpukhin2020,
  title = {Dense Passage Retrieval for Open-Domain Question Answering},
  doi = {10.18653/V1/2020.EMNLP-MAIN.550},
  year = 2020,
}
@book{liu2009, title = {Learning to Rank for Information {R}etrieval}, year = {2009}}
@misc{unknown, title = {Not in the corpus at all}}
"""


def test_parse_bibtex_reference_list():
    items = parse_reference_list(BIB_LIST)
    assert [i.key for i in items] == ["karpukhin2020", "liu2009", "unknown"]
    assert all(i.kind == "bibtex" for i in items)
    assert items[0].doi == "10.18653/v1/2020.emnlp-main.550"
    assert items[1].title == "Learning to Rank for Information Retrieval" and items[1].year == 2009
    assert items[1].line == 6


def test_parse_from_path_plain_and_gzip(tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text(BIB_LIST)
    assert [i.key for i in parse_reference_list(path)] == ["karpukhin2020", "liu2009", "unknown"]
    assert parse_reference_list(str(path))[0].raw == str(path)  # a str is text, never opened as a file
    gz = tmp_path / "refs.txt.gz"
    gz.write_bytes(gzip.compress(b"[1] J. Doe. 2009. Learning to rank for information retrieval. Now.\n"))
    [item] = parse_reference_list(gz)
    assert item.title == "Learning to rank for information retrieval"


def test_match_bibtex_by_doi_and_title():
    assert match_references(parse_reference_list(BIB_LIST), CORPUS) == {"p1", "p3"}


def test_match_doi_against_id_that_is_a_doi():
    items = [parse_reference_line("X. Y. 2019. Garbled title. doi:10.1145/3331184.3331185")]
    assert match_references(items, CORPUS) == {"10.1145/3331184.3331185"}


def test_match_plain_lines_by_title_inside_the_line():
    lines = "\n".join([
        "[1] V. Karpukhin et al. 2020. Dense passage retrieval for open-domain question-answering. In EMNLP.",
        "[2] T.-Y. Liu. Learning to Rank for Information Retrieval, Springer 2011",  # no clean title guess
        "[3] Z. Wu. A comprehensive survey on graph neural networks. IEEE TNNLS, 2020.",
        "[4] Someone. 2017. Uber methodes de recherche! Paris.",
    ])
    assert match_references(parse_reference_list(lines), CORPUS) == {"p1", "p3", "p4", "p6"}


def test_short_titles_do_not_match_inside_lines():
    items = parse_reference_list("A. Vaswani. 2017. Attention is all you need. In NeurIPS.")
    assert match_references(items, CORPUS) == set()  # "Attention" (1 word) must not match by containment


def test_short_title_still_matches_exactly():
    item = ReferenceItem(raw="@misc{a, title={Attention}}", title="Attention", kind="bibtex")
    assert match_references([item], CORPUS) == {"p5"}


def test_containment_is_word_aligned():
    items = parse_reference_list("B. C. 2021. Subgraph neural networksx. In KDD.")
    assert match_references(items, CORPUS) == set()


def test_longest_contained_title_wins():
    items = parse_reference_list("M. Dehghani. 2017. Neural ranking models with weak supervision. In SIGIR.")
    assert match_references(items, CORPUS) == {"p8"}


def test_unrelated_lines_match_nothing():
    items = parse_reference_list("J. Doe. 2001. A study of cats. Cat Journal.\nSomething else entirely")
    assert match_references(items, CORPUS) == set()


def test_index_is_reusable():
    index = ReferenceIndex(CORPUS)
    assert index.match(parse_reference_list(BIB_LIST)) == {"p1", "p3"}
    assert index.match([]) == set()
