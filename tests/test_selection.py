import math

import pytest

from recommender.corpus.authors import author_key
from recommender.pipeline.select import clusters_of, marginal_gain, select_diverse

REWARDS = [1.0, 0.95, 0.9, 0.85, 0.5, 0.45, 0.4, 0.3]
AUTHORS = [["Ada Lovelace"], ["A. Lovelace", "Alan Turing"], ["Lovelace, Ada"], ["Ada Lovelace"],
           ["Grace Hopper"], ["Kurt Goedel"], ["Emmy Noether"], ["John von Neumann"]]


def spread(indices):
    return len({c for i in indices for c in clusters_of(AUTHORS[i], str(i))})


def test_zero_diversity_is_the_plain_ranking():
    assert select_diverse(REWARDS, AUTHORS, 5, 0.0) == [0, 1, 2, 3, 4]


def test_author_spread_grows_with_the_weight():
    spreads = [spread(select_diverse(REWARDS, AUTHORS, 4, w)) for w in (0.0, 0.5, 2.0)]
    assert spreads[0] < spreads[-1]
    assert spreads == sorted(spreads)
    assert select_diverse(REWARDS, AUTHORS, 4, 2.0)[0] == 0


def test_author_names_in_different_forms_share_a_cluster():
    assert author_key("Ada Lovelace") == author_key("A. Lovelace") == author_key("Lovelace, Ada")


def test_greedy_gains_show_diminishing_returns():
    clusters = clusters_of(["Ada Lovelace", "Alan Turing"], "p")
    small = {c: 0.0 for c in clusters}
    large = {c: 0.8 for c in clusters}  # a superset list already holds papers of these authors
    assert marginal_gain(0.6, clusters, small, 1.0) >= marginal_gain(0.6, clusters, large, 1.0)


def test_fresh_paper_gains_sqrt_of_reward_whatever_its_author_count():
    totals = {c: 0.0 for c in ("a_x", "b_y", "c_z")}
    assert marginal_gain(0.49, ["a_x"], totals, 1.0) == pytest.approx(0.49 + math.sqrt(0.49))
    assert marginal_gain(0.49, ["a_x", "b_y", "c_z"], totals, 1.0) == pytest.approx(0.49 + math.sqrt(0.49))


def test_negative_rewards_are_refused():
    with pytest.raises(ValueError):
        select_diverse([0.5, -0.1], [["A"], ["B"]], 2, 1.0)


def test_protected_top_results_keep_their_order_and_count_as_represented():
    plain = select_diverse(REWARDS, AUTHORS, 6, 0.0)
    diverse = select_diverse(REWARDS, AUTHORS, 6, 2.0)
    protected = select_diverse(REWARDS, AUTHORS, 6, 2.0, keep=3)
    assert protected[:3] == plain[:3] != diverse[:3]
    # below the protected places the authors of the first three (the Lovelace cluster) are represented already
    assert set(protected[3:]) == {4, 5, 6} and spread(protected) > spread(plain)
    assert select_diverse(REWARDS, AUTHORS, 4, 2.0, keep=4) == plain[:4]
    with pytest.raises(ValueError):
        select_diverse(REWARDS, AUTHORS, 4, 1.0, keep=-1)
