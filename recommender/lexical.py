"""BM25 over title, abstract and keywords (bm25s), with a Lucene-like English analyzer."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from .config import BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS
from .paper import Paper

_TOKEN_RE = re.compile(r"\w+(?:'\w+)?", re.UNICODE)


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("porter")


def analyze(text: str) -> list[str]:
    """Lower-case word tokens, possessives and stop words removed, Porter-stemmed."""
    words = [w[:-2] if w.endswith("'s") else w for w in _TOKEN_RE.findall(text.lower())]
    stems = _stemmer().stemWords([w for w in words if w not in BM25_STOPWORDS])
    return [s for s in stems if s]


def lexical_text(paper: Paper) -> str:
    """Title, abstract and author keywords: the fields BM25 indexes."""
    keywords = paper.extra.get("keywords") or []
    if isinstance(keywords, str):
        keywords = [keywords]
    return " ".join([paper.title, paper.abstract, *map(str, keywords)])


class LexicalIndex:
    """A bm25s index whose scores come back as one dense vector over the whole corpus."""

    def __init__(self, model: bm25s.BM25):
        self.model = model

    @classmethod
    def build(cls, texts: list[str]) -> "LexicalIndex":
        model = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
        model.index([analyze(t) for t in texts], show_progress=False)
        return cls(model)

    def save(self, directory: Path) -> None:
        self.model.save(str(directory))

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        return cls(bm25s.BM25.load(str(directory), mmap=False))

    def scores(self, text: str) -> np.ndarray:
        """BM25 score of every document for the query text (zeros when no term is known)."""
        ids = self.model.get_tokens_ids(analyze(text))
        if not ids:
            return np.zeros(self.model.scores["num_docs"], dtype=np.float32)
        return self.model.get_scores_from_ids(ids)

    def term_weights(self, text: str) -> dict[str, float]:
        """IDF of each known query term (in term order, so that sums over them never depend on hashing)."""
        vocab = self.model.vocab_dict
        n = self.model.scores["num_docs"]
        indptr = self.model.scores["indptr"]
        weights = {}
        for term in sorted(set(analyze(text))):
            if term in vocab:
                df = indptr[vocab[term] + 1] - indptr[vocab[term]]
                weights[term] = float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
        return weights
