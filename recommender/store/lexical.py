"""BM25 over title, abstract and keywords (bm25s), with a Lucene-like English analyzer."""
from __future__ import annotations

import re
from array import array
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenized
from scipy import sparse

from recommender.config import BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS
from recommender.paper import Paper

_TOKEN_RE = re.compile(r"\w+(?:'\w+)?", re.UNICODE)
STEMMER = "porter"


def settings() -> dict:
    """The BM25 settings an index is built with, as its manifest records them."""
    return {"k1": BM25_K1, "b": BM25_B, "method": BM25_METHOD, "stopwords": sorted(BM25_STOPWORDS),
            "stemmer": STEMMER}


def unmet_settings(recorded: dict) -> list[str]:
    """What of an index's recorded BM25 settings this version cannot honour. k1, b and the variant are baked
    into the stored scores, so any values are honoured; the analyzer (stop words, stemmer) runs again on every
    query and must be the one the index was built with."""
    unmet = []
    if "stopwords" in recorded and sorted(recorded["stopwords"]) != sorted(BM25_STOPWORDS):
        unmet.append("its stop words differ from this version's")
    if recorded.get("stemmer", STEMMER) != STEMMER:
        unmet.append(f"its stemmer is {recorded['stemmer']!r}, this version's {STEMMER!r}")
    return unmet


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer(STEMMER)


class TermMemo(dict):
    """Word -> its term ("" for a stop word), computed once per word: a corpus repeats a few hundred thousand
    words millions of times. Emptied when it holds `LIMIT` words, so odd tokens never fill the memory."""

    LIMIT = 1 << 20

    def __missing__(self, word: str) -> str:
        if len(self) >= self.LIMIT:
            self.clear()
        bare = word[:-2] if word.endswith("'s") else word
        term = "" if bare in BM25_STOPWORDS else _stemmer().stemWord(bare)
        self[word] = term
        return term


_TERMS = TermMemo()


def analyze(text: str) -> list[str]:
    """Lower-case word tokens, possessives and stop words removed, Porter-stemmed."""
    return [term for term in map(_TERMS.__getitem__, _TOKEN_RE.findall(text.lower())) if term]


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
    def build(cls, texts: Iterable[str]) -> "LexicalIndex":
        """Index the texts (any iterable: they are analysed one at a time and kept only as term ids)."""
        vocabulary: dict[str, int] = {}
        corpus = term_ids(texts, vocabulary)
        model = ColumnarBM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
        model.index(Tokenized(ids=corpus, vocab=vocabulary), show_progress=False)
        return cls(model)

    def save(self, directory: Path) -> None:
        self.model.save(str(directory))

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        """The saved index with its score arrays memory-mapped (versions are never modified once published)."""
        return cls(bm25s.BM25.load(str(directory), mmap=True))

    def scores(self, text: str) -> np.ndarray:
        """BM25 score of every document for the query text (zeros when no term is known)."""
        ids = self.model.get_tokens_ids(analyze(text))
        if not ids:
            return np.zeros(self.model.scores["num_docs"], dtype=np.float32)
        return self.model.get_scores_from_ids(ids)

    def term_weights(self, text: str) -> dict[str, float]:
        """IDF of each known query term (in term order, so that sums over them never depend on hashing)."""
        n = self.documents
        return {term: float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
                for term, df in self.document_frequencies(text).items()}

    @property
    def documents(self) -> int:
        """How many documents the index holds."""
        return int(self.model.scores["num_docs"])

    def document_frequencies(self, text: str) -> dict[str, int]:
        """How many documents hold each known term of the text (in term order)."""
        vocab = self.model.vocab_dict
        indptr = self.model.scores["indptr"]
        return {term: int(indptr[vocab[term] + 1] - indptr[vocab[term]])
                for term in sorted(set(analyze(text))) if term in vocab}


class TermIds:
    """A corpus as one array of term ids (`terms`) and the number of terms of each document (`lengths`)."""

    def __init__(self, terms: np.ndarray, lengths: np.ndarray):
        self.terms, self.lengths = terms, lengths


def term_ids(texts: Iterable[str], vocabulary: dict[str, int] | None = None) -> TermIds:
    """Analyse the texts one by one into term ids; new terms are added to `vocabulary` in order of appearance."""
    vocabulary = {} if vocabulary is None else vocabulary
    terms, lengths = array("i"), array("q")
    for text in texts:
        found = analyze(text)
        terms.extend([vocabulary.setdefault(term, len(vocabulary)) for term in found])
        lengths.append(len(found))
    return TermIds(np.frombuffer(terms, dtype=np.int32), np.frombuffer(lengths, dtype=np.int64))


class ColumnarBM25(bm25s.BM25):
    """bm25s's BM25 whose Lucene-variant index is built by array operations from `TermIds`, through bm25s's hook
    for other builds (`build_index_from_ids`): a corpus costs 4 bytes a term and 8 a (document, term) pair
    while it is indexed, where bm25s's lists of term strings cost about 60 bytes a term. The scores equal
    bm25s's own (float32 idf times a float64 term-frequency part, stored as float32); the saved files are
    bm25s's and load with `bm25s.BM25.load`. Term ids follow the order of first appearance. Other variants
    go through bm25s's own build."""

    PAIRS_PER_STEP = 1 << 22  # (document, term) keys sorted at a time

    def build_index_from_ids(self, unique_token_ids, corpus_token_ids, show_progress=True, leave_progress=False):
        corpus: TermIds = corpus_token_ids
        if self.method != "lucene" or self.idf_method != "lucene":
            ends = np.cumsum(corpus.lengths)
            as_lists = [d.tolist() for d in np.split(corpus.terms, ends[:-1])] if len(ends) else []
            return super().build_index_from_ids(unique_token_ids, as_lists, show_progress, leave_progress)
        n_docs, n_terms = len(corpus.lengths), len(unique_token_ids)
        terms, scores, pairs_per_doc = self._pairs(corpus, n_terms)
        df = np.bincount(terms, minlength=n_terms).astype(np.float64)
        idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        avg_len = corpus.lengths.mean() if n_docs else 0.0
        pair_doc_len = np.repeat(corpus.lengths, pairs_per_doc)
        for start in range(0, len(terms), self.PAIRS_PER_STEP):  # term counts become scores in place
            step = slice(start, start + self.PAIRS_PER_STEP)
            tf = scores[step].astype(np.float64)
            tfc = tf / (self.k1 * ((1 - self.b) + self.b * pair_doc_len[step] / avg_len) + tf)
            scores[step] = idf[terms[step]].astype(np.float64) * tfc
        del pair_doc_len
        indptr = np.concatenate([[0], np.cumsum(pairs_per_doc)])
        by_term = sparse.csr_matrix((scores, terms, indptr), shape=(n_docs, n_terms)).tocsc()
        self.nonoccurrence_array = None
        return {"data": by_term.data.astype(self.dtype, copy=False), "indices": by_term.indices,
                "indptr": by_term.indptr, "num_docs": n_docs}

    def _pairs(self, corpus: TermIds, n_terms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each document's distinct terms (ascending) with their counts, document after document, and the number
        of distinct terms of each document."""
        ends = np.cumsum(corpus.lengths)
        starts = ends - corpus.lengths
        terms, counts, per_doc = [], [], []
        first = 0
        while first < len(corpus.lengths):  # whole documents, about PAIRS_PER_STEP terms at a time
            last = max(first + 1, int(np.searchsorted(ends, starts[first] + self.PAIRS_PER_STEP, side="right")))
            doc = np.repeat(np.arange(first, last, dtype=np.int64), corpus.lengths[first:last])
            keys, found = np.unique(doc * n_terms + corpus.terms[starts[first]:ends[last - 1]], return_counts=True)
            terms.append((keys % n_terms).astype(np.int32))
            counts.append(found.astype(np.float32))
            per_doc.append(np.bincount(keys // n_terms - first, minlength=last - first))
            first = last
        if not terms:
            return np.zeros(0, np.int32), np.zeros(0, np.float32), np.zeros(0, np.int64)
        return np.concatenate(terms), np.concatenate(counts), np.concatenate(per_doc)
