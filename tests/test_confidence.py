"""Honest confidence: a query with no close paper is flagged as a weak match, in the engine and on the page."""
from __future__ import annotations

from app_helpers import ask, open_app
from recommender import confidence
from recommender.query import Query, Recommendation

NONSENSE = "zzzzqqq xxyyzz"
REAL_TITLE = "Citation recommendation"
REAL_TEXT = "We recommend references for a draft paper from its abstract."
NOTICE = "Nothing in this corpus is close to your text"


def test_nonsense_is_a_weak_match_and_a_real_query_is_not(small_recommender):
    nonsense = small_recommender.recommend(Query(abstract=NONSENSE))
    assert len(nonsense) == 10  # the engine still answers ...
    assert confidence.is_weak_match(nonsense)  # ... but nothing it found is close
    assert {confidence.strength(r) for r in nonsense} == {"weak"}
    assert confidence.best_closeness(nonsense) < confidence.WEAK_MATCH_COSINE["english"]

    real = small_recommender.recommend(Query(title=REAL_TITLE, abstract=REAL_TEXT))
    assert not confidence.is_weak_match(real)
    assert confidence.strength(real[0]) == "strong"
    assert confidence.best_closeness(real) > confidence.best_closeness(nonsense) + 0.3


def test_a_real_query_in_another_language_is_judged_on_the_multilingual_scale(small_recommender):
    german = "Wir empfehlen Literaturangaben für den Entwurf eines Artikels."
    recs = small_recommender.recommend(Query(abstract=german))
    assert confidence.scale(recs[0]) == "multilingual"
    assert not confidence.is_weak_match(recs)


def test_a_passage_copied_from_a_pdf_is_not_mistaken_for_nonsense(small_recommender):
    passage = ("Dense re-\ntrieval embeds questions and pas-\nsages with two trans-\nformer encoders and searches "
               "them by in-\nner product [CIT].")
    assert not confidence.is_weak_match(small_recommender.recommend(Query(context=passage)))


def test_without_the_dense_signal_closeness_is_unknown_and_nothing_is_flagged():
    rec = Recommendation("x", "A title", [], 2020, "", 0.7, {"lexical": 1.0}, "Shares the terms “a”.")
    assert confidence.closeness(rec) is None and confidence.strength(rec) is None
    assert not confidence.is_weak_match([rec]) and not confidence.is_weak_match([])


def test_the_page_says_so_for_nonsense_and_not_for_a_real_query(app_env):
    at = ask(open_app(), "", NONSENSE)
    assert len(at.session_state["results"]["recs"]) == 10
    assert any(NOTICE in w.value for w in at.warning)
    assert any("nearest papers (weak match)" in h.value for h in at.subheader)
    shown = " ".join(m.value for m in at.markdown)
    assert "matches your text" not in shown and "Related by topic" not in shown
    assert shown.count("Weak match\\: not close in meaning to your text") == 10  # escaped by common.plain
    bars = at.get("progress")  # closeness on an absolute scale: no full bar for the "best" of nonsense
    assert len(bars) == 10 and all(bar.proto.value < 100 * confidence.WEAK_MATCH_COSINE["english"] for bar in bars)
    assert all(bar.proto.text.startswith("Weak match · closeness 0.") for bar in bars)

    at = ask(at, REAL_TITLE, REAL_TEXT)
    assert not any(NOTICE in w.value for w in at.warning)
    assert any(h.value == "10 recommendations" for h in at.subheader)
    assert at.get("progress")[0].proto.value >= 100 * confidence.STRONG_MATCH_COSINE["english"]
