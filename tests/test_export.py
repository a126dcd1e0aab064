"""Tests of recommender.corpus.export: every format is parsed back and compared with the papers."""
from __future__ import annotations

import csv
import io
import json
import random
import re
from collections import Counter

import bibtexparser
import pytest
import rispy
from bibtexparser import middlewares as mw

from recommender.corpus.export import (citation_keys, export, spreadsheet_safe, split_name, to_bibtex, to_csl_json,
                                to_csv, to_ris)
from recommender.corpus.loaders import load_corpus
from recommender.corpus.publication_kind import arxiv_id, publication_kind
from recommender.paper import Paper
from workspace.demo import demo_papers

PAPERS = [
    Paper("10.1/a", title="The Best Über & 100% Méthode_x for {braces} #1 ~ tilde",
          abstract="First line.\nSecond line, with \"quotes\" and a comma.",
          authors=["Jörg Müller", "Ludwig van Beethoven", "F.Bonechi"],
          venue="Proceedings of the 43rd SIGIR Conference", year=2020,
          extra={"doi": "10.1/a", "keywords": ["ranking", "neural"], "date": "2020-07-25"}),
    Paper("b", title="The best thing", authors=["Jörg Müller"], venue="Journal of Things", year=2020),
    Paper("c", title="Best of all", authors=["Müller, J."], year=2020),
    Paper("d", title="", abstract="Only an abstract.", authors=[], year=None),
    Paper("e", title="Ångström-scale search", authors=["Zoë Ça"], venue="Physics", year=1999),
]


# --------------------------------------------------------------------------- keys


def test_split_name():
    assert split_name("Jörg Müller") == ("Jörg", "Müller")
    assert split_name("Ludwig van Beethoven") == ("Ludwig", "van Beethoven")
    assert split_name("Müller, J.") == ("J.", "Müller")
    assert split_name("F.Bonechi") == ("F.", "Bonechi")
    assert split_name("J.-B. Zuber") == ("J.-B.", "Zuber")
    assert split_name("Plato") == ("", "Plato")


def test_keys_are_ascii_unique_and_follow_the_pattern():
    keys = citation_keys(PAPERS)
    assert keys == ["muller2020besta", "muller2020bestb", "muller2020bestc", "anon", "ca1999angstrom"]
    assert all(re.fullmatch(r"[a-z0-9]+", k) for k in keys)


def test_keys_are_stable_under_reordering():
    expected = dict(zip((p.id for p in PAPERS), citation_keys(PAPERS)))
    for seed in range(5):
        shuffled = PAPERS[:]
        random.Random(seed).shuffle(shuffled)
        assert dict(zip((p.id for p in shuffled), citation_keys(shuffled))) == expected


def test_single_paper_gets_no_suffix_and_many_clashes_stay_unique():
    assert citation_keys([PAPERS[1]]) == ["muller2020best"]
    clones = [Paper(f"id{i:02d}", title="Same title", authors=["A. Same"], year=2001) for i in range(30)]
    keys = citation_keys(clones)
    assert len(set(keys)) == 30
    assert keys[:3] == ["same2001samea", "same2001sameb", "same2001samec"]
    assert keys[26:28] == ["same2001sameaa", "same2001sameab"]


def test_suffixed_key_never_collides_with_another_base_key():
    papers = [Paper("x1", title="Best", authors=["A Kim"], year=2000),
              Paper("x2", title="Best", authors=["A Kim"], year=2000),
              Paper("x3", title="Besta", authors=["A Kim"], year=2000)]
    keys = citation_keys(papers)
    assert len(set(keys)) == 3 and keys[2] == "kim2000besta"


# --------------------------------------------------------------------------- BibTeX


def parse_bibtex(text: str):
    return bibtexparser.parse_string(text, append_middleware=[mw.LatexDecodingMiddleware()])


def test_bibtex_parses_back_with_bibtexparser():
    text = to_bibtex(PAPERS)
    library = parse_bibtex(text)
    assert library.failed_blocks == []
    assert [e.key for e in library.entries] == citation_keys(PAPERS)
    first = library.entries[0]
    assert first.entry_type == "inproceedings"
    assert first["title"] == PAPERS[0].title
    assert first["booktitle"] == PAPERS[0].venue
    assert first["year"] == "2020" and first["doi"] == "10.1/a"
    assert first["abstract"] == " ".join(PAPERS[0].abstract.split())
    assert library.entries[1].entry_type == "article" and library.entries[1]["journal"] == "Journal of Things"
    assert library.entries[2].entry_type == "misc"
    assert "title" not in library.entries[3].fields_dict and "year" not in library.entries[3].fields_dict
    assert text.isascii() is False  # fields stay UTF-8; only the keys are ASCII


def test_bibtex_round_trips_through_the_loader(tmp_path):
    path = tmp_path / "out.bib"
    path.write_text(to_bibtex(PAPERS), encoding="utf-8")
    result = load_corpus(path, strict=True)
    assert [p.id for p in result.papers] == citation_keys(PAPERS)
    for original, loaded in zip(PAPERS, result.papers):
        assert loaded.title == original.title
        assert loaded.authors == [" ".join(split_name(a)).strip() for a in original.authors]
        assert loaded.year == original.year
        assert loaded.venue == original.venue
    assert result.papers[0].extra["keywords"] == ["ranking", "neural"]


def test_bibtex_keeps_source_entry_type():
    paper = Paper("x", title="A thesis", authors=["A B"], venue="Some Univ", year=2000, extra={"entry_type": "phdthesis"})
    assert to_bibtex([paper]).startswith("@phdthesis{b2000thesis,")


# --------------------------------------------------------------------------- RIS


def parse_ris(text: str) -> list[dict[str, list[str]]]:
    """A strict little RIS reader: every line is `XX  - value`; records run from TY to ER."""
    records, current = [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        match = re.fullmatch(r"([A-Z][A-Z0-9])  - (.*)", line)
        assert match, f"not a RIS line: {line!r}"
        tag, value = match.groups()
        if tag == "TY":
            assert current is None, "TY inside an open record"
            current = {}
        assert current is not None, f"{tag} outside a record"
        if tag == "ER":
            records.append(current)
            current = None
        else:
            current.setdefault(tag, []).append(value)
    assert current is None, "record without ER"
    return records


def test_ris_parses_back():
    records = parse_ris(to_ris(PAPERS))
    assert len(records) == len(PAPERS)
    first = records[0]
    assert first["TY"] == ["CONF"] and first["ID"] == ["muller2020besta"]
    assert first["TI"] == [PAPERS[0].title]
    assert first["AU"] == ["Müller, Jörg", "van Beethoven, Ludwig", "Bonechi, F."]
    assert first["PY"] == ["2020"] and first["DO"] == ["10.1/a"]
    assert first["AB"] == [" ".join(PAPERS[0].abstract.split())]
    assert first["KW"] == ["ranking", "neural"]
    assert records[1]["TY"] == ["JOUR"] and records[1]["T2"] == ["Journal of Things"]
    assert records[3]["TY"] == ["GEN"] and "TI" not in records[3] and "PY" not in records[3]
    assert [r["ID"][0] for r in records] == citation_keys(PAPERS)


# --------------------------------------------------------------------------- CSL-JSON


def test_csl_json_parses_back():
    items = json.loads(to_csl_json(PAPERS))
    assert [i["id"] for i in items] == citation_keys(PAPERS)
    first = items[0]
    assert first["type"] == "paper-conference" and first["title"] == PAPERS[0].title
    assert first["author"][0] == {"family": "Müller", "given": "Jörg"}
    assert first["issued"] == {"date-parts": [[2020, 7, 25]]}
    assert first["DOI"] == "10.1/a" and first["container-title"] == PAPERS[0].venue
    assert items[1]["type"] == "article-journal" and items[1]["issued"] == {"date-parts": [[2020]]}
    assert "issued" not in items[3] and "author" not in items[3]


def test_csl_json_round_trips_through_the_loader(tmp_path):
    path = tmp_path / "out.json"
    path.write_text(to_csl_json(PAPERS), encoding="utf-8")
    result = load_corpus(path, strict=True)
    assert result.format == "csl-json"
    assert [p.title for p in result.papers] == [p.title for p in PAPERS]
    assert [p.year for p in result.papers] == [p.year for p in PAPERS]
    assert result.papers[0].extra["date"] == "2020-07-25"
    assert result.papers[0].doi == "10.1/a"


# --------------------------------------------------------------------------- CSV and dispatch


def test_csv_parses_back():
    rows = list(csv.DictReader(io.StringIO(to_csv(PAPERS))))
    assert [r["key"] for r in rows] == citation_keys(PAPERS)
    assert [r["id"] for r in rows] == [p.id for p in PAPERS]
    assert rows[0]["abstract"] == PAPERS[0].abstract  # newlines, quotes and commas survive
    assert rows[0]["authors"] == "Jörg Müller; Ludwig van Beethoven; F.Bonechi"
    assert rows[0]["keywords"] == "ranking; neural"
    assert rows[3]["year"] == "" and rows[4]["year"] == "1999"


def test_export_dispatch_and_empty_input():
    assert export(PAPERS, "BibTeX") == to_bibtex(PAPERS)
    assert export(PAPERS, "ris") == to_ris(PAPERS)
    assert json.loads(export([], "csl-json")) == []
    assert export([], "csv").strip() == "key,id,kind,title,authors,year,venue,doi,arxiv,url,abstract,note,keywords"
    with pytest.raises(ValueError, match="unknown export format"):
        export(PAPERS, "docx")


# --------------------------------------------------------------------------- entry types, identifiers, summaries

SUMMARY = "A summary the project wrote."
KINDS_SAMPLE = [
    Paper("conf", title="Content-based citation recommendation", authors=["Chandra Bhagavatula"], year=2018,
          venue="NAACL-HLT", extra={"arxiv": "1802.08301", "doi": "10.18653/v1/N18-1022"}),
    Paper("jour", title="Navigation-based candidate expansion", authors=["Rodrigo Nogueira"], year=2020,
          venue="Scientometrics", abstract="The published abstract.", extra={"url": "https://example.org/a_b%20c"}),
    Paper("pre", title="SPECTER: document-level representation learning", authors=["Arman Cohan"], year=2020,
          venue="arXiv preprint", abstract=SUMMARY, extra={"arxiv": "2004.07180", "summary_source": "project"}),
]


def raw_bibtex(text: str):
    """Parsed without LaTeX decoding: DOI, URL and eprint are verbatim fields."""
    library = bibtexparser.parse_string(text)
    assert library.failed_blocks == []
    return {entry.key: entry for entry in library.entries}


def test_bibtex_entry_types_follow_the_venue_with_identifiers():
    entries = raw_bibtex(to_bibtex(KINDS_SAMPLE))
    conf, jour, pre = (entries[k] for k in citation_keys(KINDS_SAMPLE))
    assert conf.entry_type == "inproceedings" and conf["booktitle"] == "NAACL-HLT" and "journal" not in conf
    assert conf["doi"] == "10.18653/v1/N18-1022" and conf["eprint"] == "1802.08301"
    assert conf["archivePrefix"] == "arXiv" and conf["url"] == "https://arxiv.org/abs/1802.08301"
    assert jour.entry_type == "article" and jour["journal"] == "Scientometrics" and "booktitle" not in jour
    assert jour["url"] == "https://example.org/a_b%20c"  # verbatim, not LaTeX-escaped
    assert jour["abstract"] == "The published abstract." and "note" not in jour
    assert pre.entry_type == "misc" and pre["eprint"] == "2004.07180" and pre["archivePrefix"] == "arXiv"
    assert "journal" not in pre and "howpublished" not in pre  # the arXiv id says where it is


def test_a_project_summary_is_a_note_never_an_abstract():
    pre = KINDS_SAMPLE[2]
    bib = raw_bibtex(to_bibtex([pre]))[citation_keys([pre])[0]]
    assert "abstract" not in bib and SUMMARY in bib["note"] and "not the published abstract" in bib["note"]
    [record] = rispy.loads(to_ris([pre]))
    assert "abstract" not in record and SUMMARY in record["notes"][0]
    [item] = json.loads(to_csl_json([pre]))
    assert "abstract" not in item and SUMMARY in item["note"]
    [row] = csv.DictReader(io.StringIO(to_csv([pre])))
    assert row["abstract"] == "" and SUMMARY in row["note"]


def test_bibtex_identifiers_round_trip_through_the_loader(tmp_path):
    path = tmp_path / "kinds.bib"
    path.write_text(to_bibtex(KINDS_SAMPLE), encoding="utf-8")
    loaded = load_corpus(path, strict=True).papers
    assert [arxiv_id(p) for p in loaded] == [arxiv_id(p) for p in KINDS_SAMPLE]
    assert [p.doi for p in loaded] == [p.doi.lower() for p in KINDS_SAMPLE]  # the loader normalises DOIs
    assert [publication_kind(p) for p in loaded] == ["conference", "journal", "preprint"]
    assert loaded[1].extra["url"] == "https://example.org/a_b%20c"


def test_ris_types_and_identifiers_read_by_rispy():
    records = rispy.loads(to_ris(KINDS_SAMPLE))
    assert [r["type_of_reference"] for r in records] == ["CONF", "JOUR", "GEN"]
    conf, jour, pre = records
    assert conf["doi"] == "10.18653/v1/N18-1022" and conf["accession_number"] == "arXiv:1802.08301"
    assert conf["secondary_title"] == "NAACL-HLT" and conf["urls"] == ["https://arxiv.org/abs/1802.08301"]
    assert jour["secondary_title"] == "Scientometrics" and jour["abstract"] == "The published abstract."
    assert pre["urls"] == ["https://arxiv.org/abs/2004.07180"] and "publisher" not in pre
    assert [r["id"] for r in records] == citation_keys(KINDS_SAMPLE)


def test_csl_json_types_follow_the_venue():
    conf, jour, pre = json.loads(to_csl_json(KINDS_SAMPLE))
    assert (conf["type"], jour["type"], pre["type"]) == ("paper-conference", "article-journal", "article")
    assert conf["container-title"] == "NAACL-HLT" and conf["URL"] == "https://arxiv.org/abs/1802.08301"
    assert pre["number"] == "arXiv:2004.07180" and pre["publisher"] == "arXiv"


def test_the_whole_demo_corpus_exports_cleanly():
    papers = demo_papers()
    bib = raw_bibtex(to_bibtex(papers))
    assert len(bib) == len(papers)
    assert not any("abstract" in entry for entry in bib.values())  # every demo summary is the project's
    assert all("not the published abstract" in entry["note"] for entry in bib.values())
    kinds = {p.id: publication_kind(p) for p in papers}
    for key, paper in zip(citation_keys(papers), papers):
        entry = bib[key]
        if kinds[paper.id] == "preprint" and arxiv_id(paper):
            assert entry.entry_type == "misc" and entry["eprint"] == arxiv_id(paper), paper.id
        if kinds[paper.id] == "conference":
            assert entry.entry_type == "inproceedings" and entry["booktitle"], paper.id
        if kinds[paper.id] == "journal":
            assert entry.entry_type == "article" and entry["journal"], paper.id
    ris_text = to_ris(papers)
    records = rispy.loads(ris_text)
    assert len(records) == len(papers) and not any("abstract" in r for r in records)
    blocks = [b.splitlines() for b in ris_text.rstrip("\n").split("\n\n")]
    assert all(b[0].startswith("TY  - ") and b[-1] == "ER  - " for b in blocks) and len(blocks) == len(papers)
    assert Counter(r["type_of_reference"] for r in records) == Counter(
        {"conference": "CONF", "journal": "JOUR", "preprint": "GEN", "other": "GEN", "book": "BOOK",
         "chapter": "CHAP", "report": "RPRT"}[k] for k in kinds.values())


# --------------------------------------------------------------------------- CSV formula injection


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(start):
    payload = start + 'HYPERLINK("http://evil.example","x")'
    paper = Paper("p1", title=payload, authors=[payload], venue=payload, year=2020, abstract=payload,
                  extra={"keywords": [payload]})
    [row] = csv.DictReader(io.StringIO(to_csv([paper])))
    for column in ("title", "authors", "venue", "abstract", "keywords"):
        assert row[column] == "'" + payload, column
    assert spreadsheet_safe(payload) == "'" + payload


def test_csv_leaves_ordinary_cells_alone():
    assert [spreadsheet_safe(v) for v in ("Deep nets", "10.1/x", 2020, None, "a-b", "x=y")] == \
        ["Deep nets", "10.1/x", "2020", "", "a-b", "x=y"]
    rows = list(csv.reader(io.StringIO(to_csv(PAPERS))))
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row)
