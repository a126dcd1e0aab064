"""The in-process backend computes a text's BM25 once for the last few texts: every place of a draft asks for the
draft's title and abstract again. The answers are those computed afresh."""
import numpy as np
import pytest

from recommender.backends.base import Filters
from recommender.pipeline.recommender import Recommender
from recommender.query import Query

DRAFT = {"title": "Citation recommendation for literature review",
         "abstract": "We recommend papers to cite from the text around a citation place and the citation graph."}
PLACES = ["Graph neural networks learn from citation links [CIT].",
          "BM25 remains a strong baseline for retrieval of scientific papers [CIT].",
          "Dense retrieval encodes queries and papers as vectors [CIT]."]


@pytest.fixture
def counted(small_index, monkeypatch):
    """A recommender of its own whose index counts the texts BM25 scores."""
    recommender = Recommender.load(small_index)
    scored = []
    compute = recommender.index.lexical.scores

    def counting(text):
        scored.append(text)
        return compute(text)

    monkeypatch.setattr(recommender.index.lexical, "scores", counting)
    return recommender, scored


def answer(recommender, context):
    found = recommender.recommend(Query(context=context, k=10, **DRAFT)).recommendations
    return [(r.paper_id, r.score) for r in found]


def test_the_drafts_bm25_is_computed_once_for_all_its_places_with_the_same_answers(counted):
    recommender, scored = counted
    remembered = [answer(recommender, context) for context in PLACES]
    assert len(scored) == len(set(scored)) and len(scored) >= len(PLACES) + 1  # the draft's text scored once
    afresh = []
    for context in PLACES:
        recommender.clear_caches()
        afresh.append(answer(recommender, context))
    assert remembered == afresh and all(remembered)
    draft = [text for text in set(scored) if "Citation recommendation" in text]
    assert len(draft) == 1 and scored.count(draft[0]) == 1 + len(PLACES)  # computed again once forgotten


def test_remembered_scores_cannot_be_changed_and_only_the_last_few_texts_are_kept(counted):
    recommender, scored = counted
    backend, everything = recommender.backend, Filters.of(Query(), recommender.index)
    first = backend.lexical([("citation graph", 1.0)], everything)
    before = first.of(np.arange(5)).copy()
    first.scores *= 0  # an answer is the caller's own: the remembered scores stay as they were
    assert np.array_equal(backend.lexical([("citation graph", 1.0)], everything).of(np.arange(5)), before)
    assert scored.count("citation graph") == 1
    for n in range(backend.REMEMBERED + 1):
        backend.lexical([(f"word{n} citation", 1.0)], everything)
    backend.lexical([("citation graph", 1.0)], everything)
    assert scored.count("citation graph") == 2  # pushed out by newer texts, then computed again
