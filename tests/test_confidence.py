"""Honest confidence: a query with no close paper is flagged as a weak match, in the engine and on the page."""
from __future__ import annotations

import numpy as np

from support.app_helpers import ask, open_app
from bench import match_labels
from recommender.pipeline import confidence
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.training.encoder import train_head

NONSENSE = "zzzzqqq xxyyzz"
REAL_TITLE = "Recommending citations for a paper draft"  # what "Neural citation recommendation from paper abstracts"
REAL_TEXT = "Neural embeddings of abstracts find the papers a draft should cite."  # says in other words
NOTICE = "Nothing in this corpus is close to your text"


def assess(engine: Recommender, query: Query) -> confidence.MatchReport:
    return confidence.assess(engine, query, engine.recommend(query))


def test_nonsense_is_a_weak_match_and_a_real_query_is_not(small_recommender):
    query = Query(abstract=NONSENSE)
    nonsense = assess(small_recommender, query)
    assert len(nonsense.matches) == 10  # the engine still answers ...
    assert nonsense.weak and {m.strength for m in nonsense.matches} == {"weak"}  # ... but nothing is close
    assert nonsense.scale == "english" and nonsense.best < confidence.WEAK_MATCH_COSINE["english"]
    # on the English pipeline of an untrained index, closeness is the "dense" score component
    recs = small_recommender.recommend(query)
    assert np.allclose([m.closeness for m in nonsense.matches], [r.components["dense"] for r in recs], atol=1e-5)

    real = assess(small_recommender, Query(title=REAL_TITLE, abstract=REAL_TEXT))
    assert not real.weak and real.matches[0].strength == "strong"
    assert real.best > nonsense.best + 0.3


def test_a_real_query_in_another_language_is_judged_on_the_multilingual_scale(small_recommender):
    german = assess(small_recommender, Query(abstract="Wir empfehlen Literaturangaben für den Entwurf eines Artikels."))
    assert german.scale == "multilingual" and not german.weak
    off_topic = assess(small_recommender, Query(abstract="Heize den Ofen vor und schlage die Eier mit Zucker."))
    assert off_topic.scale == "multilingual" and off_topic.weak


def test_a_passage_copied_from_a_pdf_is_not_mistaken_for_nonsense(small_recommender):
    passage = ("Dense re-\ntrieval embeds questions and pas-\nsages with two trans-\nformer encoders and searches "
               "them by in-\nner product [CIT].")
    assert not assess(small_recommender, Query(context=passage)).weak


def test_a_citation_tuned_encoder_does_not_move_the_scale(small_recommender):
    """The tuned head ranks, but closeness stays the base encoder's cosine, where the thresholds were set."""
    index = small_recommender.index
    head = train_head(np.asarray(index.dense), index.graph, list(range(len(index))), epochs=30, progress=False)
    tuned = Recommender(index, head=head, encoder=small_recommender.encoder)
    query = Query(abstract=NONSENSE)
    assert tuned.route(query).field == "tuned"
    recs = tuned.recommend(query)
    report = confidence.assess(tuned, query, recs)
    base = small_recommender.query_vector(query)
    expected = [float(index.dense[index.position[r.paper_id]] @ base) for r in recs]
    assert np.allclose([m.closeness for m in report.matches], expected, atol=1e-5)
    assert not np.allclose([r.components["dense"] for r in recs], expected, atol=0.01)  # the tuned cosines differ
    assert report.weak
    assert not assess(tuned, Query(title=REAL_TITLE, abstract=REAL_TEXT)).weak


def test_only_the_paper_the_query_describes_is_close_and_the_others_on_its_topic_are_partial(small_recommender):
    """Close means likely to be cited (bench/match_labels.py): a paper merely on the query's topic is partial, and
    its explanation does not call it close in meaning."""
    query = Query(title=REAL_TITLE, abstract=REAL_TEXT, k=5)
    result = small_recommender.recommend(query)
    report = confidence.assess(small_recommender, query, result)
    assert result[0].paper_id == "cite0" and report.matches[0].strength == "strong"
    assert result[0].explanation.startswith("Close in meaning")
    others = list(zip(result, report.matches))[1:]
    assert all(rec.paper_id.startswith("cite") for rec, _ in others[:3])  # on the query's topic ...
    assert {m.strength for _, m in others} == {"fair"}  # ... but not close
    assert all(0.45 < m.closeness < confidence.STRONG_MATCH_COSINE["english"] for _, m in others)
    assert not any("Close in meaning" in rec.explanation for rec, _ in others)


def calibration_rows(venues: dict[str, int]) -> list[dict]:
    """Each citing paper's ten results: two at 0.82 (one cited), four at 0.70 (one cited), four at 0.60."""
    rows = []
    for venue, papers in venues.items():
        for p in range(papers):
            results = [(0.82, True), (0.82, False), (0.70, True)] + [(0.70, False)] * 3 + [(0.60, False)] * 4
            for closeness, cited in results:
                rows.append({"citing": f"{venue}/{p}", "closeness": closeness, "relevant": cited})
    return rows


def test_the_label_calibration_takes_the_lowest_cut_where_close_is_twice_as_precise_as_partial():
    rows = calibration_rows({"sigir": 10, "ictir": 5, "wsdm": 5, "chiir": 5})
    side = match_labels.halves([r["citing"] for r in rows], {r["citing"]: r["citing"].split("/")[0] for r in rows})
    assert sorted(side.values()).count("tune") == 13 and sum(side[f"sigir/{p}"] == "tune" for p in range(10)) == 5
    measured = match_labels.Half(rows).precision(match_labels.CUTS, 0.34, np.random.default_rng(0))
    # up to 0.60 every result is close (no partial to compare); from 0.61 the 0.60s are partial and never cited
    assert match_labels.chosen_cut(measured) == 0.61
    labels = match_labels.at(measured, 0.75)
    assert labels["labels"]["close"] == {"results": 50, "precision_at_10": 0.5, "interval_95": [0.5, 0.5]}
    assert labels["labels"]["partial"]["precision_at_10"] == 0.125 and labels["ratio_close_partial"] == 4.0
    assert labels["labels"]["weak"]["results"] == 0


def test_no_results_is_not_a_weak_match():
    assert not confidence.MatchReport("english", []).weak and confidence.MatchReport("english", []).best is None


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
