"""The arXiv metadata snapshot builder on a small snapshot in Kaggle's format (tests/fixtures/arxiv)."""
from __future__ import annotations

import gzip
import json

import pytest

from recommender.cli import main
from recommender.corpus.loaders import load_corpus
from recommender.corpus.sources.arxiv_snapshot import ArxivFilter, build_from_snapshot, entry_year, read_snapshot

from support.fixture_server import FIXTURES

SNAPSHOT = FIXTURES / "arxiv" / "snapshot.jsonl"


def ids(keep: ArxivFilter, **kw) -> list[str]:
    return [r["id"] for r in read_snapshot(SNAPSHOT, keep, progress=False, **kw)]


def test_category_prefixes_cross_lists_and_primary_only():
    assert ids(ArxivFilter(categories=("cs",))) == ["1905.00101", "2003.00202", "2111.00303", "2204.00505"]
    assert ids(ArxivFilter(categories=("cs.IR",))) == ["1905.00101", "2111.00303"]  # 2111: cross-listed
    assert ids(ArxivFilter(categories=("cs.IR",), primary_only=True)) == ["1905.00101"]
    assert ids(ArxivFilter(categories=("hep-th", "math.AG"))) == ["hep-th/9901001", "1712.00404"]
    assert ids(ArxivFilter(categories=("math",))) == ["1712.00404"]
    assert ids(ArxivFilter(categories=("c",))) == []  # a prefix ends at a dot, not inside a name


def test_years_from_the_first_version_or_the_id():
    assert ids(ArxivFilter(year_min=2020, year_max=2021)) == ["2003.00202", "2111.00303"]
    assert ids(ArxivFilter(year_max=2000)) == ["hep-th/9901001"]
    assert ids(ArxivFilter(year_min=2022)) == ["2204.00505"]  # no versions listed: 22 from the id
    assert entry_year({"id": "math/0501001"}) == 2005 and entry_year({"id": "hep-th/9912001"}) == 1999


def test_records_are_cleaned_and_load_as_a_corpus(tmp_path):
    out = tmp_path / "cs.jsonl.gz"
    summary = build_from_snapshot(SNAPSHOT, out, ArxivFilter(categories=("cs",)), progress=False)
    assert summary.papers == 4
    loaded = load_corpus(out)
    assert not loaded.problems
    first = loaded.papers[0]
    assert first.title == "Retrieval of related work for drafts"
    assert first.abstract == "We retrieve related work for a draft from its abstract alone."
    assert first.authors == ["Csilla Balázs", "John Smith Jr"]
    assert first.year == 2019 and first.doi == "10.5555/ax.1" and first.extra["arxiv"] == "1905.00101"
    assert first.extra["date"] == "2019-05-01" and first.extra["categories"] == ["cs.IR", "cs.CL"]
    assert loaded.papers[1].extra["journal_ref"] == "Fixture Letters 3 (2020) 1-9"
    assert loaded.papers[2].authors == ["A. Nowak", "B. Kowalski"]  # no authors_parsed: the authors string


def test_gzipped_snapshot_limit_and_command_line(tmp_path, capsys):
    packed = tmp_path / "snapshot.json.gz"
    with gzip.open(packed, "wb") as handle:
        handle.write(SNAPSHOT.read_bytes())
    out = tmp_path / "two.jsonl"
    assert main(["corpus", "arxiv", str(packed), "--category", "cs", "--limit", "2", "--out", str(out), "--quiet"]) == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["1905.00101", "2003.00202"]
    assert "wrote 2 papers" in capsys.readouterr().out

    assert main(["corpus", "arxiv", str(tmp_path / "none.json"), "--out", str(out)]) == 2
    assert "snapshot file not found" in capsys.readouterr().err
    assert main(["corpus", "arxiv", str(SNAPSHOT), "--category", "q-bio", "--out", str(tmp_path / "none.jsonl")]) == 2
    assert "no papers matched" in capsys.readouterr().err and not (tmp_path / "none.jsonl").exists()
    assert main(["corpus", "arxiv", str(SNAPSHOT), "--years", "twenty", "--out", str(out)]) == 2
    assert "--years 'twenty'" in capsys.readouterr().err


def test_a_cut_short_gzip_is_refused(tmp_path, capsys):
    packed = tmp_path / "snapshot.json.gz"
    with gzip.open(packed, "wb") as handle:
        handle.write(SNAPSHOT.read_bytes() * 50)
    packed.write_bytes(packed.read_bytes()[:-40])
    out = tmp_path / "x.jsonl"
    assert main(["corpus", "arxiv", str(packed), "--out", str(out), "--quiet"]) == 2
    assert "cut short" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("years", ["2015-2020", "2015", "2015-", "-2020"])
def test_year_ranges_parse(years):
    from recommender.corpus.sources.command import parse_years

    first, last = parse_years(years)
    assert (first, last) == {"2015-2020": (2015, 2020), "2015": (2015, 2015), "2015-": (2015, None),
                             "-2020": (None, 2020)}[years]
