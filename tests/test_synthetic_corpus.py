"""The scale benchmark's synthetic corpora (bench/synthetic_corpus.py): papers the engine reads, citations to
earlier papers only, and every vector already in the index's embedding cache, so that a build embeds nothing."""
import json

import numpy as np
import pytest

from bench import synthetic_corpus as synthetic
from recommender.corpus.loaders import load_corpus
from recommender.embedding.cache import EmbeddingCache, text_key
from recommender.store import versions
from recommender.store.index import Index
from recommender.store.build import build_index


@pytest.fixture(scope="module")
def bases():
    return synthetic.load_bases()  # the demo corpus and its shipped vectors only


def test_papers_cite_earlier_papers_and_their_vectors_are_cached(bases, tmp_path, monkeypatch):
    monkeypatch.setattr(synthetic, "CITATION_BLOCK", 40)
    counts = synthetic.write_corpus(bases, 300, tmp_path / "corpus.jsonl.gz", tmp_path / "idx", seed=3)
    papers = load_corpus(tmp_path / "corpus.jsonl.gz", strict=True).papers
    assert len(papers) == counts["papers"] == 300 and counts["references"] > 300
    position = {p.id: i for i, p in enumerate(papers)}
    for i, paper in enumerate(papers):
        assert paper.title and len(paper.abstract.split()) > 20 and paper.authors and paper.year
        assert all(position[r] < i - i % 40 for r in paper.references)  # only papers of earlier blocks
    assert [p.year for p in papers] == sorted(p.year for p in papers)
    cache = EmbeddingCache(versions.embedding_cache_path(tmp_path / "idx"))
    found = cache.get_many([text_key(synthetic.ENCODER_NAME, p.text) for p in papers])
    cache.close()
    assert len(found) == 300
    assert np.allclose([np.linalg.norm(v) for v in found.values()], 1.0, atol=1e-5)

    stages = []
    build_index(papers, tmp_path / "idx", on_progress=lambda stage, done, total: stages.append(stage),
                progress_bar=False)
    assert not [s for s in stages if s.startswith("embedding")]  # every vector came from the cache
    index = Index.load(tmp_path / "idx")
    assert len(index) == 300 and index.graph.edge_count == counts["references"]


def test_queries_of_both_modes(bases, tmp_path):
    synthetic.write_queries(bases, 5, tmp_path / "queries.json")
    queries = json.loads((tmp_path / "queries.json").read_text(encoding="utf-8"))
    assert len(queries["global"]) == len(queries["local"]) == 5
    assert all(q["title"] and q["abstract"] for q in queries["global"])
    assert all("[CIT]" in q["context"] and q["title"] for q in queries["local"])
