"""The peer benchmark's own parts: another encoder's vectors as an index's dense field without touching the index,
and the peer's lists cut by the same protocol as ours."""
from __future__ import annotations

import numpy as np

from bench.incite_peer import score_peer, sibling_index
from recommender.config import METHODS
from recommender.embedding.encoders import english_encoder
from recommender.evaluation.queries import EvalQuery, query_for_paper
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store.index import Index


def test_sibling_index_serves_other_vectors_and_leaves_the_index_alone(small_index, tmp_path):
    base = Index.load(small_index)
    reversed_rows = np.ascontiguousarray(np.asarray(base.dense)[::-1])
    sibling = sibling_index(base, reversed_rows, tmp_path / "sibling", "reversed rows")

    assert sibling.manifest["model"] == "reversed rows"
    assert list(sibling.ids) == list(base.ids) and np.allclose(np.asarray(sibling.dense), reversed_rows)
    Index.load(small_index, verify=True)  # every file of the real index still matches its checksum
    assert sibling_index(base, reversed_rows, tmp_path / "sibling", "again").version == sibling.version  # reused

    # the first paper's own text now finds the paper that holds its vector: the last one
    first = base.papers([0])[0]
    ours = english_encoder(base.manifest["model"])  # the sibling's name is not an encoder: queries need one given
    ranking = Recommender(sibling, encoder=ours).rank(Query(title=first.title, abstract=first.abstract),
                                                      METHODS["dense"], k=3)
    assert sibling.ids[ranking.positions[0]] == base.ids[-1]


def test_peer_lists_lose_the_query_paper_and_later_papers(small_index):
    index = Index.load(small_index)
    by_date = sorted(range(len(index)), key=lambda p: int(index.dates[p]))
    earlier, query_pos, later = by_date[0], by_date[len(by_date) // 2], by_date[-1]
    query_paper = index.papers([query_pos])[0]
    item = EvalQuery("q", query_for_paper(query_paper), {index.ids[earlier]})
    ranked = [index.ids[query_pos], index.ids[later], index.ids[earlier]]

    metrics = score_peer(index, [item], {"q": {"ranked": ranked, "seconds": 0.01}})
    assert metrics["mrr"] == 1.0  # the relevant paper is first once the protocol's cut is applied
