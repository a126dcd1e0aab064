"""Cross-language queries end to end: a real small index with the multilingual field (conftest's `small_index`)."""
from __future__ import annotations

import pytest

from recommender.config import DEFAULT
from recommender.paper import Paper
from recommender.pipeline.prepare import NO_MULTILINGUAL_FIELD
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store.build import build_index

# Passages written for the small corpus (tests/small_corpus.py), with the paper each one cites.
CHINESE = [
    ("残差连接使非常深的卷积网络能够在图像分类任务上顺利训练 [CIT]。", "vision0"),
    ("把初次检索中排名靠前的文档里的词加入查询，可以提高搜索引擎的召回率 [CIT]。", "ir1"),
    ("利用动态规划递推可以计算 DNA 和蛋白质序列的局部比对 [CIT]。", "bio2"),
]
GERMAN = [
    ("Restverbindungen erlauben es, sehr tiefe Faltungsnetze für die Bildklassifikation zu trainieren [CIT].",
     "vision0"),
    ("Lokale Alignments von DNA- und Proteinsequenzen werden mit einer Rekursion der dynamischen "
     "Programmierung berechnet [CIT].", "bio2"),
]


def test_index_has_the_multilingual_field(small_recommender):
    index = small_recommender.index
    assert index.manifest["multilingual"] is True and small_recommender.encode(["x"], "multilingual").shape == (1, 512)
    assert index.multilingual.shape == (len(index), 512)
    assert len(index.multilingual_clusters.members) == len(index)


@pytest.mark.parametrize("text, expected", CHINESE + GERMAN)
def test_foreign_passage_finds_the_english_paper(small_recommender, text, expected):
    results = small_recommender.recommend(Query(context=text, k=5))
    assert expected in [r.paper_id for r in results[:3]], [r.title for r in results]
    ranking = small_recommender.rank(Query(context=text, k=5))
    assert ranking.route.multilingual and not ranking.route.language.is_english


def test_chinese_query_end_to_end(small_recommender):
    """The Chinese passage on residual networks returns the English paper first, with explanations."""
    query = Query(context=CHINESE[0][0], k=5)
    route = small_recommender.route(query)
    assert (route.language.code, route.field, route.warning) == ("zh", "multilingual", "")
    results = small_recommender.recommend(query)
    assert results[0].paper_id == "vision0"
    assert results[0].title == "Deep residual networks for image classification"
    assert all(r.explanation for r in results)
    assert {"lexical", "dense", "graph"} <= set(results[0].components)


def test_latin_terms_still_match_lexically(small_recommender):
    """BM25 sees "BM25" inside a Chinese passage once the scripts are separated."""
    ranking = small_recommender.rank(Query(context="基于BM25的排序函数 [CIT]", k=3))
    top = small_recommender.index.ids[ranking.positions[0]]
    assert top == "ir0" and ranking.components["lexical"][0] > 0
    results = small_recommender.recommend(Query(context="基于BM25的排序函数 [CIT]", k=3))
    assert "bm25" in results[0].explanation.lower()


def test_off_keeps_the_english_pipeline(small_recommender):
    query = Query(context=CHINESE[0][0], k=5)
    off = small_recommender.rank(query, DEFAULT.with_(multilingual="off"))
    assert off.route.field == "dense" and off.route.language.code == "zh"
    english = small_recommender.rank(Query(context="Residual connections let very deep networks train [CIT].", k=5))
    assert english.route.field == "dense"
    assert small_recommender.index.ids[english.positions[0]] == "vision0"


def test_filters_and_graph_apply_to_multilingual_queries(small_recommender):
    query = Query(context=CHINESE[0][0], k=5, exclude={"vision0"}, year_min=2011)
    ranking = small_recommender.rank(query)
    ids = [small_recommender.index.ids[p] for p in ranking.positions]
    assert "vision0" not in ids and ranking.route.multilingual
    assert all(small_recommender.index.years[p] >= 2011 for p in ranking.positions)
    assert "graph" in ranking.components


def test_index_without_multilingual_field_still_answers(tmp_path, corpus_records):
    root = tmp_path / "english-only"
    build_index([Paper.from_dict(r) for r in corpus_records[:12]], root, multilingual=False, progress_bar=False)
    recommender = Recommender.load(root)
    query = Query(context="把初次检索中排名靠前的文档里的词加入查询 [CIT]。", k=3)
    route = recommender.route(query)
    assert (route.field, route.warning, route.language.code) == ("dense", NO_MULTILINGUAL_FIELD, "zh")
    results = recommender.recommend(query)
    assert len(results) == 3
    assert recommender.rank(query).route.warning == NO_MULTILINGUAL_FIELD


def test_multilingual_field_build_reports_progress_resumes_and_survives_additions(tmp_path, corpus_records):
    """index --multilingual: progress for both encoders, cached vectors reused, the field kept by additions."""
    from recommender.store.index import Index
    from recommender.store.build import add_to_index

    root, papers = tmp_path / "ml", [Paper.from_dict(r) for r in corpus_records]
    stages = []
    build_index(papers[:8], root, multilingual=True, progress_bar=False,
                on_progress=lambda stage, done, total: stages.append((stage, done, total)))
    assert ("embedding (use-multilingual-v3)", 8, 8) in stages
    assert ("nearest-neighbour index (multilingual)", 0, 1) in stages
    stages.clear()  # a rebuild (or a resumed build) embeds only what the cache lacks
    build_index(papers[:10], root, multilingual=True, progress_bar=False,
                on_progress=lambda stage, done, total: stages.append((stage, done, total)))
    assert ("embedding (use-multilingual-v3)", 2, 2) in stages
    add_to_index(papers[10:12], root, progress_bar=False)
    index = Index.load(root)
    assert index.manifest["multilingual"] and index.multilingual.shape == (12, 512)
    index.close()
