"""Features of (passage, candidate) pairs for the local reranker: none of them needs a citation graph, so an index
without one (ACM-CR, a user's own library) can learn from citation contexts (`training/local.py`).

The first eight columns are `features.FEATURES` columns (`FeatureExtractor`); the others split the query into
its passage and its draft (the citing paper's title and abstract), which the fused score mixes:

    lexical, dense, dense_gap, title_overlap, abstract_overlap, year_gap, fused, fused_rank   as in features.py
    passage_bm25 / draft_bm25      BM25 of the passage / of the draft alone, / the best among the allowed papers
    citing_sentence_bm25           the same, best over the passage's sentences that hold a [CIT] (a paragraph
                                   cites different papers in different sentences)
    passage_cosine / draft_cosine  cosine of the passage / of the draft alone with the paper (the query's field)
    *_rank                         log(1 + rank of the paper in the pool by that score)
    draft_title_overlap            IDF mass of the draft's terms found in the title / IDF mass of all its terms
    venue_match                    share of the pool's top papers (by fused score, itself left out) from its venue
    paper_terms                    log(1 + distinct indexed terms of the paper): short records lack an abstract
    passage_terms                  log(1 + terms of the passage)
    markers                        number of [CIT] placeholders in the passage (how many papers it cites)
    phrase_title_overlap           IDF mass of the words just before a [CIT] (`passage.cited_phrases`) found in
                                   the title / IDF mass of those words, best over the passage's placeholders
    phrase_text_overlap            the same in the indexed text (title, abstract, keywords)
Every draft column is NaN when the query has no draft.
"""
from __future__ import annotations

import re

import numpy as np

from recommender.pipeline.features import FEATURES, FeatureExtractor
from recommender.pipeline.passage import cited_phrases, citing_sentences
from recommender.pipeline.pool import CandidatePool
from recommender.pipeline.retrieve import DenseRetriever
from recommender.query import CITATION_MARK
from recommender.store.lexical import analyze

BASE_COLUMNS = ("lexical", "dense", "dense_gap", "title_overlap", "abstract_overlap", "year_gap", "fused",
                "fused_rank")
LOCAL_FEATURES = BASE_COLUMNS + (
    "passage_bm25", "passage_bm25_rank", "citing_sentence_bm25", "passage_cosine", "passage_cosine_rank",
    "draft_bm25", "draft_bm25_rank", "draft_cosine", "draft_cosine_rank", "draft_title_overlap",
    "venue_match", "paper_terms", "passage_terms", "markers", "phrase_title_overlap", "phrase_text_overlap")
VENUE_TOP = 10  # the pool's top papers whose venues `venue_match` compares with

# Readable names for explanations (the base columns use features.DESCRIPTIONS).
LOCAL_DESCRIPTIONS = {
    "passage_bm25": "shared terms with the passage", "passage_bm25_rank": "shared terms with the passage",
    "citing_sentence_bm25": "shared terms with the citing sentence",
    "passage_cosine": "close in meaning to the passage", "passage_cosine_rank": "close in meaning to the passage",
    "draft_bm25": "shared terms with your draft", "draft_bm25_rank": "shared terms with your draft",
    "draft_cosine": "close in meaning to your draft", "draft_cosine_rank": "close in meaning to your draft",
    "draft_title_overlap": "your draft's terms in the title", "venue_match": "the venue of the closest papers",
    "paper_terms": "a full record (title and abstract)", "passage_terms": "the passage's length",
    "markers": "the number of citations in the passage",
    "phrase_title_overlap": "the words before [CIT] in the title",
    "phrase_text_overlap": "the words before [CIT] in the abstract",
}

_ORDINAL_RE = re.compile(r"\b\d+(st|nd|rd|th)?\b|\b(proceedings|companion|of the|of)\b|[^\w\s]")


def venue_key(venue: str) -> str:
    """A venue without its edition: "Proceedings of the 42nd International ACM SIGIR Conference ... 2019" and the
    2020 edition give the same key ("" for no venue)."""
    return " ".join(_ORDINAL_RE.sub(" ", venue.lower()).split())


def pool_ranks(values: np.ndarray) -> np.ndarray:
    """log(1 + rank) of each value in the pool, highest first (ties keep pool order); NaN stays NaN."""
    ranks = np.empty(len(values))
    ranks[np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable")] = np.arange(len(values))
    return np.where(np.isnan(values), np.nan, np.log1p(ranks))


class LocalFeatureExtractor:
    """Computes the LOCAL_FEATURES matrix of a local query's pool with the `base` extractor's backend, reader and
    `dense` retrievers (the same ones that built the pool)."""

    def __init__(self, base: FeatureExtractor, dense: dict[str, DenseRetriever]):
        self.base, self.dense = base, dense
        self.index = base.index
        self._venues: list[str] | None = None
        self._paper_terms: np.ndarray | None = None

    def venues(self) -> list[str]:
        if self._venues is None:
            self._venues = [venue_key(v or "") for v in self.index.venues]
        return self._venues

    def paper_terms(self) -> np.ndarray:
        """Distinct indexed terms per paper, from the BM25 postings (computed once)."""
        if self._paper_terms is None:
            _, documents, _ = self.index.lexical.postings()
            self._paper_terms = np.log1p(np.bincount(documents, minlength=len(self.index))).astype(np.float32)
        return self._paper_terms

    def compute(self, pool: CandidatePool) -> np.ndarray:
        """(candidates x LOCAL_FEATURES) float32 matrix of the pool of a local query."""
        query, cands = pool.query, np.asarray(pool.candidates, dtype=np.int64)
        out = np.full((len(cands), len(LOCAL_FEATURES)), np.nan, dtype=np.float32)
        if len(cands) == 0:
            return out
        col = {name: i for i, name in enumerate(LOCAL_FEATURES)}
        base = self.base.compute(pool)
        for name in BASE_COLUMNS:
            out[:, col[name]] = base[:, FEATURES.index(name)]

        texts = {"passage": query.main_text, "draft": query.global_text if query.is_local else ""}
        for part, text in texts.items():
            if not text:
                continue
            bm25 = self.bm25(text, pool, cands)
            vector = self.base.reader.encode(pool.route.field, (text,))[0]
            cosine = self.dense[pool.route.field].similarity(vector, cands)
            out[:, col[f"{part}_bm25"]], out[:, col[f"{part}_bm25_rank"]] = bm25, pool_ranks(bm25)
            out[:, col[f"{part}_cosine"]], out[:, col[f"{part}_cosine_rank"]] = cosine, pool_ranks(cosine)
        out[:, col["citing_sentence_bm25"]] = np.max([self.bm25(text, pool, cands) for text in citing_sentences(query)],
                                                     axis=0)
        if texts["draft"]:
            out[:, col["draft_title_overlap"]] = self.base.title_overlap(self.terms(texts["draft"], pool), cands)
        phrases = [self.terms(phrase, pool) for phrase in cited_phrases(query)]
        if phrases:
            out[:, col["phrase_title_overlap"]] = np.max([self.base.title_overlap(w, cands) for w in phrases], axis=0)
            out[:, col["phrase_text_overlap"]] = np.max([self.base.text_overlap(w, cands) for w in phrases], axis=0)

        venues = self.venues()
        top = [int(c) for c in cands[np.argsort(-pool.scores, kind="stable")[:VENUE_TOP]]]
        for i, c in enumerate(cands):
            key = venues[int(c)]
            others = [t for t in top if t != int(c)]
            out[i, col["venue_match"]] = (sum(venues[t] == key for t in others) / len(others)
                                          if key and others else 0.0)
        out[:, col["paper_terms"]] = self.paper_terms()[cands]
        out[:, col["passage_terms"]] = np.log1p(len(analyze(query.main_text)))
        out[:, col["markers"]] = query.context.upper().count(CITATION_MARK)
        return out

    def terms(self, text: str, pool: CandidatePool) -> dict[str, float]:
        """The IDF of each indexed term of a query text, as BM25 reads it on the pool's route."""
        return self.index.lexical.term_weights(self.base.reader.lexical_text(text, pool.route))

    def bm25(self, text: str, pool: CandidatePool, cands: np.ndarray) -> np.ndarray:
        """BM25 of one text with each candidate / its best score among the papers the query may return."""
        lexical = self.base.backend.lexical([(self.base.reader.lexical_text(text, pool.route), 1.0)], pool.filters)
        best = lexical.best()
        return lexical.of(cands) / best if best > 0 else np.zeros(len(cands), dtype=np.float32)
