import math

import pytest

from recommender.evaluation.metrics import average_precision, ndcg_at, precision_at, recall_at, reciprocal_rank, summarize


def test_single_query_metrics_match_hand_computed_values():
    ranked = ["a", "x", "b", "y", "c"]
    relevant = {"a", "b", "z"}
    assert reciprocal_rank(ranked, relevant) == 1.0
    assert reciprocal_rank(["x", "y", "b"], relevant) == pytest.approx(1 / 3)
    # hits at ranks 1 and 3; z never retrieved: (1/1 + 2/3) / 3
    assert average_precision(ranked, relevant) == pytest.approx((1 + 2 / 3) / 3)
    dcg = 1 + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(ranked, relevant, 10) == pytest.approx(dcg / idcg)
    assert precision_at(ranked, relevant, 2) == 0.5
    assert recall_at(ranked, relevant, 5) == pytest.approx(2 / 3)


def test_f1_is_corpus_level_harmonic_mean_of_mean_precision_and_recall():
    runs = [(["a", "b"], {"a"}), (["c", "d"], {"x", "y"})]
    out = summarize(runs, cutoffs=(2,))
    mean_p, mean_r = (0.5 + 0.0) / 2, (1.0 + 0.0) / 2
    assert out["precision@2"] == pytest.approx(mean_p)
    assert out["recall@2"] == pytest.approx(mean_r)
    assert out["f1@2"] == pytest.approx(2 * mean_p * mean_r / (mean_p + mean_r))
    assert out["mrr"] == pytest.approx(0.5)
    assert set(out) >= {"mrr", "map", "ndcg@10", "precision@2", "recall@2", "f1@2"}


def test_summarize_refuses_an_empty_query_set():
    with pytest.raises(ValueError):
        summarize([])
