"""The citation-tuned encoder head: training on graph pairs, storage, and the "tuned" field of the pipeline."""

import numpy as np
import pytest

from recommender import Query, Recommender
from recommender.config import METHODS
from recommender.pipeline.learned import LearnedModelError, head_path, load_head, save_head
from recommender.training.encoder import citation_pairs, train_head


def pair_cosines(vectors, pairs):
    return np.einsum("ij,ij->i", vectors[pairs[:, 0]], vectors[pairs[:, 1]])


def test_untrained_head_is_the_base_encoder_and_training_pulls_citations_together(small_recommender):
    index = small_recommender.index
    base = np.asarray(index.dense)
    everyone = list(range(len(index)))
    pairs = citation_pairs(index.graph, everyone)
    assert len(pairs) == index.graph.edge_count
    untrained = train_head(base, index.graph, everyone, epochs=0, progress=False)
    assert np.allclose(untrained.apply(base), base, atol=1e-5)
    head = train_head(base, index.graph, everyone, epochs=30, progress=False)
    tuned = head.apply(base)
    assert np.allclose(np.linalg.norm(tuned, axis=1), 1.0, atol=1e-5)
    assert pair_cosines(tuned, pairs).mean() > pair_cosines(base, pairs).mean() + 0.05
    assert head.info["pairs"] == len(pairs)


def test_too_few_citations_are_refused(small_recommender):
    index = small_recommender.index
    with pytest.raises(ValueError, match="too few"):
        train_head(np.asarray(index.dense), index.graph, [index.position["cite1"]], progress=False)


def test_stored_head_serves_the_tuned_field(index_copy):
    rec = Recommender.load(index_copy)
    assert rec.head is None
    with pytest.raises(LearnedModelError, match="train"):
        rec.rank(Query(title="citation recommendation"), METHODS["tuned"])
    head = train_head(np.asarray(rec.index.dense), rec.index.graph, list(range(len(rec.index))), epochs=5,
                      progress=False)
    save_head(index_copy, head)
    rec = Recommender.load(index_copy)
    assert np.allclose(rec.head.w1, head.w1)
    query = Query(title="Recommending citations for a draft", k=5)
    assert rec.route(query, METHODS["tuned"]).field == "tuned"
    assert rec.route(query, METHODS["hybrid+graph"]).field == "dense"  # "off"
    ranking = rec.rank(query, METHODS["tuned"])
    assert sum(rec.index.ids[p].startswith("cite") for p in ranking.positions) >= 4
    vector = rec.query_vector(query, "tuned", METHODS["tuned"])
    expected = head.apply(rec.encoder.encode([query.main_text]))[0]
    assert np.allclose(vector, expected, atol=1e-5)


def test_damaged_or_mismatched_head_is_a_clear_error(index_copy, small_recommender):
    index = small_recommender.index
    head = train_head(np.asarray(index.dense), index.graph, list(range(len(index))), epochs=1, progress=False)
    save_head(index_copy, head)
    with pytest.raises(LearnedModelError, match="expects"):
        load_head(index_copy, dim=12)
    head_path(index_copy).write_bytes(b"not a numpy file")
    with pytest.raises(LearnedModelError, match="unreadable"):
        Recommender.load(index_copy)
