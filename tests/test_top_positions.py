"""`retrieve.top_positions`: the n best allowed positive scores, exactly, also when a long array is first cut at a
threshold estimated from a sample."""
import numpy as np
import pytest

from recommender.pipeline.retrieve import top_positions


def plain(scores: np.ndarray, allowed: np.ndarray, n: int) -> list[int]:
    """The answer by sorting every allowed positive score (ties in position order)."""
    positions = np.flatnonzero(allowed & (scores > 0))
    return positions[np.lexsort((positions, -scores[positions]))][:max(n, 0)].tolist()


@pytest.mark.parametrize("size", [7, 2_000, 400_000])
@pytest.mark.parametrize("kind", ["distinct", "ties", "few positive", "half zero"])
@pytest.mark.parametrize("share", [1.0, 0.3, 0.0005])
def test_the_best_allowed_scores_in_order(size, kind, share):
    rng = np.random.default_rng(size + len(kind))
    scores = {"distinct": rng.random(size), "ties": np.round(rng.random(size) * 4),
              "few positive": rng.random(size) - 0.999,
              "half zero": np.where(rng.random(size) < 0.5, 0.0, rng.random(size))}[kind].astype(np.float32)
    allowed = rng.random(size) < share
    for n in (0, 1, 10, 200):
        found = top_positions(scores, allowed, n)
        assert found.dtype == np.int64 and found.tolist() == plain(scores, allowed, n)
