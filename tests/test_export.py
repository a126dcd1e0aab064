"""Tests of recommender.export: every format is parsed back and compared with the papers."""
from __future__ import annotations

import csv
import io
import json
import random
import re

import bibtexparser
import pytest
from bibtexparser import middlewares as mw

from recommender.export import citation_keys, export, split_name, to_bibtex, to_csl_json, to_csv, to_ris
from recommender.loaders import load_corpus
from recommender.paper import Paper

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
    assert export([], "csv").strip() == "key,id,title,authors,year,venue,doi,abstract,keywords"
    with pytest.raises(ValueError, match="unknown export format"):
        export(PAPERS, "docx")
