import numpy as np
from rank_bm25 import BM25Okapi

from recommender.config import BM25_B, BM25_K1
from recommender.lexical import LexicalIndex, analyze

DOCS = [
    "Citation recommendation with neural networks and citation graphs",
    "BM25 ranking of documents for ad hoc retrieval",
    "Graph neural networks learn node embeddings on citation graphs",
    "Protein folding predicted by deep learning",
    "Ranking documents by term frequency and inverse document frequency",
    "The cat sat on the mat",
]


def test_analyzer_stems_and_drops_stop_words_and_possessives():
    assert analyze("The recommender's Systems are ranking citations") == ["recommend", "system", "rank", "citat"]


class LuceneBM25(BM25Okapi):
    """rank-bm25's Okapi scorer with Lucene's idf, log(1 + (N - df + 0.5) / (df + 0.5)), as bm25s uses.

    Lucene (and bm25s) also drop the constant (k1 + 1) factor of the classic formula, so scores
    differ from rank-bm25's by exactly that factor.
    """

    def _calc_idf(self, nd):
        self.idf = {w: float(np.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5))) for w, df in nd.items()}


def test_bm25s_scores_equal_the_rank_bm25_reference():
    ours = LexicalIndex.build(DOCS)
    reference = LuceneBM25([analyze(d) for d in DOCS], k1=BM25_K1, b=BM25_B)
    for query in ["citation graphs", "ranking documents", "neural networks protein"]:
        assert np.allclose(ours.scores(query) * (BM25_K1 + 1), reference.get_scores(analyze(query)), rtol=1e-5, atol=1e-6)


def test_unknown_terms_give_zero_scores_and_save_load_round_trip(tmp_path):
    index = LexicalIndex.build(DOCS)
    assert not index.scores("zzzz qqqq").any()
    index.save(tmp_path / "bm25")
    again = LexicalIndex.load(tmp_path / "bm25")
    assert np.allclose(again.scores("citation graphs"), index.scores("citation graphs"))
    assert again.term_weights("citation zzzz").keys() == {"citat"}
