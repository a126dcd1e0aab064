"""Language detection on short, mixed-script queries, and the routing decision built on it."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from recommender.pipeline.language import (LanguageInfo, corpus_languages, cross_language_terms, detect_language, script_words,
                                  separate_scripts, stopwords, writes_in_latin)
from recommender.config import DEFAULT
from recommender.pipeline.prepare import NO_MULTILINGUAL_FIELD, QueryPreparer
from recommender.query import Query


@pytest.mark.parametrize("text, code", [
    # Chinese with Latin method names, numbers and the placeholder
    ("基于BERT的引文推荐 [CIT]", "zh"),
    ("用 BM25 [CIT]", "zh"),
    ("我们使用 LSTM 和 CNN [CIT]", "zh"),
    ("Transformer 模型", "zh"),
    ("本文提出了一种基于图神经网络的方法 [CIT]。", "zh"),
    # German with English technical terms
    ("Wir nutzen BM25 [CIT]", "de"),
    ("Wir verwenden LDA", "de"),
    ("über BERT", "de"),
    ("Collaborative Filtering mit Matrixfaktorisierung", "de"),
    ("Siamese-Netzwerke lernen eine Ähnlichkeitsfunktion [CIT]", "de"),
    # other scripts and languages the multilingual encoder knows
    ("BERTを用いた引用推薦", "ja"),
    ("인용 추천 BERT [CIT]", "ko"),
    ("Методы рекомендации цитат [CIT]", "ru"),
    ("توصية الاقتباس", "ar"),
    ("Les auteurs proposent une méthode [CIT]", "fr"),
    ("La recomendación de citas con BERT [CIT]", "es"),
    # English, including one foreign word inside an English sentence
    ("We use BM25 [CIT]", "en"),
    ("graph neural network GNN [CIT]", "en"),
    ("Matrix factorization techniques for recommender systems", "en"),
    ("We use the 知网 corpus [CIT]", "en"),
])
def test_short_mixed_script_queries(text, code):
    assert detect_language(text).code == code


@pytest.mark.parametrize("text", ["BM25", "BERT", "PageRank", "SciBERT", "Wikipedia", "LDA topic model",
                                  "siamese networks", "Information Retrieval"])
def test_short_or_ambiguous_latin_text_is_english(text):
    info = detect_language(text)
    assert info.code == "en" and info.script == "Latin"


@pytest.mark.parametrize("text", ["", "   ", "[CIT]", "2019 [CIT]", "https://example.org/paper.pdf"])
def test_text_without_letters_is_english_by_default(text):
    info = detect_language(text)
    assert (info.code, info.method, info.confidence) == ("en", "default", 0.0)


def test_result_type():
    info = detect_language("基于BERT的引文推荐 [CIT]")
    assert isinstance(info, LanguageInfo)
    assert (info.code, info.name, info.script, info.method) == ("zh", "Chinese", "Han", "script")
    assert info.confidence == 1.0 and not info.is_english and info.multilingual_encoder_supports
    german = detect_language("Die Autoren schlagen ein Verfahren zur Empfehlung von Zitaten vor [CIT].")
    assert (german.code, german.name, german.method) == ("de", "German", "model") and german.confidence > 0.9
    assert set(german.to_dict()) >= {"code", "name", "confidence", "script", "method", "is_english",
                                     "multilingual_encoder_supports"}
    assert not detect_language("Rekommendation av citeringar i vetenskapliga artiklar").multilingual_encoder_supports


def test_scripts_are_counted_and_separated():
    words = script_words("基于BERT的引文推荐")
    assert words == {"Han": 3.5, "Latin": 1.0}  # 7 Han characters count as 3.5 words
    assert separate_scripts("基于BERT的引文推荐，使用2019年的数据") == "基于 BERT 的引文推荐，使用 2019 年的数据"
    assert separate_scripts("BERTを用いた") == "BERT を用いた"
    for english in ("We use BM25 (Robertson, 2009) [CIT].", "k-means clustering", "Word2Vec-Modelle"):
        assert separate_scripts(english) == english


# -- routing: which pipeline a query gets (no models needed) ----------------------------------------
def _reader(multilingual_field: bool) -> QueryPreparer:
    """Routing alone: an index with or without the multilingual field, no glossary, no encoder head, no models."""
    return QueryPreparer(SimpleNamespace(multilingual=object() if multilingual_field else None, glossary=None),
                        english=None)


@pytest.mark.parametrize("text, field", [
    ("基于BERT的引文推荐 [CIT]", "multilingual"),
    ("Wir nutzen BM25 [CIT]", "multilingual"),
    ("We use BM25 [CIT]", "dense"),
    ("BM25 [CIT]", "dense"),
    ("We use the 知网 corpus [CIT]", "dense"),
])
def test_auto_routes_by_language(text, field):
    route = _reader(True).route(Query(context=text))
    assert route.field == field and route.warning == ""
    assert route.multilingual == (field == "multilingual")


def test_off_and_on_force_a_pipeline():
    reader = _reader(True)
    chinese, english = Query(context="基于BERT的引文推荐 [CIT]"), Query(context="We use BM25 [CIT]")
    assert reader.route(chinese, DEFAULT.with_(multilingual="off")).field == "dense"
    assert reader.route(english, DEFAULT.with_(multilingual="on")).field == "multilingual"
    with pytest.raises(ValueError):
        reader.route(english, DEFAULT.with_(multilingual="sometimes"))


def test_index_without_multilingual_field_warns():
    reader = _reader(False)
    route = reader.route(Query(context="基于BERT的引文推荐 [CIT]"))
    assert route.field == "dense" and route.warning == NO_MULTILINGUAL_FIELD
    assert route.language.code == "zh"
    assert reader.route(Query(context="We use BM25 [CIT]")).warning == ""
    assert route.to_dict()["language"]["name"] == "Chinese"


def test_the_language_is_that_of_the_passage_in_local_mode():
    reader = _reader(True)
    query = Query(title="Citation recommendation", abstract="An English abstract about citations.",
                  context="基于BERT的引文推荐 [CIT]")
    assert reader.route(query).language.code == "zh"
    assert reader.route(Query(title="Zitationsempfehlung mit neuronalen Netzen")).language.code == "de"


def test_cross_language_terms_keep_what_an_english_index_can_match():
    german = "Es wurde gezeigt, dass die Methode mit BM25 und dem IBM-Modell arbeitet [CIT]."
    kept = cross_language_terms(german, "de").split()
    assert {"BM25", "IBM-Modell", "Methode"} <= set(kept)
    assert not {"Es", "dass", "die", "mit", "und", "dem"} & set(kept)
    assert cross_language_terms("基于BERT的引文推荐", "zh") == "基于 BERT 的引文推荐"


def test_stop_words_of_academic_prose():
    chinese = stopwords("zh")
    assert {"我们", "进行", "然而", "通过"} <= chinese
    assert not {"相似", "任务", "检索", "推荐"} & chinese  # topic words that a general list would drop
    german = stopwords("de")
    assert {"jedoch", "wurden", "insbesondere", "die", "und"} <= german and "zitation" not in german
    assert stopwords("en") == frozenset() and stopwords("xx") == frozenset()


def test_languages_written_in_latin():
    assert all(writes_in_latin(code) for code in ("en", "de", "fr", "tr", "vi"))
    assert not any(writes_in_latin(code) for code in ("zh", "ja", "ko", "th", "ru", "ar", "el", "hi"))


def test_corpus_languages():
    assert corpus_languages([]) == {}
    assert corpus_languages(["Deep residual learning for image recognition", "Attention is all you need"]) == {"en": 1.0}
    shares = corpus_languages(["基于深度学习的引文推荐", "Deep residual learning for image recognition"])
    assert shares == {"zh": 0.5, "en": 0.5}
