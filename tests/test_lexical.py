import os
import re
from pathlib import Path

import bm25s
import numpy as np
import pytest
import Stemmer
from rank_bm25 import BM25Okapi

from recommender.config import BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS
from recommender.store.build import build_index
from recommender.store.lexical import SCRATCH, LexicalIndex, LexicalWriter, TermMemo, analyze
from support.corpora import synthetic_papers

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


def reference_terms(text: str) -> list[str]:
    """The analyzer written out plainly: possessive cut, stop words dropped, every word stemmed."""
    stemmer = Stemmer.Stemmer("porter")
    words = [w[:-2] if w.endswith("'s") else w for w in re.findall(r"\w+(?:'\w+)?", text.lower())]
    return [s for s in stemmer.stemWords([w for w in words if w not in BM25_STOPWORDS]) if s]


AWKWARD = [
    "The recommender's Systems are ranking citations; the systems' rankings RANK the rankers.",
    "",  # no words at all
    "the of and a an to",  # stop words only
    "graph graph graph Graph GRAPH graphs",  # one term many times
    "Übersetzung naïve café co-operation e-mail 3D 2020 x_y it's",
    "Deep learn-\ning for cita- tion rec ommendation",  # copied from a PDF: hyphenated, wrapped
]


def test_analyzer_remembers_words_without_changing_terms(monkeypatch):
    for text in AWKWARD + DOCS:
        assert analyze(text) == reference_terms(text)
    monkeypatch.setattr(TermMemo, "LIMIT", 3)  # the memo is emptied again and again
    for text in AWKWARD + DOCS:
        assert analyze(text) == reference_terms(text)


def bm25s_own_index(texts: list[str]) -> bm25s.BM25:
    model = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
    model.index([analyze(t) for t in texts], show_progress=False)
    return model


@pytest.mark.parametrize("pairs_per_step", [LexicalWriter.PAIRS_PER_STEP, 5])
def test_on_disk_build_gives_bm25s_scores_exactly(monkeypatch, pairs_per_step):
    monkeypatch.setattr(LexicalWriter, "PAIRS_PER_STEP", pairs_per_step)  # 5: documents taken a few at a time
    texts = DOCS + AWKWARD + [f"{DOCS[i % len(DOCS)]} {AWKWARD[i % len(AWKWARD)]} extra{i}" for i in range(40)]
    ours, theirs = LexicalIndex.build(iter(texts)), bm25s_own_index(texts)  # any iterable of texts
    assert ours.model.scores["num_docs"] == len(texts)
    assert set(ours.model.vocab_dict) == set(theirs.vocab_dict)
    for query in ["citation graphs", "graph graph ranking", "Übersetzung café", "the", "extra7 rank", "zzzz"]:
        ids = theirs.get_tokens_ids(analyze(query))
        expected = theirs.get_scores_from_ids(ids) if ids else np.zeros(len(texts), dtype=np.float32)
        assert np.array_equal(ours.scores(query), expected), query
        assert ours.term_weights(query) == pytest.approx(LexicalIndex(theirs).term_weights(query))


def test_saved_index_is_memory_mapped_and_scores_alike(tmp_path):
    index = LexicalIndex.build(DOCS)
    index.save(tmp_path / "bm25")
    again = LexicalIndex.load(tmp_path / "bm25")
    assert isinstance(again.model.scores["data"], np.memmap)  # read from disk on demand, not loaded whole
    assert np.array_equal(again.scores("ranking documents graphs"), index.scores("ranking documents graphs"))


def test_a_build_stopped_while_reading_papers_leaves_no_scratch_file_open(tmp_path):
    """A repeated id stops the build in its papers pass; the BM25 writer's scratch file is closed and removed."""
    papers = synthetic_papers(3)
    with pytest.raises(ValueError, match="appears twice") as stopped:
        build_index(papers + papers[:1], tmp_path / "idx", progress_bar=False)
    assert stopped.traceback  # its frames, the writer's among them, are still held here
    still_open = [os.readlink(fd) for fd in Path("/proc/self/fd").iterdir() if fd.is_symlink()]
    assert not [name for name in still_open if SCRATCH in name]
    assert not list((tmp_path / "idx").rglob(SCRATCH))
