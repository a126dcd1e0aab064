"""Word-by-word English glosses of non-English queries (gloss.py) with the real multilingual encoder."""
from __future__ import annotations

import numpy as np
import pytest

from recommender.config import DEFAULT
from recommender.paper import Paper
from recommender.pipeline.dictionary import readings
from recommender.pipeline.language import cross_language_terms
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store.gloss import Glossary, query_words, vocabulary
from recommender.store.index import Index
from recommender.store.build import build_index

GERMAN_SEARCH = "Dokumente und Suchmaschinen [CIT]"
CHINESE_ALIGNMENT = "利用动态规划计算蛋白质序列的局部比对 [CIT]。"


def test_vocabulary_ranks_words_by_the_texts_they_occur_in():
    texts = ["Graph graph GRAPH ranking of papers", "Ranking papers by graph walks", "Papers on ranking"]
    assert vocabulary(texts) == ["papers", "ranking", "graph", "walks"]  # "of", "on", "by": under three letters
    assert vocabulary(texts, size=2) == ["papers", "ranking"]
    assert vocabulary([]) == []


def test_query_words_drop_stop_words_and_cut_chinese():
    assert query_words("Die Methode nutzt BM25 und das IBM-Modell [CIT].", "de") == ["Methode", "nutzt", "BM25",
                                                                                   "IBM-Modell"]
    words = query_words("基于BERT的引文推荐 [CIT]", "zh")
    assert "BERT" in words and "引文" in words and "推荐" in words
    assert all(len(w) > 1 for w in words)  # single characters (的, 于) are function words
    # Japanese: runs of kanji and of katakana; hiragana (particles, endings) and single characters go
    assert query_words("文脈を考慮したニューラルモデル、BERTを用いた2019年の研究", "ja") == [
        "文脈", "考慮", "ニューラルモデル", "BERT", "2019", "研究"]


def test_glossary_translates_word_by_word():
    words = ["documents", "search", "protein", "network"]
    vectors = np.eye(4, dtype=np.float32)
    encode = {"Dokumente": [1, 0, 0, 0], "Suche": [0, 0.9, 0.1, 0], "Unsinn": [0.3, 0.3, 0.3, 0.3]}
    glossary = Glossary(words, vectors)
    gloss = glossary.translate("Dokumente zur Suche mit BM25 im network, Unsinn [CIT]", "de",
                               lambda ws: np.array([encode[w] for w in ws], dtype=np.float32))
    # known words and words with digits stay, stop words go, weak neighbours (cosine < 0.5) are dropped
    assert gloss == "documents search BM25 network"
    with pytest.raises(ValueError):
        Glossary(words, vectors[:3])


def test_terms_and_acronyms_stay_and_function_words_go():
    words = ["filtering", "collaborative", "reranking", "citation", "citations", "latent", "search"]
    glossary = Glossary(words, np.eye(len(words), dtype=np.float32))
    vectors = {"协同": [0, 1, 0, 0, 0, 0, 0], "过滤": [1, 0, 0, 0, 0, 0, 0], "Reranking": [0, 0, 1, 0, 0, 0, 0],
               "Suche": [0, 0, 0, 0, 0, 0, 1]}
    asked = []

    def encode(ws):
        asked.extend(ws)
        return np.array([vectors.get(w, [0.0] * len(words)) for w in ws], dtype=np.float32)  # others: no neighbour

    # Chinese: the Latin-script term and the acronym stay, function words (我们, 进行) are dropped unread
    assert glossary.translate("我们进行协同过滤（CF）并用 SGD-Solver 训练 [CIT]", "zh", encode).split()[:3] == [
        "collaborative", "filtering", "CF"]
    assert "SGD-Solver" in glossary.translate("用 SGD-Solver", "zh", encode).split()
    assert not {"我们", "进行"} & set(asked)
    # German: a hyphenated word is read part by part (a known part stays as written), an acronym stays, Latin
    # cognates are read as the corpus word
    asked.clear()
    gloss = glossary.translate("BERT-Reranking von Zitationen mit latenten CF-Modellen und Suche [CIT]", "de", encode)
    assert gloss.split() == ["BERT", "Reranking", "citation", "citations", "latent", "CF", "search"]
    assert "Zitationen" not in asked and "latenten" not in asked  # cognates need no encoder
    assert glossary.cognates("Suche", "de") == [] and glossary.cognates("Zitationen", "fr") == []


def test_a_german_passage_is_read_with_its_cognates(small_recommender):
    text = "Lokale Alignments werden mit einer Rekurrenz der dynamischen Programmierung berechnet [CIT]."
    ranking = small_recommender.rank(Query(context=text, k=3))
    assert {"recurrence", "dynamic"} <= set(ranking.route.gloss.split())
    assert small_recommender.index.ids[ranking.positions[0]] == "bio2"


def test_index_stores_the_glossary_with_the_multilingual_field(small_recommender, tmp_path, corpus_records):
    glossary = small_recommender.index.glossary
    assert {"documents", "protein", "convolutional"} <= set(glossary.words)
    assert glossary.vectors.shape == (len(glossary.words), 512)
    root = tmp_path / "english-only"
    build_index([Paper.from_dict(r) for r in corpus_records[:6]], root, multilingual=False, progress_bar=False)
    index = Index.load(root)
    assert index.glossary is None and not list(index.version.glob("gloss*"))
    index.close()


def test_glossary_build_reports_progress_and_resumes(tmp_path, corpus_records):
    papers, builds = [Paper.from_dict(r) for r in corpus_records[:6]], []
    for _ in range(2):
        stages = []
        build_index(papers, tmp_path / "ml", multilingual=True, progress_bar=False,
                    on_progress=lambda stage, done, total: stages.append((stage, done, total)))
        builds.append([(done, total) for stage, done, total in stages if stage == "glossary (word vectors)"])
    index = Index.load(tmp_path / "ml")
    words = index.glossary.words
    index.close()
    assert builds[0][-1] == (len(words), len(words))
    assert builds[1] == []  # the rebuild finds every word vector in the cache


@pytest.mark.parametrize("text, language, english, expected", [
    (GERMAN_SEARCH, "de", {"documents", "search"}, "ir1"),
    (CHINESE_ALIGNMENT, "zh", {"protein", "dynamic", "programming"}, "bio2"),
])
def test_a_glossed_query_reaches_bm25_and_the_english_encoder(small_recommender, text, language, english, expected):
    ranking = small_recommender.rank(Query(context=text, k=5))
    route = ranking.route
    assert route.multilingual and route.language.code == language
    assert english <= set(route.gloss.split()) and route.to_dict()["gloss"] == route.gloss
    assert small_recommender.lexical_text(text, route) == route.gloss
    assert {"lexical", "dense", "gloss"} <= set(ranking.components)
    assert ranking.components["gloss"][0] > 0.3 and ranking.components["lexical"][0] > 0
    ids = [small_recommender.index.ids[p] for p in ranking.positions]
    assert ids[0] == expected, ids


def test_explanations_name_the_english_terms_matched(small_recommender):
    results = small_recommender.recommend(Query(context=CHINESE_ALIGNMENT, k=3))
    assert results[0].paper_id == "bio2"
    assert "protein" in results[0].explanation.lower()


def test_english_queries_and_the_english_pipeline_get_no_gloss(small_recommender):
    english = small_recommender.rank(Query(context="Local alignment of protein sequences [CIT]", k=3))
    assert english.route.gloss == "" and "gloss" not in english.components
    off = small_recommender.rank(Query(context=GERMAN_SEARCH, k=3), DEFAULT.with_(multilingual="off"))
    assert off.route.gloss == "" and "gloss" not in off.components
    unweighted = small_recommender.rank(Query(context=GERMAN_SEARCH, k=3), DEFAULT.with_(w_gloss=0.0))
    assert "gloss" not in unweighted.components and unweighted.route.gloss


def test_an_index_built_before_glossaries_keeps_the_shared_terms(small_index):
    recommender = Recommender.load(small_index)  # its own: the shared `small_recommender` must keep its glossary
    recommender.index.glossary = None
    query = Query(context="Die Methode nutzt BM25 [CIT]", k=3)
    route = recommender.route(query)
    assert route.multilingual and route.gloss == ""
    assert recommender.lexical_text(query.context, route) == cross_language_terms(query.context, "de")
    assert recommender.rank(query).positions


def test_the_dictionary_reads_chinese_words_and_spells_out_compounds():
    assert readings("引文") == [(("quotation",), ("citation",))]
    citation, figure = readings("引文图")  # not a headword: read as 引文 + 图
    assert ("citation",) in citation and ("diagram",) in figure
    assert ("collaborative",) in readings("协同过滤")[0]
    assert readings("BERT") == [] and readings("") == []
    # senses that explain rather than translate (classifiers, "(possessive particle)") give no words
    assert all(sense and len(sense) <= 3 for part in readings("论文") for sense in part)


def test_a_chinese_word_is_read_by_its_dictionary_senses_closest_to_it():
    words = ["paraphrase", "citation", "quotation", "recommendation", "graph"]
    glossary = Glossary(words, np.eye(len(words), dtype=np.float32))
    vectors = {"引文": [0.8, 0.2, 0.1, 0, 0], "推荐": [0, 0, 0, 0.9, 0]}  # the encoder puts 引文 near "paraphrase"

    def encode(ws):
        return np.array([vectors.get(w, [0.0] * len(words)) for w in ws], dtype=np.float32)

    gloss = glossary.translate("基于引文的推荐 [CIT]", "zh", encode).split()
    assert gloss[:2] == ["citation", "quotation"] and "paraphrase" not in gloss  # closest sense first
    assert "recommendation" in gloss
    assert glossary.translate("Suche", "de", encode) == ""  # the dictionary is Chinese only; no neighbour here


def test_german_compounds_are_cut_where_their_parts_read():
    words = ["citation", "citations", "graph", "system", "network", "lung", "date", "bank", "training"]
    glossary = Glossary(words, np.eye(len(words), dtype=np.float32))
    assert glossary.pieces("Zitationsgraph", "de") == ["zitation", "graph"]  # linking s dropped, both parts read
    assert glossary.pieces("Zitationsnetzwerk", "de") == ["zitation", "netzwerk"]  # the first part reads, before s
    assert glossary.pieces("Zitationsgraph-basierte", "de") == ["zitation", "graph", "basierte"]
    assert glossary.pieces("Empfehlungssystem", "de") == ["empfehlung", "system"]
    for whole in ("Empfehlungen", "Datenbank", "Zitationen", "Graph"):  # "Empfeh|lungen", "Date|nbank": no
        assert glossary.pieces(whole, "de") == [whole]
    assert glossary.pieces("Zitationsgraph", "zh") == ["Zitationsgraph"]
    encode = lambda ws: np.zeros((len(ws), len(words)), dtype=np.float32)  # noqa: E731  (no neighbours)
    assert glossary.translate("Zitationsgraph [CIT]", "de", encode).split() == ["citation", "citations", "graph"]


@pytest.mark.parametrize("text, language, key_terms", [
    ("基于引文图的论文推荐方法", "zh", {"citation", "recommendation"}),
    ("Zitationsgraph-basierte Empfehlung", "de", {"citation", "graph"}),
])
def test_short_queries_keep_their_key_terms(small_recommender, text, language, key_terms):
    ranking = small_recommender.rank(Query(context=text, k=3))
    assert ranking.route.language.code == language and key_terms <= set(ranking.route.gloss.split())
    titles = [paper.title for paper in small_recommender.index.papers(ranking.positions)]
    assert any("citation" in title.lower() for title in titles), titles


def test_words_encoded_once_are_read_from_memory():
    """A paragraph's citing sentences repeat its words: their glosses come back without encoding them again."""
    words = ["citation", "graph", "network"]
    glossary = Glossary(words, np.eye(len(words), dtype=np.float32))
    asked = []

    def encode(batch):
        asked.append(list(batch))
        return np.tile(np.eye(len(words), dtype=np.float32)[1], (len(batch), 1))  # every word reads "graph"

    whole = glossary.translate("Netzwerkmodelle und Kantenlisten [CIT].", "de", encode)
    assert asked == [["Kantenlisten", "Netzwerkmodelle"]] and whole.split() == ["graph", "graph"]
    assert glossary.translate("Kantenlisten [CIT].", "de", encode) == "graph" and len(asked) == 1
    assert glossary.translate("Kantenlisten [CIT].", "nl", encode) == "graph" and len(asked) == 2  # per language
