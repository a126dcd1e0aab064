"""A paragraph's citing sentences (`passage.focus_sentences`): which sentences retrieval scores papers by, and
that a paper matching a short citing sentence inside a long paragraph about something else is found."""
from recommender import Query
from recommender.config import DEFAULT, METHODS
from recommender.pipeline.passage import cited_phrases, focus_sentences

# wrapped as copied from a PDF; the one citation is about sequence alignment, the rest of the paragraph about images
PARAGRAPH = ("Deep networks classify images, detect objects and label every pixel of a photograph. Image\n"
             "classifiers need many labelled photographs, and small image datasets are augmented with crops.\n"
             "Our pipeline aligns the genomic sequences by dynamic programming [CIT]. Convolutional networks "
             "then read the images.")


def test_focus_sentences_are_the_citing_sentences_of_a_paragraph():
    assert focus_sentences(Query(context=PARAGRAPH)) == ["Our pipeline aligns the genomic sequences by dynamic "
                                                         "programming ."]
    two = Query(context="BM25 weights terms [CIT]. Dense encoders embed passages [cit] and queries.")
    assert focus_sentences(two) == ["BM25 weights terms .", "Dense encoders embed passages and queries."]


def test_no_focus_for_one_sentence_a_paragraph_without_placeholders_or_a_draft():
    assert focus_sentences(Query(context="Sequences are aligned by dynamic programming [CIT].")) == []
    assert focus_sentences(Query(context="Sequences are aligned. Networks classify images.")) == []
    assert focus_sentences(Query(title="Sequence alignment", abstract="We align sequences [CIT]. Fast.")) == []


def test_the_citing_sentence_lifts_the_paper_it_describes(small_recommender):
    query = Query(context=PARAGRAPH, k=5)
    whole = small_recommender.rank(query, METHODS["hybrid"])
    focused = small_recommender.rank(query, DEFAULT.with_(diversity=0.0))
    bio2 = small_recommender.index.position["bio2"]
    assert "sentence_lexical" not in whole.components and bio2 not in whole.positions[:1]
    assert focused.positions[0] == bio2
    first = {name: float(values[0]) for name, values in focused.components.items()}
    assert first["sentence_lexical"] > 0 and first["sentence_dense"] > first["dense"]


def test_sentence_signals_follow_their_retrievers(small_recommender):
    query = Query(context=PARAGRAPH)
    pool = small_recommender.candidate_pool(query, DEFAULT.with_(dense=False))
    assert "sentence_lexical" in pool.components and "sentence_dense" not in pool.components
    pool = small_recommender.candidate_pool(query, DEFAULT.with_(citing_sentences=False))
    assert not {"sentence_lexical", "sentence_dense"} & set(pool.components)


def test_explanations_name_the_citing_sentence_a_paper_fits(small_recommender):
    query = Query(context="Term weighting with BM25 is the usual baseline [CIT]. Image classifiers are trained "
                          "with deep residual networks [CIT].", k=6)
    result = small_recommender.recommend(query)
    why = {r.paper_id: r.explanation for r in result.recommendations}
    assert why["ir0"].startswith("For the citation in “Term weighting with BM25 is the usual baseline.”: ")
    assert why["vision0"].startswith("For the citation in “Image classifiers are trained with deep residual")
    single = small_recommender.recommend(Query(context="Term weighting with BM25 is the usual baseline [CIT]."))
    assert not any(r.explanation.startswith("For the citation") for r in single.recommendations)


def test_placeholders_without_words_are_no_citing_sentences():
    assert focus_sentences(Query(context="[CIT]. [CIT].")) == []
    assert focus_sentences(Query(context="Graph methods [CIT]. [CIT].")) == []
    assert focus_sentences(Query(context="BM25 [CIT]! Dense retrieval [CIT]?")) == ["BM25 !", "Dense retrieval ?"]


def test_cited_phrases_are_the_words_just_before_each_placeholder():
    wrapped = Query(context="We evaluate on the Qulac\ndataset [CIT], re-rank with LambdaMART [cit] and follow the "
                            "protocol of [CIT] [CIT].")
    assert cited_phrases(wrapped) == ["on the Qulac dataset", "re-rank with LambdaMART", "follow the protocol of"]
    assert cited_phrases(Query(context="[CIT] proposed BM25.")) == []
    assert cited_phrases(Query(context="BM25 weights terms.")) == []


def test_a_chinese_paragraph_is_scored_by_its_citing_sentence_too(small_recommender):
    """On the multilingual field each citing sentence is encoded by the multilingual encoder and searched by BM25
    through its English gloss, as an English paragraph's are."""
    paragraph = ("深度网络可以对图像进行分类、检测物体并为照片的每个像素打标签。图像分类器需要大量带标注的照片，"
                 "小型图像数据集通常通过裁剪进行扩充。我们的流程使用动态规划对基因组序列进行比对 [CIT]。"
                 "随后由卷积网络读取图像。")
    query, bio2 = Query(context=paragraph, k=5), small_recommender.index.position["bio2"]
    whole = small_recommender.rank(query, DEFAULT.with_(diversity=0.0, citing_sentences=False))
    assert bio2 not in whole.positions[:5] and not {"sentence_lexical", "sentence_dense"} & set(whole.components)
    focused = small_recommender.rank(query, DEFAULT.with_(diversity=0.0))
    assert focused.route.multilingual and focused.route.language.code == "zh"
    assert bio2 in focused.positions[:5]
    at = list(focused.positions).index(bio2)
    sentence = {name: float(values[at]) for name, values in focused.components.items()}
    assert sentence["sentence_lexical"] == 1.0 and sentence["sentence_dense"] > sentence["dense"]
