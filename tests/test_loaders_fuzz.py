"""Fuzzed corpus files: whatever the bytes, the loader returns valid papers or raises a clear CorpusError.

Each property writes a generated file and loads it as a user would (`load_corpus`, format detected or named).
CITREC_FUZZ_EXAMPLES sets the number of cases per property (default 60, kept small for the suite;
bench/reliability.py runs many more).
"""
from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recommender.corpus.loaders import CorpusError, load_corpus
from recommender.paper import Paper
from recommender.store.build import date_key
from recommender.store.lexical import lexical_text

EXAMPLES = int(os.environ.get("CITREC_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Pieces real files are made of, so that generated text reaches deep into the parsers, not only their first check.
LATEX = ["\\v{S}", "\\v S", "\\'e", "\\\"{o}", "{\\L}", "\\L{}", "\\ss", "\\mbox{", "\\url{", "\\textbf{", "$x^2$",
         "\\", "{", "}", "{}", "~", "--", "%", "&", "#", "\\&", "\\%", " and ", ",", "\"", "@", "=", "\n", "é", "中文",
         "\\i", "\\c{c}", "\\t{oo}", "\\begin{itemize}", "\\end{", "^", "_", "\\\\", "\x00", "\ufffd"]
FIELDS = ["author", "title", "abstract", "journal", "booktitle", "year", "doi", "keywords", "editor", "url", "note"]

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
latex_text = st.lists(st.sampled_from(LATEX) | st.text(max_size=6), max_size=12).map("".join)


def record_like(keys: list[str]) -> st.SearchStrategy:
    """Objects whose keys are (mostly) the format's own, with values of any JSON type."""
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), json_values | latex_text, max_size=len(keys))


NATIVE_KEYS = ["id", "title", "abstract", "authors", "venue", "year", "references", "doi", "keywords", "date"]
CSL_KEYS = ["id", "title", "abstract", "author", "container-title", "issued", "DOI", "keyword", "references", "type"]
OPENALEX_KEYS = ["id", "display_name", "title", "abstract_inverted_index", "authorships", "primary_location",
                 "host_venue", "publication_year", "referenced_works", "doi", "publication_date", "keywords"]
csl_author = st.lists(st.dictionaries(st.sampled_from(["family", "given", "literal", "suffix",
                                                       "non-dropping-particle"]), json_values, max_size=3)
                      | json_values, max_size=3)
csl_item = st.tuples(record_like(CSL_KEYS), csl_author).map(lambda pair: {**pair[0], "author": pair[1]})


@st.composite
def bibtex_files(draw) -> str:
    entries = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["article", "inproceedings", "misc", "string", "comment", "preamble", "x"]))
        key = draw(st.sampled_from(["a", "b", "a", "k1", ""]) | st.text(max_size=5))
        fields = draw(st.lists(st.tuples(st.sampled_from(FIELDS) | st.text(max_size=4), latex_text), max_size=5))
        body = ",\n".join(f"  {name} = {{{value}}}" if draw(st.booleans()) else f'  {name} = "{value}"'
                          for name, value in fields)
        entries.append(f"@{kind}{{{key},\n{body}\n}}" + draw(st.sampled_from(["", "\n", "}", "{", "@"])))
    return "\n\n".join(entries)


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def load_or_clear_error(path: Path, fmt: str | None = None, strict: bool = False) -> str:
    """The property: valid papers ("loaded"), or a CorpusError whose message is readable text ("refused")."""
    try:
        result = load_corpus(path, fmt=fmt, strict=strict)
    except CorpusError as exc:
        assert str(exc) and "b'" not in str(exc) and "b\"" not in str(exc), str(exc)
        return "refused"
    assert result.read == result.kept + result.skipped
    for paper in result.papers:
        assert isinstance(paper, Paper) and paper.id and isinstance(paper.title, str)
        assert isinstance(paper.abstract, str) and (paper.title.strip() or paper.abstract.strip())
        assert all(isinstance(name, str) for name in paper.authors)
        assert all(isinstance(ref, str) for ref in paper.references)
        json.dumps(paper.to_dict())  # storable as it is, and indexable
        assert isinstance(lexical_text(paper), str) and isinstance(paper.text, str) and isinstance(paper.doi, str)
        date_key(paper)
    for problem in result.problems:
        assert "b'" not in problem.message and "Traceback" not in problem.message
    return "loaded"


@FUZZ
@given(lines=st.lists(record_like(NATIVE_KEYS).map(json.dumps) | st.text(max_size=40), max_size=6),
       strict=st.booleans())
def test_fuzzed_jsonl_never_crashes(folder, lines, strict):
    path = folder / "c.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    load_or_clear_error(path, strict=strict)


@FUZZ
@given(text=bibtex_files(), strict=st.booleans())
def test_fuzzed_bibtex_never_crashes(folder, text, strict):
    path = folder / "c.bib"
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    load_or_clear_error(path, strict=strict)


@FUZZ
@given(items=st.lists(csl_item | json_values, max_size=5), cut=st.integers(0, 40), strict=st.booleans())
def test_fuzzed_csl_json_never_crashes(folder, items, cut, strict):
    path = folder / "c.json"
    text = json.dumps(items, indent=1)
    path.write_text(text[: len(text) - cut], encoding="utf-8")  # sometimes cut short
    load_or_clear_error(path, fmt="csl-json", strict=strict)


@FUZZ
@given(works=st.lists(record_like(OPENALEX_KEYS), max_size=5), as_page=st.booleans())
def test_fuzzed_openalex_never_crashes(folder, works, as_page):
    path = folder / "works.json"
    path.write_text(json.dumps({"results": works} if as_page else works), encoding="utf-8")
    load_or_clear_error(path, fmt="openalex")


@FUZZ
@given(data=st.binary(max_size=3000), name=st.sampled_from(["c.jsonl", "c.bib", "c.json", "c.jsonl.gz", "c.txt"]),
       compress=st.booleans(), cut=st.integers(0, 50))
def test_fuzzed_bytes_never_crash(folder, data, name, compress, cut):
    path = folder / name
    if compress:
        packed = gzip.compress(data)
        data = packed[: max(len(packed) - cut, 0)]  # sometimes a truncated gzip stream
    path.write_bytes(data)
    load_or_clear_error(path)
