"""The reference check (issue 28): a verdict per reference against the real test index, the Retraction Watch CSV
imported for real, the command line run as a subprocess, the review's JSON, the recommender leaving retracted
papers out, and the exports marking them. Online sources are in-test objects: no network."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from recommender.corpus.export import to_bibtex, to_csv, to_ris
from recommender.corpus.loaders.openalex import from_openalex
from recommender.documents.model import Document, Passage
from recommender.paper import Paper
from recommender.pipeline.recommender import Recommender
from recommender.pipeline.retracted import RetractedPapers
from recommender.query import Query
from recommender.references.check import Check, Record, Retraction, check_references
from recommender.references.corpus_source import CorpusSource
from recommender.references.parse import parse_reference_line, parse_reference_list
from recommender.references.retractions import RetractionStore, import_csv
from recommender.review.document import DocumentReviewer

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "retractions" / "retraction_watch.csv"
OFFLINE_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> RetractionStore:
    path = tmp_path_factory.mktemp("retractions") / "retractions.sqlite"
    import_csv(FIXTURE, path)
    return RetractionStore(path)


@pytest.fixture(scope="module")
def corpus(small_recommender) -> CorpusSource:
    return CorpusSource.from_index(small_recommender.index)


def check_one(line: str, corpus: CorpusSource, store: RetractionStore | None = None, more=()) -> Check:
    return check_references([parse_reference_line(line)], [corpus, *more], store)[0]


# ----------------------------------------------------------------------------------------------- Retraction Watch


def test_the_retraction_watch_csv_is_imported_as_published(tmp_path):
    summary = import_csv(FIXTURE, tmp_path / "store.sqlite")
    assert (summary.rows, summary.stored, summary.skipped, summary.flagging) == (7, 6, 1, 4)
    store = RetractionStore(tmp_path / "store.sqlite")
    retracted = store.find(doi="https://doi.org/10.9999/IR.3")
    assert retracted.retraction == Retraction("retraction", "2016-03-14", "10.9999/notice.1", "Retraction Watch")
    assert retracted.authors == ("Vladimir Karpukhin", "Barlas Oguz") and retracted.year == 2013
    assert store.find(doi="10.9999/bio.1").retraction.nature == "expression of concern"
    assert store.find(doi="10.9999/bio.2") is None  # a correction flags nothing
    assert store.find(doi="10.9999/vision.1") is None  # retracted, then reinstated
    by_title = store.find(title="A Wholly Invented Study of Retracted Citation Habits in Graph-Mining", year=2019)
    assert by_title.retraction.notice_doi == "10.5555/notice.6" and by_title.retraction.date == "2021-05-20"
    assert store.find(title="A wholly invented study of retracted citation habits in graph mining", year=2005) is None
    assert store.dois() == {"10.9999/ir.3", "10.9999/bio.1"}


def test_a_file_that_is_not_the_retraction_watch_csv_is_refused(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("id,title\n1,Something\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a Retraction Watch CSV.*OriginalPaperDOI"):
        import_csv(other, tmp_path / "store.sqlite")
    assert not (tmp_path / "store.sqlite").exists()


# ----------------------------------------------------------------------------------------------- the corpus


@pytest.mark.parametrize("line", [
    "[1] A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper abstracts. In JCDL. 1–10.",
    "Lovelace, A., & Turing, A. (2010). Neural citation recommendation from paper abstracts. In Proceedings of "
    "the Joint Conference on Digital Libraries (pp. 1–10).",
    "Ada Lovelace, Alan Turing, “Neural Citation Recommendation from Paper Abstracts,” in Proc. ACM/IEEE JCDL, "
    "2010, pp. 1-10, doi: 10.9999/cite.0.",
    "Lovelace, A. & Turing, A. Neural citation recommendation from paper abstract. In Proc. JCDL 1–10 (2010).",
])
def test_a_correct_reference_is_verified_whatever_its_style(line, corpus):
    check = check_one(line, corpus)
    assert check.verdict == "verified", (check.differences, check.note)
    assert check.record.title == "Neural citation recommendation from paper abstracts"
    assert check.searched == ["the corpus (24 papers)"]


@pytest.mark.parametrize("line, field_name, cited, found", [
    ("A. Lovelace and A. Turing. 2012. Neural citation recommendation from paper abstracts. In JCDL.",
     "year", "2012", "2010"),
    ("A. Turing and A. Lovelace. 2010. Neural citation recommendation from paper abstracts. In JCDL.",
     "first author", "A. Turing and A. Lovelace", "Ada Lovelace"),
    ("A. Lovelace. 2012. Citation graph expansion for recommending references. In JCDL.",
     "authors", "A. Lovelace", "Ada Lovelace; Grace Hopper"),
    ("A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper abstracts. In Proceedings of CVPR.",
     "venue", "Proceedings of CVPR", "JCDL"),
    ("A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper abstracts. In JCDL. "
     "https://doi.org/10.9999/cite.4", "doi", "10.9999/cite.4", "10.9999/cite.0"),
])
def test_a_wrong_detail_is_named_with_the_records_value(line, field_name, cited, found, corpus):
    check = check_one(line, corpus)
    assert check.verdict == "details differ"
    assert check.differences == {field_name: (cited, found)}
    assert check.record.title in line and "usually a slip" in check.note


def test_a_preprint_cited_for_a_published_paper_differs_at_most_in_details(corpus):
    check = check_one("A. Lovelace and A. Turing. 2009. Neural citation recommendation from paper abstracts. "
                      "arXiv preprint arXiv:0912.01234.", corpus)
    assert check.verdict == "details differ"
    assert set(check.differences) == {"version", "year"}
    assert check.differences["version"] == ("a preprint", "published: JCDL")


@pytest.fixture(scope="module")
def dense() -> CorpusSource:
    """A corpus holding twelve JCDL 2012 papers (of Grace Hopper and others) and twelve of the journal Machine
    Learning from 2010: dense enough for a reference's absence to tell."""
    papers = [Paper(id=f"jcdl{i}", title=f"Digital library study number {i} of catalogues", year=2012, venue="JCDL",
                    authors=["Grace Hopper" if i % 3 == 0 else f"Author Number{i}"]) for i in range(12)]
    papers += [Paper(id=f"icml{i}", title=f"Kernel learning study number {i}", year=2010, venue="Proceedings of the "
                     "27th International Conference on Machine Learning", authors=["Grace Hopper"]) for i in range(12)]
    return CorpusSource.from_papers(papers)


def test_an_invented_reference_in_a_venue_the_corpus_holds_is_not_found(dense):
    check = check_one("A. Lovelace and G. Hopper. 2012. Federated citation recommendation for patent search. "
                      "In Proceedings of JCDL. 11–20.", dense)
    assert check.verdict == "not found" and check.record is None
    assert check.note.startswith("Could not be found in the corpus (24 papers).")
    assert "not proof that it does not exist" in check.note


@pytest.mark.parametrize("line, why", [
    ("A. Lovelace and G. Hopper. 2012. Federated citation recommendation for patent search. In Proceedings of JCDL. "
     "11–20.", "two JCDL 2012 papers are too few for an absence to tell"),
    ("G. Hopper. Federated citation recommendation for patent search. In Proceedings of JCDL, 11–20.",
     "two JCDL papers in all are too few, when the reference gives no year"),
    ("A. Lovelace and B. Nobody. 2012. Federated citation recommendation. In Proceedings of JCDL. 11–20.",
     "no author the corpus knows"),
    ("G. Hopper. 2010. The security of learning. Machine Learning, 81(2):121–148, 2010.",
     "a journal, not the proceedings of ICML"),
    ("G. Hopper. 2012. Federated citation recommendation. Journal of Computational Linguistics, 3:1–9.",
     "a venue named in part"),
])
def test_an_absence_tells_only_where_the_corpus_holds_the_venue_densely_and_an_author(line, why, dense):
    sparse = CorpusSource.from_papers([Paper(id=f"s{i}", title=f"Library paper {i}", year=2012, venue="JCDL",
                                             authors=["Grace Hopper"]) for i in range(2)])
    source = sparse if why.startswith("two") else dense
    assert check_one(line, source).verdict == "not checked", why


def test_an_old_style_arxiv_id_written_bare_is_read():
    item = parse_reference_line("A. Lovelace and G. Hopper, Commun. Math. Phys. 198 (1998) 689 [hep-th/9812345].")
    assert item.arxiv == "hep-th/9812345"
    hepth = CorpusSource.from_papers([Paper(id="hep-th/9812345", title="Invented branes in six dimensions and their "
                                            "invented duals", year=1998, authors=["Ada Lovelace", "Grace Hopper"])])
    assert check_references([item], [hepth])[0].verdict == "verified"


def test_a_reference_outside_what_the_corpus_holds_is_not_checked(corpus):
    check = check_one("J. Doe. 2020. Tidal sediment transport in estuaries. Journal of Marine Geology 12, 3–9.",
                      corpus)
    assert check.verdict == "not checked" and check.searched == []
    assert "the corpus (24 papers): it holds few or no papers of the venue and year" in check.note


def test_a_retracted_paper_is_flagged_with_its_notice(corpus, store):
    check = check_one("V. Karpukhin and B. Oguz. 2013. Dense passage retrieval with dual encoders. In SIGIR.",
                      corpus, store)
    assert check.verdict == "retracted"
    assert check.retraction == Retraction("retraction", "2016-03-14", "10.9999/notice.1", "Retraction Watch")
    assert "was retracted on 2016-03-14" in check.note and "https://doi.org/10.9999/notice.1" in check.note
    concern = check_one("M. Eisen. 2011. Gene expression clustering in cancer samples. Bioinformatics 3, 1–9.",
                        corpus, store)
    assert concern.verdict == "retracted" and "has an expression of concern on 2012-11-02" in concern.note
    reinstated = check_one("R. Girshick. 2011. Object detection with region proposals. In CVPR.", corpus, store)
    assert reinstated.verdict == "verified"


def test_a_retracted_work_outside_the_corpus_is_found_by_its_title(corpus, store):
    check = check_one("J. Roe and R. Miles. 2019. A wholly invented study of retracted citation habits in graph "
                      "mining. Journal of Invented Results 4, 1–9.", corpus, store)
    assert check.verdict == "retracted" and check.record.source == "Retraction Watch"
    assert check.searched == ["Retraction Watch"]


def test_bibtex_entries_are_compared_field_by_field(corpus):
    items = parse_reference_list(Path(_write(
        "@inproceedings{ok, title={Neural Citation Recommendation from Paper Abstracts}, author={Lovelace, Ada and "
        "Turing, A.}, booktitle={Proc. JCDL}, year={2010}}\n"
        "@inproceedings{extra, title={Neural Citation Recommendation from Paper Abstracts}, author={Lovelace, Ada "
        "and Turing, Alan and Hopper, Grace}, booktitle={JCDL}, year={2010}}\n"
        "@article{etal, title={Citation graph expansion for recommending references}, author={Lovelace, Ada and "
        "others}, journal={JCDL}, year={2012}}\n")))
    checks = check_references(items, [corpus])
    assert [c.verdict for c in checks] == ["verified", "details differ", "verified"]
    assert checks[1].differences["authors"][1] == "Ada Lovelace; Alan Turing"


# ----------------------------------------------------------------------------------------------- other sources


@dataclass
class FakeSource:
    """An online source answering from a dict of records by title word (None: it did not answer)."""

    name: str
    records: list[Record] | None
    knows_retractions: bool = True
    problem: str = ""
    asked: list[str] = field(default_factory=list)
    local: bool = False

    def lookup(self, item):
        self.asked.append(item.title)
        if isinstance(self.records, Exception):
            raise self.records
        return self.records


def record(**changes) -> Record:
    values = dict(title="Attention Is All You Need", authors=("Ashish Vaswani", "Noam Shazeer"), year=2017,
                  venue="Advances in Neural Information Processing Systems", doi="10.5555/attention", arxiv="",
                  source="OpenAlex", url="https://openalex.org/W1")
    values.update(changes)
    return Record(**values)


ATTENTION = ("[3] Vaswani, A., Shazeer, N.: Attention is all you need. In: Proc. NeurIPS, pp. 5998–6008 (2017)")


def test_an_online_record_settles_what_the_corpus_cannot(corpus):
    online = FakeSource("OpenAlex", [record()])
    check = check_one(ATTENTION, corpus, more=[online])
    assert check.verdict == "verified" and check.record.source == "OpenAlex"  # initials, NeurIPS for the full name
    assert online.asked == ["Attention is all you need"]


@pytest.mark.parametrize("line", [
    "Ada M. Lovelace, Grace B. Hopper and Lene Mølbæk. 2016. Folding paper robots for shape-changing classrooms. In "
    "Proceedings of CHI. 1–10.",
    "Lovelace, A. M., Hopper, G. B., & Molbaek, L. (2016). Folding paper robots for shape-changing classrooms. In "
    "Proc. CHI.",
    "A. M. Lovelace, G. B. Hopper, and L. Mølbæk, “Folding Paper Robots for Shape-Changing Classrooms,” in Proc. ACM "
    "Conference on Human Factors in Computing Systems, 2016.",
])
def test_initials_transliterations_and_abbreviated_venues_are_no_differences(line, corpus):
    online = FakeSource("Crossref", [record(title="Folding Paper Robots for Shape-Changing Classrooms", year=2016,
                                            authors=("Ada M. Lovelace", "Grace B. Hopper", "Lene Mølbæk"),
                                            venue="Proceedings of the 2016 CHI Conference on Human Factors in "
                                                  "Computing Systems", source="Crossref")])
    check = check_one(line, corpus, more=[online])
    assert check.verdict == "verified", (check.differences, check.note)


def test_a_source_that_does_not_answer_leaves_the_reference_not_checked(corpus):
    silent = FakeSource("Crossref", None, problem="Crossref did not answer in time (HTTP 429)")
    failing = FakeSource("OpenAlex", RuntimeError("connection reset"))
    check = check_one(ATTENTION, corpus, more=[failing, silent])
    assert check.verdict == "not checked"
    assert "OpenAlex: RuntimeError: connection reset" in check.note and "(HTTP 429)" in check.note


def test_the_time_budget_stops_the_online_sources_not_the_corpus(corpus):
    online = FakeSource("OpenAlex", [record()])
    checks = check_references([parse_reference_line(ATTENTION), parse_reference_line(
        "A. Lovelace. 2011. Context-aware citation recommendation with citation placeholders. In JCDL.")],
        [corpus, online], budget_s=0)
    assert [c.verdict for c in checks] == ["not checked", "verified"] and online.asked == []
    assert "time budget" in checks[0].note


def test_a_later_source_may_know_of_a_retraction_the_corpus_does_not(small_recommender):
    notice = Retraction("retraction", "2020-02-02", "10.5555/notice", "Crossref")
    source = CorpusSource.from_index(small_recommender.index)
    assert source.knows_retractions is False  # the small corpus's records carry no is_retracted flag
    online = FakeSource("Crossref", [record(title="Neural citation recommendation from paper abstracts",
                                            authors=("Ada Lovelace", "Alan Turing"), year=2010, venue="JCDL",
                                            doi="10.9999/cite.0", retraction=notice, source="Crossref")])
    check = check_one("A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper abstracts. In "
                      "JCDL.", source, more=[online])
    assert check.verdict == "retracted" and check.retraction == notice


def test_a_doi_of_another_work_is_said_when_the_title_is_not_found(corpus):
    online = FakeSource("Crossref", [record(title="Something else entirely about sheep", doi="10.5555/x",
                                            source="Crossref")])
    check = check_one("B. Bogus. 2017. An invented title that nobody wrote. Journal of Marine Geology. "
                      "doi:10.5555/x", corpus, more=[online])
    assert check.verdict == "not found"
    assert ("Its DOI 10.5555/x belongs to another work: “Something else entirely about sheep” (Crossref)"
            in check.note)


def test_a_corpus_built_from_openalex_keeps_the_retraction_flag():
    work = {"id": "https://openalex.org/W9", "display_name": "A retracted study of graph sampling",
            "authorships": [{"author": {"display_name": "Jane Roe"}}], "publication_year": 2018,
            "primary_location": {"source": {"display_name": "Journal of Invented Results"}}, "is_retracted": True}
    paper = Paper.from_dict(from_openalex(work))
    assert paper.extra["is_retracted"] is True
    source = CorpusSource.from_papers([paper])
    assert source.knows_retractions
    check = check_one("J. Roe. 2018. A retracted study of graph sampling. Journal of Invented Results 1, 2–3.",
                      source)
    assert check.verdict == "retracted" and "flagged as retracted" in check.retraction.source
    assert "RETRACTED: flagged as retracted in the corpus record" in to_bibtex([paper])


# ----------------------------------------------------------------------------------------------- recommender, review


@pytest.fixture(scope="module")
def guarded(small_recommender, store) -> Recommender:
    """A recommender of its own over the small index whose retracted papers come from the store (ir3, bio1)."""
    index = small_recommender.index
    return Recommender(index, head=small_recommender.head, reranker=small_recommender.reranker,
                       local_reranker=small_recommender.local_reranker, retracted=RetractedPapers(index, store))


def test_retracted_papers_are_left_out_with_a_notice_and_shown_marked_on_request(guarded, small_recommender):
    query = Query(context="Questions and passages are embedded by two transformer encoders and retrieved by inner "
                          "product search [CIT].", k=5)
    plain = small_recommender.recommend(query, show_retracted=True)
    assert plain[0].paper_id == "ir3" and not plain[0].retraction  # no store: nothing known
    default = guarded.recommend(query)
    assert "ir3" not in [r.paper_id for r in default] and default.left_out == ["ir3"]
    shown = guarded.recommend(query, show_retracted=True)
    assert [r.paper_id for r in shown] == [r.paper_id for r in plain] and shown.left_out == []
    assert shown[0].retraction.startswith("Retracted 2016-03-14; notice https://doi.org/10.9999/notice.1")
    assert shown.papers[0].extra["retraction"] == shown[0].retraction
    # every other paper keeps its score and order: the retracted one is only passed over
    kept = [(r.paper_id, r.score) for r in shown if r.paper_id != "ir3"]
    assert [(r.paper_id, r.score) for r in default][:len(kept)] == kept
    assert "RETRACTED: Retracted 2016-03-14" in to_ris(shown.papers[:1]) and "RETRACTED" in to_csv(shown.papers[:1])


def test_the_review_json_carries_each_references_check(small_recommender, store):
    references = [parse_reference_line("A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper "
                                       "abstracts. In JCDL."),
                  parse_reference_line("V. Karpukhin and B. Oguz. 2013. Dense passage retrieval with dual encoders. "
                                       "In SIGIR."),
                  parse_reference_line("A. Lovelace. 2011. Context-aware citation recommendation with citation "
                                       "placeholders. In JCDL 2014.")]
    document = Document(title="Recommending citations", abstract="We suggest references for drafts.", kind="text",
                        references=references, passages=[Passage("Drafts find related papers.", [], line=3)])
    reviewer = DocumentReviewer(small_recommender, retractions=store)
    data = json.loads(json.dumps(reviewer.review(document, place_k=2).to_dict()))
    checks = [r["check"] for r in data["references"]]
    assert [c["verdict"] for c in checks] == ["verified", "retracted", "verified"]
    assert checks[1]["retraction"] == {"nature": "retraction", "date": "2016-03-14",
                                       "notice_doi": "10.9999/notice.1", "source": "Retraction Watch"}
    assert checks[0]["record"]["doi"] == "10.9999/cite.0" and checks[0]["searched"] == ["the corpus (24 papers)"]


# ----------------------------------------------------------------------------------------------- command line


def _write(text: str, name: str = "refs.bib") -> str:
    import tempfile
    path = Path(tempfile.mkdtemp()) / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "recommender", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env or OFFLINE_ENV, timeout=600)


def test_the_command_line_imports_retractions_and_checks_a_bib_file(small_index, tmp_path):
    env = {**OFFLINE_ENV, "CITREC_RETRACTIONS": str(tmp_path / "rw.sqlite")}
    imported = run_cli("retractions", "import", str(FIXTURE), env=env)
    assert imported.returncode == 0, imported.stderr
    assert "imported 6 notices (4 retractions and expressions of concern) from 7 rows" in imported.stdout
    info = run_cli("retractions", "info", env=env)
    assert "notices: 6" in info.stdout and str(tmp_path / "rw.sqlite") in info.stdout
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@inproceedings{lovelace2010, title={Neural citation recommendation from paper abstracts}, "
        "author={Lovelace, Ada and Turing, Alan}, booktitle={JCDL}, year={2010}}\n"
        "@inproceedings{karpukhin, title={Dense passage retrieval with dual encoders}, "
        "author={Karpukhin, Vladimir and Oguz, Barlas}, booktitle={SIGIR}, year={2013}}\n"
        "@inproceedings{wrong, title={Query expansion with pseudo relevance feedback}, "
        "author={Salton, Gerard and Sparck Jones, Karen}, booktitle={SIGIR}, year={2015}}\n"
        "@inproceedings{invented, title={Adaptive citation graphs for patent retrieval}, "
        "author={Turing, Alan}, booktitle={SIGIR}, year={2012}}\n", encoding="utf-8")
    result = run_cli("check-refs", str(bib), "--index", str(small_index), "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    # the invented one: 24 papers are too few for its absence to tell
    assert data["summary"] == {"verified": 1, "details differ": 1, "not found": 0, "retracted": 1, "not checked": 1}
    by_key = {r["key"]: r["check"] for r in data["references"]}
    assert by_key["wrong"]["differences"] == {"year": {"cited": "2015", "record": "2011"}}
    assert by_key["karpukhin"]["retraction"]["notice_doi"] == "10.9999/notice.1"
    assert data["sources"] == ["the corpus (24 papers)", "Retraction Watch (imported)"]
    text = run_cli("check-refs", str(bib), "--index", str(small_index), env=env)
    assert text.returncode == 0 and "4 references checked" in text.stdout and "✗ [karpukhin] RETRACTED" in text.stdout
    assert "leads to check, not verdicts" in text.stdout


def test_the_command_line_reads_a_plain_list_and_says_what_it_cannot_check(small_index, tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("[1] A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper abstracts. "
                    "In JCDL.\n[2] J. Doe. 2020. Tidal sediment transport in estuaries. Journal of Marine Geology.\n",
                    encoding="utf-8")
    result = run_cli("check-refs", str(refs), "--json", env={**OFFLINE_ENV, "CITREC_RETRACTIONS": str(tmp_path / "x")})
    assert result.returncode == 0, result.stderr
    assert [r["check"]["verdict"] for r in json.loads(result.stdout)["references"]] == ["not checked"] * 2
    with_index = run_cli("check-refs", str(refs), "--index", str(small_index), "--json",
                         env={**OFFLINE_ENV, "CITREC_RETRACTIONS": str(tmp_path / "x")})
    assert [r["check"]["verdict"] for r in json.loads(with_index.stdout)["references"]] == ["verified", "not checked"]


# ----------------------------------------------------------------------------------------------- the app

DRAFT_BIB = b"""@inproceedings{lovelace2010, title={Neural citation recommendation from paper abstracts},
  author={Lovelace, Ada and Turing, Alan}, booktitle={JCDL}, year={2010}}
@inproceedings{hopper, title={Citation graph expansion for recommending references},
  author={Lovelace, Ada and Hopper, Grace}, booktitle={JCDL}, year={2015}}
@inproceedings{karpukhin, title={Dense passage retrieval with dual encoders},
  author={Karpukhin, Vladimir and Oguz, Barlas}, booktitle={SIGIR}, year={2013}}
@inproceedings{invented, title={Adaptive citation graphs for patent retrieval}, author={Turing, Alan},
  booktitle={JCDL}, year={2012}}
"""


@pytest.fixture
def app_with_retractions(app_env, small_index, tmp_path, monkeypatch):
    """The app over the small index with the fixture's Retraction Watch data imported; its engines (cached in this
    process by earlier app tests) loaded afresh, and forgotten again afterwards."""
    from workspace.engine_caches import release

    import_csv(FIXTURE, tmp_path / "rw.sqlite")
    monkeypatch.setenv("CITREC_RETRACTIONS", str(tmp_path / "rw.sqlite"))
    release(small_index)
    yield
    release(small_index)


def test_the_reviewer_pages_references_tab_shows_each_verdict_with_its_evidence_and_a_filter(app_with_retractions):
    from support.app_helpers import draft, open_app

    at = open_app("pages/reviewer_check.py")
    text = draft("Graphs help \\cite{hopper}; dense retrieval beats BM25 \\cite{karpukhin,invented}.")
    at.file_uploader(key="dr_upload").set_value(("draft.tex", text.encode(), "application/x-tex"))
    at.file_uploader(key="dr_bib").set_value(("refs.bib", DRAFT_BIB, "application/x-bibtex"))
    assert at.toggle(key="dr_online").value is False  # offered on an open app, off until asked for
    at.button(key="FormSubmitter:draft_form-Review the draft").click().run()
    assert not at.exception, at.exception
    verdicts = [c.verdict for c in at.session_state["draft_review"]["report"].checks]
    assert verdicts == ["verified", "details differ", "retracted", "not checked"]
    cards = [m.value for m in at.markdown if "-badge[" in m.value]
    assert len(cards) == 4 and cards[2].startswith(":red-badge[:material/block: retracted]")
    assert any("| year | 2015 | 2012 |" in m.value for m in at.markdown)
    notes = [unescaped(c.value) for c in at.caption]
    assert any("was retracted on 2016-03-14" in n for n in notes)
    assert any(n.startswith("Not checked: the corpus (24 papers): it holds few or no papers") for n in notes)
    assert any("leads to check, not verdicts" in n for n in notes)
    at.pills(key="dr_verdicts").set_value(["details differ"]).run()
    cards = [m.value for m in at.markdown if "-badge[" in m.value]
    assert len(cards) == 1 and "[hopper]" in cards[0]


def test_the_recommend_page_leaves_a_retracted_paper_out_and_says_so(app_with_retractions):
    from support.app_helpers import open_app

    at = open_app("pages/recommend.py")
    at.text_area(key="q_text").input("Questions and passages are embedded by two transformer encoders and retrieved "
                                     "by inner product search [CIT].")
    at.button(key="FormSubmitter:query_form-Recommend").click().run()
    assert not at.exception, at.exception
    assert "ir3" not in [r.paper_id for r in at.session_state["results"]["recs"]]
    assert any(unescaped(i.value).startswith("1 retracted paper was left out of these results: “Dense passage "
                                             "retrieval") for i in at.info)
    at.toggle(key="q_retracted").set_value(True)
    at.button(key="FormSubmitter:query_form-Recommend").click().run()
    assert at.session_state["results"]["recs"][0].paper_id == "ir3"
    assert any(unescaped(e.value).startswith("**Retracted** · Retracted 2016-03-14") for e in at.error)


def unescaped(markdown: str) -> str:
    """Text as the page shows it (`pages.ui.markdown.plain` escapes every punctuation mark)."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u200b", "")
