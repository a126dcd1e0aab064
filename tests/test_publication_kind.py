"""Tests of recommender.corpus.publication_kind: the rule that picks @inproceedings / @article / @misc (and RIS types)."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from recommender.corpus.publication_kind import KINDS, arxiv_id, publication_kind, venue_kind
from recommender.paper import Paper
from workspace.demo import DEMO_CORPUS

VENUES = {
    # conferences: words, acronyms (with years, tracks, hyphens), known names
    "Proceedings of the 43rd International ACM SIGIR Conference": "conference",
    "SIGIR": "conference", "ACL": "conference", "NeurIPS": "conference", "RecSys": "conference",
    "ACM DL": "conference", "WI 2006": "conference", "TREC-3": "conference", "COMPSTAT’2010": "conference",
    "NAACL-HLT (Industry Papers)": "conference", "EMNLP (System Demonstrations)": "conference",
    "GlobalSIP": "conference", "RepL4NLP": "conference", "BioNLP 2017": "conference",
    "ICLR Workshop": "conference", "CoCo Workshop at NIPS": "conference", "Interspeech": "conference",
    "AAAI spring symposium on cross-language text and speech retrieval": "conference",
    "Text REtrieval Conference (TREC 2019)": "conference", "NeurIPS Datasets and Benchmarks Track": "conference",
    "Advances in Neural Information Processing Systems 33": "conference",
    "Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition": "conference",
    "JMLR Workshop and Conference Proceedings": "conference",
    # journals: words, journal-named proceedings, abbreviations, plain names
    "Scientometrics": "journal", "Journal of Documentation": "journal",
    "ACM Transactions on Information Systems": "journal", "ACM SIGIR Forum": "journal",
    "Transactions of the Association for Computational Linguistics": "journal",
    "IEEE Data Engineering Bulletin": "journal", "Communications of the ACM": "journal",
    "Foundations and Trends in Information Retrieval": "journal", "Annual review of Information science": "journal",
    "Proceedings of the National Academy of Sciences": "journal", "Proceedings of the IEEE": "journal",
    "Proceedings of the VLDB Endowment": "journal", "JMLR": "journal", "TACL": "journal", "PLoS ONE": "journal",
    "Science": "journal", "Neural Computation": "journal", "IEEE Access": "journal", "PLoS Biology": "journal",
    "Information Processing & Management": "journal",
    # preprints, reports, theses, books, chapters, web
    "arXiv": "preprint", "arXiv preprint arXiv:1802.08301": "preprint", "CoRR": "preprint", "bioRxiv": "preprint",
    "Microsoft Research Technical Report MSR-TR-2010-82": "report", "OpenAI technical report": "report",
    "PhD thesis, University of Glasgow": "thesis", "Cambridge University Press": "book", "O’Reilly Media": "book",
    "Handbook of latent semantic analysis": "chapter", "Advances in Large Margin Classifiers (MIT Press)": "chapter",
    "The SMART Retrieval System: Experiments in Automatic Document Processing (Prentice-Hall)": "chapter",
    "OpenAI Blog": "other", "": "other", "  ": "other",
}


@pytest.mark.parametrize("venue,kind", VENUES.items())
def test_venue_names_decide_the_kind(venue, kind):
    assert venue_kind(venue) == kind


def test_an_explicit_type_wins_over_the_venue():
    def kind(**extra):
        return publication_kind(Paper("x", venue="SIGIR", extra=extra))
    assert kind() == "conference"
    assert kind(entry_type="article") == "journal"  # BibTeX
    assert kind(entry_type="phdthesis") == "thesis"
    assert kind(type="article-journal") == "journal"  # CSL
    assert kind(type="preprint") == "preprint"  # OpenAlex
    assert kind(type="article") == "conference"  # OpenAlex calls conference papers "article": the venue decides
    assert kind(entry_type="misc") == "other" and kind(entry_type="misc", eprint="2004.07180") == "preprint"
    assert kind(entry_type="online", arxiv="2004.07180") == "preprint"


def test_a_paper_without_venue_is_a_preprint_only_with_an_arxiv_id():
    assert publication_kind(Paper("x", extra={"arxiv": "1802.08301"})) == "preprint"
    assert publication_kind(Paper("x")) == "other"


def test_arxiv_ids_are_read_from_arxiv_or_eprint():
    assert arxiv_id(Paper("x", extra={"arxiv": "1802.08301"})) == "1802.08301"
    assert arxiv_id(Paper("x", extra={"arxiv": "arXiv:2004.07180v2"})) == "2004.07180v2"
    assert arxiv_id(Paper("x", extra={"eprint": "hep-th/9901001"})) == "hep-th/9901001"
    assert arxiv_id(Paper("x", extra={"eprint": "math.GT/0309136"})) == "math.GT/0309136"
    assert arxiv_id(Paper("x", extra={"eprint": "PMC12345"})) == ""
    assert arxiv_id(Paper("x")) == ""


def test_every_demo_paper_gets_a_kind_and_arxiv_venues_are_preprints():
    records = [json.loads(line) for line in DEMO_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds = {r["id"]: publication_kind(Paper.from_dict(r)) for r in records}
    assert set(kinds.values()) <= set(KINDS)
    counts = Counter(kinds.values())
    assert counts["conference"] > 150 and counts["journal"] > 40  # the corpus is mostly proceedings
    for record in records:
        if record["venue"].lower().startswith("arxiv") or record["venue"] == "CoRR":
            assert kinds[record["id"]] == "preprint", record["id"]
    assert kinds["bhagavatula2018content"] == "conference"  # NAACL-HLT, though it has an arXiv id too
    assert kinds["nogueira2020navigation"] == "journal"  # Scientometrics
