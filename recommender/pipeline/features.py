"""Features of (query, candidate) pairs for the learned reranker, in the spirit of Citeomatic's NNRank.

Every feature is computed over the engine's candidate pool (`pool.CandidatePool`) and respects the
query's filters: citation counts and co-citations only count citing papers the query may see (for a dated
query: papers dated no later than it, never the query itself), so no citation edge out of a newer paper is used.

    lexical           BM25 score / best BM25 score among the allowed papers
    dense             cosine of the query and paper vectors (the field that served the query)
    dense_gap         best cosine in the pool minus this one
    dense_base        cosine under the base English encoder when the citation-tuned one served the query (else dense)
    title_overlap     IDF mass of the query terms found in the title / IDF mass of all query terms
    abstract_overlap  the same over the indexed text (title, abstract, keywords: the BM25 field)
    citations         log(1 + in-citations from allowed papers)
    graph             support from the top neighbours (seeds): weighted share of seeds citing the paper
    cocitation        seed-weighted cosine co-citation with the seeds (allowed citers only)
    cocitation_count  log(1 + papers citing it together with a seed)
    coupling          seed-weighted cosine bibliographic coupling with the seeds (shared references)
    coupling_count    log(1 + references shared with the seeds)
    year_gap          query year minus paper year (NaN when unknown)
    fused             the engine's fused score / the pool's best (the ordering the reranker starts from)
    fused_rank        log(1 + rank by fused score in the pool)
    citations_rel     citations minus the pool's highest (robust to the corpus growing over time)
    own               share of the query's authors who wrote the paper (0 when the query names none)
    seed_authors      seed-weighted share of the seeds (itself left out) that share an author with the paper: the
                      query's own authors' earlier work shows up even when the query names no author
    pool_authors      log(1 + papers among the pool's top `POOL_TOP` sharing an author with it, itself left out)
    pool_cited        log(1 + papers among the pool's top `POOL_TOP` citing it)
    pool_cites        log(1 + papers among the pool's top `POOL_TOP` it cites)
    recent_citations  log(1 + in-citations from allowed papers, each weighted 2^-(query year - its year))
    graph2            support two steps away: the seeds' references' references, seed-weighted, / the pool's best
    query_authors     1 when the query's authors took part (own work on and at least one author named), else 0
Seeds are the top `config.expand_from` papers of the pool by fused score, weighted by it (`expand.seed_weights`).
"""
from __future__ import annotations

import numpy as np

from recommender.backends.base import Backend
from recommender.corpus.authors import author_key
from recommender.pipeline.expand import seed_weights
from recommender.pipeline.pool import CandidatePool
from recommender.pipeline.prepare import QueryPreparer
from recommender.pipeline.retrieve import DenseRetriever, lexical_texts
from recommender.store.lexical import analyze

FEATURES = ("lexical", "dense", "dense_gap", "dense_base", "title_overlap", "abstract_overlap", "citations", "graph",
            "cocitation", "cocitation_count", "coupling", "coupling_count", "year_gap", "fused", "fused_rank",
            "citations_rel", "own", "seed_authors", "pool_authors", "pool_cited", "pool_cites", "recent_citations",
            "graph2", "query_authors")
POOL_TOP = 50  # the pool's best papers (by fused score) that the pool_* features compare each candidate with

# Readable names for explanations: the evidence a feature stands for.
DESCRIPTIONS = {
    "lexical": "shared terms (BM25)", "dense": "closeness in meaning", "dense_gap": "closeness in meaning",
    "dense_base": "closeness in meaning",
    "title_overlap": "query terms in the title", "abstract_overlap": "query terms in the abstract",
    "citations": "how often it is cited", "graph": "cited by the closest papers",
    "cocitation": "cited together with the closest papers", "cocitation_count": "cited together with the closest papers",
    "coupling": "shares references with the closest papers", "coupling_count": "shares references with the closest papers",
    "year_gap": "its age", "fused": "the combined retrieval score", "fused_rank": "the combined retrieval score",
    "citations_rel": "how often it is cited", "own": "written by one of your authors",
    "seed_authors": "shares an author with the closest papers", "pool_authors": "shares an author with the closest papers",
    "pool_cited": "cited by the other top candidates", "pool_cites": "cites the other top candidates",
    "recent_citations": "how often it was cited lately", "graph2": "cited by papers the closest papers cite",
    "query_authors": "your authors",
}


def _row_cosine(counts: np.ndarray, own: np.ndarray, other: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_s weights[s] * counts[c, s] / sqrt(own[c] * other[s]) (0 where a degree is 0)."""
    denom = np.sqrt(np.outer(own, other))
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.where(denom > 0, counts / np.where(denom > 0, denom, 1.0), 0.0)
    return cos @ weights


class FeatureExtractor:
    """Computes the FEATURES matrix of a candidate pool; caches per-paper title terms across queries.

    A signal the pool's method left out (BM25, the query vector) is computed with the same `backend`, `reader`
    (`reader.QueryPreparer`) and `dense` retrievers (one per field) as the pool's."""

    def __init__(self, index, backend: Backend, reader: QueryPreparer, dense: dict[str, DenseRetriever]):
        self.index, self.backend, self.reader, self.dense = index, backend, reader, dense
        self._title_terms: dict[int, frozenset[str]] = {}
        self._author_keys: dict[int, frozenset[str]] = {}
        self._newest_year = int(index.years.max()) if len(index) else 0

    def title_terms(self, pos: int) -> frozenset[str]:
        terms = self._title_terms.get(pos)
        if terms is None:
            terms = self._title_terms[pos] = frozenset(analyze(self.index.titles[pos]))
        return terms

    def author_keys(self, pos: int) -> frozenset[str]:
        keys = self._author_keys.get(pos)
        if keys is None:
            keys = self._author_keys[pos] = frozenset(author_key(name) for name in self.index.authors[pos]) - {""}
        return keys

    def shared_authors(self, cands: np.ndarray, others: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """For each candidate, the summed weight of the `others` (itself left out) that share an author with it."""
        holders: dict[str, set[int]] = {}
        for j, other in enumerate(others.tolist()):
            for key in self.author_keys(other):
                holders.setdefault(key, set()).add(j)
        out = np.zeros(len(cands), dtype=np.float64)
        for i, cand in enumerate(cands.tolist()):
            found: set[int] = set()
            for key in self.author_keys(cand):
                found |= holders.get(key, set())
            out[i] = sum(weights[j] for j in found if others[j] != cand)
        return out

    def title_overlap(self, weights: dict[str, float], cands: np.ndarray) -> np.ndarray:
        """IDF mass of the terms (`LexicalIndex.term_weights` of a text) found in each candidate's title / IDF mass
        of them all (zeros when there are none)."""
        mass = sum(weights.values())
        if mass <= 0:
            return np.zeros(len(cands), dtype=np.float32)
        return np.array([sum(weights.get(t, 0.0) for t in self.title_terms(int(c))) / mass for c in cands],
                        dtype=np.float32)

    def text_overlap(self, weights: dict[str, float], cands: np.ndarray) -> np.ndarray:
        """The same in each candidate's indexed text (title, abstract, keywords: the BM25 field), from the postings."""
        mass = sum(weights.values())
        if mass <= 0:
            return np.zeros(len(cands), dtype=np.float32)
        holders = [self.index.lexical.documents_with(term) for term in weights]
        docs = np.concatenate(holders)
        w = np.repeat(np.fromiter(weights.values(), dtype=np.float64), [len(h) for h in holders])
        return (np.bincount(docs, weights=w, minlength=len(self.index))[cands] / mass).astype(np.float32)

    def query_year(self, query) -> int:
        """The query's year: its date cut-off, else its year_max, else the newest year of the corpus."""
        if query.max_date:
            return int(str(query.max_date)[:4])
        if query.year_max is not None:
            return int(query.year_max)
        return self._newest_year

    def compute(self, pool: CandidatePool) -> np.ndarray:
        """(candidates x FEATURES) float32 matrix for the pool."""
        index, query = self.index, pool.query
        cands = np.asarray(pool.candidates, dtype=np.int64)
        n = len(cands)
        out = np.zeros((n, len(FEATURES)), dtype=np.float32)
        if n == 0:
            return out
        col = {name: i for i, name in enumerate(FEATURES)}
        allowed = pool.allowed

        lexical = pool.lexical if pool.lexical is not None else \
            self.backend.lexical(lexical_texts(query, pool.config, pool.route, self.reader), pool.filters)
        top = lexical.best()
        out[:, col["lexical"]] = lexical.of(cands) / top if top > 0 else 0.0

        vector = pool.vector if pool.vector is not None else self.reader.vector(query, pool.config, pool.route.field)
        dense = self.dense[pool.route.field].similarity(vector, cands)
        out[:, col["dense"]] = dense
        out[:, col["dense_gap"]] = dense.max() - dense
        if pool.route.field == "tuned":
            base = self.reader.vector(query, pool.config, "dense")
            out[:, col["dense_base"]] = self.dense["dense"].similarity(base, cands)
        else:
            out[:, col["dense_base"]] = dense

        weights = index.lexical.term_weights(self.reader.lexical_text(query.main_text, pool.route))
        out[:, col["title_overlap"]] = self.title_overlap(weights, cands)
        out[:, col["abstract_overlap"]] = self.text_overlap(weights, cands)

        graph = index.graph
        allowed_f = allowed.astype(np.float32)
        citers = graph.cited_by[cands]                                   # who cites each candidate
        cited = np.asarray(citers @ allowed_f).ravel()                    # ... among allowed papers
        out[:, col["citations"]] = np.log1p(cited)

        seeds, seed_w = seed_weights(pool.candidates, pool.scores, pool.config.expand_from)
        seed_refs = graph.cites[seeds]                                    # seeds are allowed papers
        out[:, col["graph"]] = np.asarray(seed_refs.T @ seed_w).ravel()[cands]
        self_pair = cands[:, None] == seeds[None, :]

        seed_citers = graph.cited_by[seeds].multiply(allowed_f[None, :]).tocsr()  # allowed citers only
        co = np.asarray((citers @ seed_citers.T).toarray(), dtype=np.float64)
        co[self_pair] = 0.0
        seed_cited = np.asarray(seed_citers.sum(axis=1)).ravel()
        out[:, col["cocitation"]] = _row_cosine(co, cited, seed_cited, seed_w)
        out[:, col["cocitation_count"]] = np.log1p(co.sum(axis=1))

        refs = graph.cites[cands]
        shared = np.asarray((refs @ seed_refs.T).toarray(), dtype=np.float64)
        shared[self_pair] = 0.0
        own_refs = np.asarray(refs.sum(axis=1)).ravel()
        seed_nrefs = np.asarray(seed_refs.sum(axis=1)).ravel()
        out[:, col["coupling"]] = _row_cosine(shared, own_refs, seed_nrefs, seed_w)
        out[:, col["coupling_count"]] = np.log1p(shared.sum(axis=1))

        years = index.years[cands].astype(np.float32)
        qyear = self.query_year(query)
        out[:, col["year_gap"]] = np.where((years > 0) & (qyear > 0), qyear - years, np.nan)

        fused = np.asarray(pool.scores, dtype=np.float64)
        best = fused.max()
        out[:, col["fused"]] = fused / best if best > 0 else fused
        ranks = np.empty(n)
        ranks[np.argsort(-fused, kind="stable")] = np.arange(n)
        out[:, col["fused_rank"]] = np.log1p(ranks)
        out[:, col["citations_rel"]] = out[:, col["citations"]] - out[:, col["citations"]].max()
        if "own" in pool.components:
            out[:, col["own"]] = pool.components["own"]

        top = cands[np.argsort(-fused, kind="stable")[:POOL_TOP]]
        out[:, col["seed_authors"]] = self.shared_authors(cands, seeds, seed_w)
        out[:, col["pool_authors"]] = np.log1p(self.shared_authors(cands, top, np.ones(len(top))))
        out[:, col["pool_cited"]] = np.log1p(graph.times_cited_by(top.tolist())[cands])
        out[:, col["pool_cites"]] = np.log1p(graph.times_citing(top.tolist())[cands])
        decay = np.where(allowed & (index.years > 0), np.exp2(-np.clip(qyear - index.years, 0, None)), 0.0)
        out[:, col["recent_citations"]] = np.log1p(np.asarray(citers @ decay).ravel())
        first = np.asarray(seed_refs.T @ seed_w).ravel() * allowed
        second = np.asarray(graph.cited_by[cands] @ first).ravel()
        out[:, col["graph2"]] = second / second.max() if second.max() > 0 else 0.0
        out[:, col["query_authors"]] = float(pool.config.own_work and any(author_key(a) for a in query.authors))
        return out
