"""Reviewer check: cited papers are matched and removed; each suggestion is tied to a sentence."""
import random

import pytest

from recommender.references.parse import ReferenceItem
from recommender.review.abstract import (MAX_REFERENCE_CHARS, AbstractReviewer, parse_references, parse_warnings,
                                         submission_sentences)

TITLE = "Recommending citations for scientific drafts"
ABSTRACT = ("We suggest references for a draft paper from its abstract. "
            "Candidates are expanded through the citation graph of their nearest neighbours. "
            "We evaluate with recall and mean reciprocal rank.")
REFERENCES = """[1] A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper abstracts. In JCDL.
[2] A. Lovelace. 2012. Something else. doi:10.9999/cite.2
[3] J. Doe. 2020. A paper the corpus does not hold. Nowhere.
"""


@pytest.fixture(scope="module")
def reviewer(small_recommender):
    return AbstractReviewer(small_recommender)


def test_already_cited_papers_are_matched_and_not_suggested(reviewer):
    report = reviewer.review(TITLE, ABSTRACT, parse_references(REFERENCES), k=8)
    assert report.cited == {"cite0", "cite2"}  # by title, by DOI
    assert [item.raw for item in report.unmatched] == ["J. Doe. 2020. A paper the corpus does not hold. Nowhere."]
    suggested = [m.recommendation.paper_id for m in report.missing]
    assert len(suggested) == 8 and not {"cite0", "cite2"} & set(suggested)
    assert suggested[0].startswith("cite")


def test_without_references_the_same_papers_lead(reviewer):
    report = reviewer.review(TITLE, ABSTRACT, [], k=5)
    assert report.cited == set() and report.references == []
    assert "cite0" in {m.recommendation.paper_id for m in report.missing}


def test_each_suggestion_points_to_the_closest_sentence(reviewer):
    report = reviewer.review(TITLE, ABSTRACT, [], k=6)
    sentences = dict(submission_sentences(TITLE, ABSTRACT))
    for missing in report.missing:
        assert sentences[missing.sentence_number] == missing.sentence
        assert missing.recommendation.explanation
    by_id = {m.recommendation.paper_id: m for m in report.missing}
    if "cite4" in by_id:  # the evaluation paper relates to the evaluation sentence
        assert by_id["cite4"].sentence_number == 3


def test_submission_sentences():
    assert submission_sentences("Title", "One. Two? Three!") == [(1, "One."), (2, "Two?"), (3, "Three!")]
    assert submission_sentences("Only a title", "  ") == [(0, "Only a title")]
    assert submission_sentences("", "") == []


def test_bibtex_lists_match_by_doi_and_title(reviewer):
    bib = """@inproceedings{lovelace2011, title = {Context-aware citation recommendation with citation
    placeholders}, year = {2011}}
@article{x, title = {Unrelated}, doi = {https://doi.org/10.9999/CITE.3}}"""
    report = reviewer.review(TITLE, ABSTRACT, parse_references(bib), k=3)
    assert report.cited == {"cite1", "cite3"}


def test_pasted_text_is_never_read_as_a_file_path(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("Neural citation recommendation from paper abstracts\n")
    items = parse_references(str(secret))
    assert [item.raw for item in items] == [str(secret)]


WRAPPED = """[1] Ada Lovelace and Alan Turing. 2010. Neural citation recom-
mendation from paper abstracts. In Proceedings of JCDL. 1–10.
[2] Ada Lovelace and Grace Hopper. 2012. Citation graph expansion for
recommending references. In Proceedings of JCDL. 11–20.
[3] Jane Doe. 2020. A paper the corpus does not hold. In Proceedings of
Nowhere. 1–2.
"""


def test_a_list_copied_from_a_pdf_is_matched(reviewer):
    report = reviewer.review(TITLE, ABSTRACT, parse_references(WRAPPED), k=5)
    assert report.cited == {"cite0", "cite2"} and len(report.references) == 3
    assert report.warnings == []


def test_an_over_long_list_is_refused():
    with pytest.raises(ValueError, match="at most 500,000"):
        parse_references("x" * (MAX_REFERENCE_CHARS + 1))


def test_binary_text_is_refused():
    noise = random.Random(3).randbytes(20_000).decode("latin-1")
    with pytest.raises(ValueError, match="does not look like text"):
        parse_references(noise)


def item(raw: str, year: int | None = 2019) -> ReferenceItem:
    return ReferenceItem(raw=raw, year=year)


def test_fragments_are_reported():
    fragments = [item("Neural citation", None), item("recommendation from", None), item("paper abstracts. In", None),
                 item("A. Lovelace. 2010. Neural citation recommendation from paper abstracts. JCDL.")]
    [warning] = parse_warnings(fragments, [set(), set(), set(), {"cite0"}])
    assert warning.startswith("3 of 4 references are only a few words or have no year")


def test_merged_references_are_reported():
    whole = item("A. Lovelace. 2010. Neural citation recommendation. JCDL. " * 30)
    assert any("read as one" in w for w in parse_warnings([whole], [{"cite0"}]))


def test_few_matches_are_reported_but_a_good_list_is_not():
    references = [item(f"J. Doe. 2019. Paper number {i} of a list. In Proc. X.") for i in range(10)]
    [warning] = parse_warnings(references, [{"cite0"}] + [set()] * 9)
    assert warning.startswith("Only 1 of 10 references were found in the corpus")
    assert parse_warnings(references, [{"cite0"}, {"cite1"}] + [set()] * 8) == []
    assert parse_warnings(references[:4], [set()] * 4) == []  # too few to judge
