"""Turning typed text into a query: text copied from a PDF unwrapped, mode detection and truncation with a notice."""
import pytest

from recommender.pipeline.user_input import MAX_TEXT_CHARS, MAX_TITLE_CHARS, detect_mode, prepare, unwrap


def test_mode_follows_the_citation_marker():
    assert detect_mode("Prior work [CIT] showed this.") == "passage"
    assert detect_mode("prior work [cit] showed this.") == "passage"
    assert detect_mode("An abstract without markers.") == "draft"


def test_auto_mode_builds_a_local_or_a_global_query():
    local = prepare("My draft", "Graph expansion [CIT] helps.", k=5)
    assert local.mode == "passage" and local.query.is_local and local.query.title == "My draft"
    assert local.query.k == 5 and local.notices == []
    draft = prepare("My draft", "We study citation recommendation.")
    assert draft.mode == "draft" and not draft.query.is_local and draft.query.abstract.startswith("We study")


def test_a_chosen_mode_wins_over_detection():
    forced = prepare("", "A passage without a marker.", "passage")
    assert forced.query.is_local and "No [CIT] marker" in forced.notices[0]
    assert not prepare("", "Has [CIT] but is an abstract.", "draft").query.is_local
    with pytest.raises(ValueError):
        prepare("", "text", "other")


def test_long_input_is_truncated_with_a_notice():
    prepared = prepare("t " * MAX_TITLE_CHARS, "word " * MAX_TEXT_CHARS)
    assert len(prepared.query.title) <= MAX_TITLE_CHARS and len(prepared.query.abstract) <= MAX_TEXT_CHARS
    assert len(prepared.notices) == 2 and "only the first 5,000" in prepared.notices[1]


def test_empty_input_gives_an_empty_query():
    assert prepare("  ", "\n").query.main_text == ""


def test_text_copied_from_a_pdf_is_unwrapped():
    copied = ("Earlier work used BM25 and neural sentence em-\nbeddings [CIT]. A BERT-\nbased reranker followed\n"
              "[CIT].\n\nA second para-\ngraph.")
    prepared = prepare("Citation recommen-\ndation", copied)
    assert prepared.query.title == "Citation recommendation"
    assert prepared.query.context == ("Earlier work used BM25 and neural sentence embeddings [CIT]. A BERT-based "
                                      "reranker followed [CIT].\n\nA second paragraph.")
    assert unwrap("协同过滤（CF）方法\n很好。") == "协同过滤（CF）方法 很好。"
