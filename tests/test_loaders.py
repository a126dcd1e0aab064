"""Tests of recommender.corpus.loaders on small files written in tmp_path."""
from __future__ import annotations

import gzip
import json

import pytest

from recommender.corpus.loaders import CorpusError, LoadResult, detect_format, load_corpus


def record(paper_id: str, **fields) -> dict:
    base = {"id": paper_id, "title": f"Title of {paper_id}", "abstract": "An abstract.", "authors": ["Ann Lee"],
            "venue": "Some Venue", "year": 2020, "references": []}
    base.update(fields)
    return base


def write_jsonl(path, records, gz: bool = False):
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def only_error(result: LoadResult):
    assert len(result.errors) == 1, result.problems
    return result.errors[0]


# --------------------------------------------------------------------------- JSONL


def test_jsonl_good_file_keeps_fields_and_extras(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [
        record("a", keywords=["x", "y"], doi="10.1/A", date="2020-01-02"),
        record("b", references=["a"], year="2019"),
    ])
    result = load_corpus(path)
    assert result.format == "jsonl"
    assert (result.read, result.kept, result.skipped) == (2, 2, 0)
    assert result.problems == []
    a, b = result.papers
    assert a.extra == {"keywords": ["x", "y"], "doi": "10.1/A", "date": "2020-01-02"}
    assert a.title == "Title of a" and a.authors == ["Ann Lee"] and a.venue == "Some Venue"
    assert b.year == 2019 and b.references == ["a"]


def test_jsonl_gzip_is_read(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl.gz", [record("a"), record("b")], gz=True)
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["a", "b"]


def test_gzip_detected_from_content_even_without_gz_extension(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a")], gz=True)
    assert [p.id for p in load_corpus(path).papers] == ["a"]


def test_truncated_gzip_is_refused_as_a_whole(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    full = gzip.compress("".join(json.dumps(record(f"p{i}")) + "\n" for i in range(2000)).encode())
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(CorpusError, match=r"c\.jsonl\.gz: cannot read the file after line \d+: the compressed "
                                          r"data ends early .*nothing from it was used"):
        load_corpus(path)


@pytest.mark.parametrize("damage, expected", [
    (lambda data: data[:30] + bytes(b ^ 0xFF for b in data[30:60]) + data[60:], "compressed data is damaged"),
    (lambda data: data + b"garbage after the end", "not a valid gzip file"),
    (lambda data: data[:2] + b"\x07" + data[3:], "not a valid gzip file"),
])
def test_damaged_gzip_is_a_clear_error_without_raw_bytes(tmp_path, damage, expected):
    data = gzip.compress("".join(json.dumps(record(f"p{i}")) + "\n" for i in range(500)).encode())
    for name in ("c.jsonl.gz", "c.bib.gz", "c.json.gz"):
        path = tmp_path / name
        path.write_bytes(damage(data))
        with pytest.raises(CorpusError) as info:
            load_corpus(path, fmt="csl-json" if name == "c.json.gz" else None)
        assert expected in str(info.value) and "b'" not in str(info.value) and "\\x" not in str(info.value)


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes("\ufeff".encode() + json.dumps(record("a")).encode() + b"\n")
    assert [p.id for p in load_corpus(path, strict=True).papers] == ["a"]


def test_blank_lines_are_ignored(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a"), "", "   ", record("b")])
    result = load_corpus(path)
    assert (result.read, result.kept) == (2, 2)


@pytest.mark.parametrize("bad_line, expected", [
    ('{"id": "x", "title": ', "not valid JSON"),
    ('[1, 2]', "expected a JSON object"),
    (json.dumps({"title": "No id here"}), "missing id"),
    (json.dumps({"id": "", "title": "Empty id"}), "missing id"),
    (json.dumps({"id": ["x"], "title": "List id"}), "id must be a string"),
    (json.dumps({"id": "x", "title": "", "abstract": "  "}), "neither title nor abstract"),
    (json.dumps(record("x", authors="Ann Lee")), "authors must be a list of strings"),
    (json.dumps(record("x", authors=["Ann Lee", 7])), "authors[1] must be a string"),
    (json.dumps(record("x", year="19x9")), "year must be a whole number"),
    (json.dumps(record("x", year=2020.5)), "year must be a whole number"),
    (json.dumps(record("x", year=True)), "year must be a whole number"),
    (json.dumps(record("x", title=42)), "title must be a string"),
    (json.dumps(record("x", references="a")), "references must be a list"),
    (json.dumps(record("x", keywords=5)), "keywords must be a list of strings"),  # found by the fuzz tests
    (json.dumps(record("x", keywords=["ok", {"a": 1}])), "keywords[1] must be a string"),
])
def test_jsonl_bad_record_is_skipped_and_reported_with_its_line(tmp_path, bad_line, expected):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a"), bad_line, record("b")])
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["a", "b"]
    assert (result.read, result.kept, result.skipped) == (3, 2, 1)
    problem = only_error(result)
    assert problem.file == str(path)
    assert problem.location == "line 2"
    assert expected in problem.message
    assert str(path) in str(problem) and "line 2" in str(problem)


@pytest.mark.parametrize("bad_line", [
    '{"id": "x", "title": ',
    json.dumps({"title": "No id"}),
    json.dumps(record("x", year="soon")),
])
def test_jsonl_strict_raises_on_first_error_naming_file_and_line(tmp_path, bad_line):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a"), record("b"), bad_line, "{also bad"])
    with pytest.raises(CorpusError) as info:
        load_corpus(path, strict=True)
    assert isinstance(info.value, ValueError)
    assert str(path) in str(info.value) and "line 3" in str(info.value)


def test_strict_loads_a_clean_file(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a"), record("b", references=["a"])])
    assert load_corpus(path, strict=True).kept == 2


def test_duplicate_id_keeps_the_first_and_names_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a", title="First"), record("b"), record("a", title="Second")])
    result = load_corpus(path)
    assert [p.title for p in result.papers if p.id == "a"] == ["First"]
    problem = only_error(result)
    assert problem.location == "line 3"
    assert "duplicate id “a”" in problem.message and "line 1" in problem.message
    with pytest.raises(CorpusError, match="line 3.*duplicate"):
        load_corpus(path, strict=True)


def test_non_utf8_line_is_reported_and_others_kept(tmp_path):
    path = tmp_path / "c.jsonl"
    good = json.dumps(record("a")).encode()
    bad = b'{"id": "b", "title": "Caf\xe9 latin-1"}'
    path.write_bytes(good + b"\n" + bad + b"\n" + json.dumps(record("c")).encode() + b"\n")
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["a", "c"]
    problem = only_error(result)
    assert problem.location == "line 2" and "non-UTF-8" in problem.message
    with pytest.raises(CorpusError, match="line 2.*non-UTF-8"):
        load_corpus(path, strict=True)


def test_dangling_references_are_dropped_with_a_warning(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a"), record("b", references=["a", "zz", "yy"])])
    result = load_corpus(path, strict=True)  # a warning never raises
    b = result.papers[1]
    assert b.references == ["a"]
    assert result.errors == []
    [warning] = result.warnings
    assert warning.location == "line 2" and "zz" in warning.message and "yy" in warning.message
    assert result.kept == 2


def test_reference_to_a_skipped_record_is_dangling(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a", year="bad"), record("b", references=["a"])])
    result = load_corpus(path)
    assert result.papers[0].references == []
    assert len(result.errors) == 1 and len(result.warnings) == 1


def test_integer_ids_and_references_become_strings(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record(1), record(2, references=[1])])
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["1", "2"] and result.papers[1].references == ["1"]


def test_missing_file_and_directory_raise_corpus_error(tmp_path):
    with pytest.raises(CorpusError, match="not found") as info:
        load_corpus(tmp_path / "nope.jsonl")
    assert "nope.jsonl" in str(info.value)
    with pytest.raises(CorpusError, match="not a file"):
        load_corpus(tmp_path)


def test_loader_writes_nothing(tmp_path):
    write_jsonl(tmp_path / "c.jsonl", [record("a"), "{bad", record("b", references=["q"])])
    before = sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in tmp_path.iterdir())
    load_corpus(tmp_path / "c.jsonl")
    after = sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in tmp_path.iterdir())
    assert before == after


def test_empty_file_gives_no_papers_and_a_warning(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("")
    result = load_corpus(path)
    assert (result.read, result.kept) == (0, 0) and len(result.warnings) == 1


def test_unknown_format_name_is_rejected(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [record("a")])
    with pytest.raises(CorpusError, match="unknown corpus format"):
        load_corpus(path, fmt="xml")


# --------------------------------------------------------------------------- BibTeX

BIB = r"""@comment{a comment}
@string{jir = "Journal of {IR}"}

@article{smith2020,
  title = {The {B}est {\"U}ber M\'{e}thode: 50\% of R\&D},
  author = {Smith, John and M{\"u}ller, J{\"o}rg and {World Health Organization}},
  journal = jir,
  year = {2020},
  doi = {https://doi.org/10.1145/ABC.DEF},
  keywords = {ranking, neural models; BERT},
  url = {http://example.org/a_b%20c},
  abstract = {We study
    things across lines.},
}

@InProceedings{jones2019,
  title = "Dense Retrieval",
  author = "Ann Jones and Bob van der Berg",
  booktitle = {Proceedings of SIGIR},
  year = 2019,
}
"""


def test_bibtex_good_file(tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    result = load_corpus(path)
    assert result.format == "bibtex" and result.problems == []
    smith, jones = result.papers
    assert smith.id == "smith2020"
    assert smith.title == "The Best Über Méthode: 50% of R&D"
    assert smith.authors == ["John Smith", "Jörg Müller", "World Health Organization"]
    assert smith.venue == "Journal of IR"
    assert smith.year == 2020
    assert smith.doi == "10.1145/abc.def"
    assert smith.extra["keywords"] == ["ranking", "neural models", "BERT"]
    assert smith.extra["url"] == "http://example.org/a_b%20c"
    assert smith.abstract == "We study things across lines."
    assert smith.extra["entry_type"] == "article"
    assert jones.venue == "Proceedings of SIGIR" and jones.year == 2019
    assert jones.authors == ["Ann Jones", "Bob van der Berg"]
    assert jones.extra["entry_type"] == "inproceedings"


def test_bibtex_gzip(tmp_path):
    path = tmp_path / "refs.bib.gz"
    path.write_bytes(gzip.compress(BIB.encode()))
    assert [p.id for p in load_corpus(path).papers] == ["smith2020", "jones2019"]


BAD_BIB = """@article{good1, title = {Good one}, year = 2001}

@article{notitle, author = {A. B}, year = 2002}

@article{badyear, title = {Bad year}, year = {19x9}}

@article{good1, title = {Duplicate key}}

@article{broken, title = {Unclosed
@article{good2, title = {Good two}}
"""


def test_bibtex_bad_entries_are_skipped_and_reported(tmp_path):
    path = tmp_path / "bad.bib"
    path.write_text(BAD_BIB, encoding="utf-8")
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["good1", "good2"]
    assert result.papers[0].title == "Good one"
    by_location = {p.location: p.message for p in result.errors}
    assert "neither title nor abstract" in by_location["entry notitle (line 3)"]
    assert "year must be a whole number" in by_location["entry badyear (line 5)"]
    assert "duplicate id “good1”" in by_location["entry good1 (line 7)"]
    assert "line 1" in by_location["entry good1 (line 7)"]
    assert "syntax error" in by_location["line 9"]
    assert (result.read, result.kept, result.skipped) == (6, 2, 4)


def test_bibtex_strict_names_entry_and_line(tmp_path):
    path = tmp_path / "bad.bib"
    path.write_text(BAD_BIB, encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.bib: entry notitle \(line 3\): has neither title"):
        load_corpus(path, strict=True)


def test_bibtex_non_utf8_bytes_skip_only_their_entry(tmp_path):
    path = tmp_path / "latin.bib"
    path.write_bytes(b"@article{a, title = {Fine}}\n\n@article{b,\n  title = {Caf\xe9}}\n\n@article{c, title={Ok}}\n")
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["a", "c"]
    problem = only_error(result)
    assert problem.location == "entry b (line 3)" and "non-UTF-8 bytes on line 4" in problem.message


LATEX_BIB = r"""@article{skoda2020,
  author = {\v{S}koda, Petr and \L{}ukasz Kowalski and \v Skoda, Jan and M{\"u}ller, J{\"o}rg and Erd\H{o}s, P\'al
            and D{\'\i}az, Ana and {\AA}ngstr{\"o}m, Anders and S{\o}ren Kierkegaard and Stra\ss e, Otto
            and {Barnes and Noble, Inc.} and Ale\v{s} Zem\'an and Fran\c{c}ois \`Etienne},
  title = {{\v{Z}}ivot \textit{na} {\'u}rovni: \mbox{BERT} for \LaTeX\ users, a na\"{\i}ve r\'esum\'e --- 50\% \& more},
  journal = {Journal of \v{C}esk\'e Studies},
  year = {2020},
}

@article{badname, author = {Smith, John, Jr, Extra}, title = {Too many commas}}
"""


def test_bibtex_latex_accents_and_commands_are_decoded_in_names_and_titles(tmp_path):
    path = tmp_path / "accents.bib"
    path.write_text(LATEX_BIB, encoding="utf-8")
    result = load_corpus(path)
    [paper] = result.papers
    assert paper.authors == ["Petr Škoda", "Łukasz Kowalski", "Jan Škoda", "Jörg Müller", "Pál Erdős", "Ana Díaz",
                             "Anders Ångström", "Søren Kierkegaard", "Otto Straße", "Barnes and Noble, Inc.",
                             "Aleš Zemán", "François Ètienne"]
    assert paper.title == "Život na úrovni: BERT for LaTeX users, a naïve résumé — 50% & more"
    assert paper.venue == "Journal of České Studies"
    problem = only_error(result)  # a name that cannot be split is an error for its entry, located
    assert problem.location == "entry badname (line 10)" and "cannot split the name" in problem.message


# --------------------------------------------------------------------------- CSL-JSON

CSL = [
    {"id": "lee2021", "type": "article-journal", "title": "Graph ranking", "abstract": "About graphs.",
     "author": [{"family": "Lee", "given": "Ann"}, {"literal": "The Consortium"},
                {"family": "Beethoven", "given": "Ludwig", "non-dropping-particle": "van"}],
     "container-title": "Journal of Graphs", "issued": {"date-parts": [[2021, 3, 9]]},
     "DOI": "doi:10.5555/XYZ", "keyword": "graphs, ranking", "page": "1-10", "references": ["kim2019"]},
    {"id": "kim2019", "title": "Old work", "issued": {"date-parts": [["2019"]]}},
]


def test_csl_json_good_file(tmp_path):
    path = tmp_path / "items.json"
    path.write_text(json.dumps(CSL, indent=2))
    result = load_corpus(path)
    assert result.format == "csl-json" and result.problems == []
    lee, kim = result.papers
    assert lee.authors == ["Ann Lee", "The Consortium", "Ludwig van Beethoven"]
    assert lee.venue == "Journal of Graphs" and lee.year == 2021
    assert lee.extra["date"] == "2021-03-09" and lee.doi == "10.5555/xyz"
    assert lee.extra["keywords"] == ["graphs", "ranking"] and lee.extra["page"] == "1-10"
    assert lee.references == ["kim2019"]
    assert kim.year == 2019 and kim.authors == []


def test_csl_json_gzip(tmp_path):
    path = tmp_path / "items.json.gz"
    path.write_bytes(gzip.compress(json.dumps(CSL).encode()))
    assert [p.id for p in load_corpus(path).papers] == ["lee2021", "kim2019"]


@pytest.mark.parametrize("item, expected", [
    ({"title": "No id"}, "missing id"),
    ({"id": "z", "title": "T", "author": "Ann Lee"}, "author must be a list"),
    ({"id": "z", "title": "T", "author": ["Ann Lee"]}, "author[0] must be a CSL name object"),
    ({"id": "z", "title": "T", "author": [{"family": 7, "given": "Ann"}]}, "author[0].family must be a string, got int"),
    ({"id": "z", "title": "T", "author": [{"given": "A"}, {"family": ["Lee"]}]}, "author[1].family must be a string, got list"),
    ({"id": "z", "title": "T", "author": [{"family": {"x": 1}}]}, "author[0].family must be a string, got object"),
    ({"id": "z", "title": "T", "author": [{"family": "Lee", "given": 1.5}]}, "author[0].given must be a string"),
    ({"id": "z", "title": "T", "issued": "2020"}, "issued must be a CSL date object"),
    ({"id": "z", "title": "T", "issued": {"date-parts": [["20x0"]]}}, "year must be a whole number"),
    ({"id": "z"}, "neither title nor abstract"),
    ("just a string", "expected a CSL item object"),
    ({"id": "lee2021", "title": "Again"}, "duplicate id “lee2021”"),
])
def test_csl_json_bad_item_reported_with_item_and_line(tmp_path, item, expected):
    path = tmp_path / "items.json"
    path.write_text(json.dumps([CSL[0], CSL[1], item], indent=2))
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["lee2021", "kim2019"]
    problem = only_error(result)
    starts = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == "  {" or line.startswith('  "')]
    first_line = starts[2]
    assert problem.location == f"item 3 (line {first_line})"
    assert expected in problem.message


def test_csl_json_syntax_error_refuses_the_file_naming_the_line(tmp_path):
    path = tmp_path / "items.json"
    path.write_text('[\n{"id": "a", "title": "A"},\n{"id": "b", "title": "B",,}\n{"id": "c", "title": "C"}\n]\n')
    for strict in (False, True):  # the items after the error cannot be read: nothing is used, not a part
        with pytest.raises(CorpusError, match=r"items\.json: line 3: not valid JSON.*nothing from it was used"):
            load_corpus(path, strict=strict)
    path.write_text('[\n{"id": "a", "title": "A"},\n{"id": "b", "title": "B"}')
    with pytest.raises(CorpusError, match="ends too early"):
        load_corpus(path)


def test_csl_json_non_utf8_item_is_skipped(tmp_path):
    path = tmp_path / "items.json"
    path.write_bytes(b'[\n{"id": "a", "title": "A"},\n{"id": "b",\n "title": "Caf\xe9"},\n{"id": "c", "title": "C"}\n]\n')
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["a", "c"]
    problem = only_error(result)
    assert problem.location == "item 2 (line 3)" and "line 4" in problem.message


# --------------------------------------------------------------------------- OpenAlex

def openalex_work(num: int, refs=(), **fields) -> dict:
    work = {
        "id": f"https://openalex.org/W{num}",
        "doi": f"https://doi.org/10.9999/W{num}",
        "display_name": f"Work number {num}",
        "publication_year": 2022,
        "publication_date": "2022-06-01",
        "abstract_inverted_index": {"Deep": [0], "nets": [1, 3], "beat": [2]},
        "authorships": [{"author": {"display_name": "Ada Byron"}}, {"author": {"display_name": None}}],
        "primary_location": {"source": {"display_name": "Neural Journal"}},
        "referenced_works": [f"https://openalex.org/W{r}" for r in refs],
    }
    work.update(fields)
    return work


def test_openalex_json_array(tmp_path):
    path = tmp_path / "works.json"
    path.write_text(json.dumps([openalex_work(1), openalex_work(2, refs=[1, 777])]))
    result = load_corpus(path)
    assert result.format == "openalex"
    w1, w2 = result.papers
    assert w1.id == "W1" and w1.title == "Work number 1"
    assert w1.abstract == "Deep nets beat nets"
    assert w1.authors == ["Ada Byron"] and w1.venue == "Neural Journal" and w1.year == 2022
    assert w1.doi == "10.9999/w1" and w1.extra["date"] == "2022-06-01"
    assert w1.extra["openalex"] == "https://openalex.org/W1"
    assert w2.references == ["W1"]
    [warning] = result.warnings
    assert "W777" in warning.message


def test_openalex_jsonl_gzip_and_results_page(tmp_path):
    lines = tmp_path / "works.jsonl.gz"
    write_jsonl(lines, [openalex_work(1), openalex_work(2, refs=[1])], gz=True)
    result = load_corpus(lines)
    assert result.format == "openalex" and [p.id for p in result.papers] == ["W1", "W2"]
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"meta": {"count": 2}, "results": [openalex_work(3), openalex_work(4)]}, indent=1))
    result = load_corpus(page)
    assert result.format == "openalex" and [p.id for p in result.papers] == ["W3", "W4"]


def test_openalex_work_without_abstract_or_venue(tmp_path):
    path = tmp_path / "works.json"
    path.write_text(json.dumps([openalex_work(1, abstract_inverted_index=None, primary_location=None)]))
    [paper] = load_corpus(path).papers
    assert paper.abstract == "" and paper.venue == "" and paper.title == "Work number 1"


@pytest.mark.parametrize("fields, expected", [
    ({"id": None}, "missing id"),
    ({"abstract_inverted_index": {"word": "zero"}}, "abstract_inverted_index"),
    ({"authorships": "Ada"}, "authorships must be a list"),
    ({"publication_year": "twenty"}, "year must be a whole number"),
    ({"display_name": None, "abstract_inverted_index": None}, "neither title nor abstract"),
    ({"keywords": True}, "keywords must be a list"),  # found by the fuzz tests
])
def test_openalex_bad_work(tmp_path, fields, expected):
    path = tmp_path / "works.jsonl"
    write_jsonl(path, [openalex_work(1), openalex_work(2, **fields)])
    result = load_corpus(path)
    assert [p.id for p in result.papers] == ["W1"]
    problem = only_error(result)
    assert problem.location == "line 2" and expected in problem.message


# --------------------------------------------------------------------------- format detection


def test_format_detection_by_extension_and_content(tmp_path):
    bib = tmp_path / "refs.txt"
    bib.write_text(BIB)
    csl = tmp_path / "items.json"
    csl.write_text(json.dumps(CSL))
    native_array = tmp_path / "native.json"
    native_array.write_text(json.dumps([record("a"), record("b")], indent=2))
    native_lines = tmp_path / "native.data"
    write_jsonl(native_lines, [record("a")])
    oa = tmp_path / "works.data.gz"
    write_jsonl(oa, [openalex_work(1)], gz=True)
    assert detect_format(bib) == "bibtex"
    assert detect_format(csl) == "csl-json"
    assert detect_format(native_array) == "jsonl"
    assert detect_format(native_lines) == "jsonl"
    assert detect_format(oa) == "openalex"
    assert [p.id for p in load_corpus(native_array).papers] == ["a", "b"]
    assert load_corpus(native_array).papers[0].authors == ["Ann Lee"]


def test_explicit_format_overrides_detection(tmp_path):
    path = tmp_path / "works.json"
    path.write_text(json.dumps([openalex_work(1)]))
    assert load_corpus(path, fmt="openalex").papers[0].id == "W1"
    as_csl = load_corpus(path, fmt="csl")  # read as CSL, the OpenAlex fields mean nothing
    assert as_csl.papers == [] and "neither title nor abstract" in as_csl.errors[0].message


def test_unrecognisable_file_raises(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n")
    with pytest.raises(CorpusError, match="cannot tell the corpus format"):
        load_corpus(path)


@pytest.mark.parametrize("name, content, kind", [
    ("random.jsonl", bytes(range(256)) * 80, "binary data"),
    ("random.bib", b"@article{x, title={T}}\n" + bytes((i * 7919) % 256 for i in range(20000)), "binary data"),
    ("paper.json", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "a PDF document"),
    ("refs.jsonl", b"PK\x03\x04\x14\x00\x06\x00" + bytes(400), "a ZIP archive"),
    ("refs.bib", "@article{x, title={Ünïcode}}\n".encode("utf-16"), "UTF-16 text"),
    ("c.jsonl.gz", gzip.compress(bytes(range(256)) * 40), "binary data"),
])
def test_binary_file_is_refused_with_a_clear_message(tmp_path, name, content, kind):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CorpusError) as info:
        load_corpus(path)
    message = str(info.value)
    assert f"not a text corpus file: {kind}" in message and "not UTF-8 text at byte" in message
    assert "b'" not in message and "\\x" not in message


def test_latin1_text_is_not_mistaken_for_binary(tmp_path):
    path = tmp_path / "latin.jsonl"
    lines = [json.dumps(record(f"p{i}"), ensure_ascii=False) for i in range(30)]
    lines[3] = json.dumps(record("p3", title="Café résumé"), ensure_ascii=False)
    path.write_bytes("\n".join(lines).encode("utf-8").replace("é".encode(), b"\xe9") + b"\n")
    result = load_corpus(path)
    assert result.kept == 29 and "non-UTF-8 bytes" in only_error(result).message


def test_bad_values_are_quoted_short_and_printable(tmp_path):
    path = tmp_path / "c.jsonl"
    write_jsonl(path, [record("a", year="19\x00\x07" + "9" * 500)])
    message = only_error(load_corpus(path)).message
    assert message.startswith("year must be a whole number, got “19??999") and len(message) < 120
