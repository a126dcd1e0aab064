"""Corpus files read twice instead of held in memory (issue 30): the same papers and problems as `load_corpus`."""
import json

import pytest

from recommender.corpus.loaders import CorpusError, load_corpus
from recommender.corpus.loaders.stream import CorpusStream


def write_jsonl(path, records):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def files(tmp_path):
    first = write_jsonl(tmp_path / "a.jsonl", [
        {"id": "p1", "title": "Graph retrieval", "references": ["p3", "nowhere"]},
        {"id": "p2", "title": "Ranking", "references": ["p1"]},
        {"id": "p2", "title": "Ranking again"},
        {"title": "no id"},
        "{not json",
    ])
    second = write_jsonl(tmp_path / "b.jsonl", [
        {"id": "p3", "title": "Citations", "references": ["p2"]},
        {"id": "p1", "title": "A later copy of p1"},
    ])
    return first, second


def test_the_stream_validates_once_and_yields_each_ids_first_paper(files):
    stream = CorpusStream(files)
    assert len(stream) == 3
    first, second = stream.results
    assert (first.read, first.kept, second.read, second.kept) == (5, 2, 2, 2)
    messages = " | ".join(p.message for p in first.problems)
    assert "duplicate id" in messages and "missing id" in messages and len(first.errors) == 3
    for _ in range(2):  # every iteration reads the files again
        papers = list(stream)
        assert [(p.id, p.title, p.references) for p in papers] == [
            ("p1", "Graph retrieval", ["p3"]), ("p2", "Ranking", ["p1"]), ("p3", "Citations", ["p2"])]
        assert stream.dangling == 1


def test_one_file_gives_the_papers_load_corpus_gives(files):
    stream, loaded = CorpusStream([files[0]]), load_corpus(files[0])
    assert [p.to_dict() for p in stream] == [p.to_dict() for p in loaded.papers]
    assert stream.results[0].summary() == loaded.summary().replace(f", {len(loaded.warnings)} warnings",
                                                                   f", {len(stream.results[0].warnings)} warnings")


def test_strict_stops_at_the_first_bad_record_and_a_missing_file_is_named(files, tmp_path):
    with pytest.raises(CorpusError, match="duplicate id"):
        CorpusStream(files, strict=True)
    with pytest.raises(CorpusError, match="not found"):
        CorpusStream([tmp_path / "absent.jsonl"])
