"""Explanations quote specific shared terms: words that many papers of the corpus hold are not evidence."""
from __future__ import annotations

from recommender.paper import Paper
from recommender.pipeline.explain import Explainer
from recommender.query import Query
from recommender.store.lexical import LexicalIndex, analyze


def shared_terms(explanation: str) -> list[str]:
    """The words quoted after "shares the terms", in order."""
    if "shares the terms" not in explanation.lower():
        return []
    quoted = explanation.lower().split("shares the terms ", 1)[1].split(";")[0].split(".")[0]
    return [word.strip("“” ") for word in quoted.split(",")]


def test_words_many_papers_hold_are_not_shown_and_specific_shared_words_are(small_recommender):
    passage = ("Search engines score documents by term frequency and document length, as the BM25 ranking function "
               "does [CIT].")
    lexical = small_recommender.index.lexical
    frequencies = lexical.document_frequencies(passage)
    generic = {"search", "documents", "ranking"}
    assert all(frequencies[analyze(word)[0]] >= 3 for word in generic)  # 3+ of the 24 papers hold each
    top = small_recommender.recommend(Query(context=passage, k=3))[0]
    assert top.paper_id == "ir0"  # "The BM25 ranking function weights term frequency and document length ..."
    terms = shared_terms(top.explanation)
    assert {"bm25", "frequency", "length"} <= set(terms)
    assert not generic & set(terms)


def test_a_word_in_a_few_percent_of_a_larger_corpus_is_generic():
    """Held by 5 of 100 papers, "previous" was shown before (the limit was about a tenth of the corpus)."""
    texts = ([f"Previous work on topic {i}" for i in range(5)]
             + ["Playlist continuation for music streaming, e.g. song sequences"]
             + [f"Filler paper number {i} about subject {i}" for i in range(94)])
    lexical = LexicalIndex.build(texts)
    assert lexical.documents == 100
    assert lexical.document_frequencies("previous playlist g unknownword") == {"previou": 5, "playlist": 1, "g": 1}
    why = Explainer("Previous playlist methods, e.g. song models", lexical)
    paper = Paper("p", title="Previous playlist continuation", abstract="Song sequences, e.g. for music streaming.")
    assert shared_terms(why.explain(paper, {})) == ["playlist", "song"]  # no "previous", no "g" of "e.g."
