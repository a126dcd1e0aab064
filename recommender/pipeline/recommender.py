"""The recommendation pipeline, stage by stage: `Recommender.load(dir).recommend(query)`.

    prepare   prepare.py   the query's language, the dense field that serves it, its English gloss, its vectors
    retrieve  retrieve.py  the query's filters, the authors' own papers; BM25 and dense candidates from backends/
                           (the index in this process by default, or Milvus)
    fuse      fuse.py      score components of each candidate, mixed into one score
    expand    expand.py    papers cited by the top candidates join the pool (pool.py runs these three)
    rerank    learned.py   the index's learned reranker (after `train`) over features.py's features (a passage:
                           the reranker of `train --contexts`, over local_features.py's graph-free features)
    select    select.py    author-diverse choice of the final k
    explain   explain.py   why each paper is recommended
Every setting is in config.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from recommender.backends import Backend, Filters, open_backend
from recommender.config import DEFAULT, PipelineConfig
from recommender.embedding.encoders import english_encoder
from recommender.pipeline import explain
from recommender.pipeline.features import FeatureExtractor
from recommender.pipeline.learned import EncoderHead, Reranker, load_head, load_reranker, not_trained
from recommender.pipeline.local_features import LocalFeatureExtractor
from recommender.pipeline.pool import CandidatePool, gather
from recommender.pipeline.prepare import QueryPreparer
from recommender.pipeline.retracted import RetractedPapers
from recommender.pipeline.retrieve import dense_retrievers
from recommender.pipeline.select import diverse_order
from recommender.query import Query, Ranking, RecommendResult, Recommendation, Route
from recommender.references.match import match_references
from recommender.references.parse import parse_reference_list
from recommender.store.index import Index


def one_blas_thread() -> None:
    """Run numpy's BLAS on one thread in this process from now on (an index the app builds in it afterwards
    clusters its vectors on one thread too). A query's linear algebra is matrix-vector products too small to share
    out, and OpenBLAS's idle threads spin for about a tenth of a second after each, waiting for more: with two
    threads a warm query took twice the CPU for a longer wall time (3·10⁶ papers, p95 of a global query 399 against
    209 ms of CPU, 227 against 199 ms wall; docs/benchmarks.md)."""
    threadpool_limits(limits=1, user_api="blas")


class Recommender:
    """Ranks the papers of one index for drafts and passages. Its learned parts, the citation-tuned encoder
    `head`, the `reranker` and the `local_reranker` of passages (trained on citation contexts), are given
    (`load` finds those stored with the index); `encoder` replaces the
    English sentence encoder; `backend` retrieves the candidates: a Backend, or the URI of one
    (`backends.open_backend`; None: the index's own BM25 and dense retrievers, in this process).

    What it was made of stays readable (`index`, `head`, `reranker`, `local_reranker`, `encoder`, `backend`);
    the stages it runs are its own: callers use its methods."""

    def __init__(self, index: Index, *, head: EncoderHead | None = None, reranker: Reranker | None = None,
                 encoder=None, backend: Backend | str | None = None, local_reranker: Reranker | None = None,
                 retracted: RetractedPapers | None = None):
        one_blas_thread()
        self.index, self.head, self.reranker, self.local_reranker = index, head, reranker, local_reranker
        # retracted papers (`retracted.py`) are left out of every answer unless `show_retracted` (or the call's own
        # `show_retracted`) says otherwise
        self.retracted = retracted or RetractedPapers(index)
        self.show_retracted = False
        self.encoder = encoder or english_encoder(index.manifest["model"])  # the encoder that built the index
        self._queries = QueryPreparer(index, self.encoder, head)
        self._dense = dense_retrievers(index, head)
        self.backend = backend if isinstance(backend, Backend) else open_backend(backend, index, self._dense, head)
        self._features = FeatureExtractor(index, self.backend, self._queries, self._dense)
        self._local_features = LocalFeatureExtractor(self._features, self._dense)

    @classmethod
    def load(cls, directory: Path | str, backend: str | None = None) -> "Recommender":
        return cls.from_index(Index.load(directory), backend)

    @classmethod
    def from_index(cls, index: Index, backend: str | None = None) -> "Recommender":
        """A recommender over an open index with the learned parts stored beside it, retrieving through the
        `backend` a URI names (`backends.open_backend`; None: in process). A damaged learned file is a
        LearnedModelError, a backend that cannot serve the index a BackendError."""
        return cls(index, head=load_head(index.root, index.dense.shape[1]), reranker=load_reranker(index.root),
                   backend=backend, local_reranker=load_reranker(index.root, local=True))

    def clear_caches(self) -> None:
        """Forget encoded texts, glosses and BM25 scores (benchmarks: every timed run pays for its own)."""
        self._queries.clear()
        self.backend.clear_caches()

    def route(self, query: Query, config: PipelineConfig = DEFAULT) -> Route:
        """Which pipeline answers the query (`QueryPreparer.route`); a LearnedModelError when it needs the
        citation-tuned encoder and the index has none."""
        route = self._queries.route(query, config)
        if route.field == "tuned" and self.head is None:
            raise not_trained(self.index.root, "citation-tuned encoder")
        return route

    def candidate_pool(self, query: Query, config: PipelineConfig = DEFAULT) -> CandidatePool:
        """Candidates from every enabled retriever (and graph expansion) with their components and fused scores."""
        query.validate()
        return gather(query, config, self.route(query, config), Filters.of(query, self.index), index=self.index,
                      reader=self._queries, backend=self.backend)

    def reranker_for(self, query: Query) -> Reranker | None:
        """The learned model that reorders the query's pool: for a local query the passage reranker, when the index
        has one trained on such queries (with a draft, or a passage alone), else the graph-trained reranker (None
        when neither applies)."""
        reranking = self._reranking(query)
        return reranking[0] if reranking else None

    def _reranking(self, query: Query) -> tuple[Reranker, FeatureExtractor | LocalFeatureExtractor] | None:
        """`reranker_for`'s model with the features it was trained on."""
        local = self.local_reranker
        if query.is_local and local is not None and \
                local.info.get("contexts_with_draft" if query.global_text else "contexts_without_draft", 1) > 0:
            return local, self._local_features
        return (self.reranker, self._features) if self.reranker is not None else None

    def rank(self, query: Query, config: PipelineConfig = DEFAULT, k: int | None = None, *,
             show_retracted: bool | None = None) -> Ranking:
        """The top k (default `query.k`) corpus positions in final order, with their score components; retracted
        papers passed over unless `show_retracted` (default: the recommender's `show_retracted`)."""
        return self._rank(query, config, k, self._reranking(query) if config.rerank else None, show_retracted)

    def _rank(self, query: Query, config: PipelineConfig, k: int | None,
              reranking: tuple[Reranker, FeatureExtractor | LocalFeatureExtractor] | None,
              show_retracted: bool | None = None) -> Ranking:
        pool = self.candidate_pool(query, config)
        # the learned model was trained on English-field features: a query answered through the multilingual
        # field (another cosine scale, a gloss for BM25) keeps the fused order
        if config.rerank and not pool.route.multilingual and len(pool.candidates):
            if reranking is None:
                raise not_trained(self.index.root, "learned model")
            reranker, extractor = reranking
            features = extractor.compute(pool)
            pool.rescore(reranker.score(features), features)
        weight = query.diversity if config.diversity is None else config.diversity
        show = self.show_retracted if show_retracted is None else show_retracted
        hidden = np.flatnonzero(self.retracted.mask(pool.candidates)) \
            if not show and len(pool.candidates) and len(self.retracted.positions) else np.empty(0, dtype=np.int64)
        left_out: list[int] = []
        if hidden.size:  # chosen from the others, every score as it was
            keep = np.setdiff1d(np.arange(len(pool.candidates)), hidden)
            order = keep[diverse_order(pool.scores[keep], lambda j: self.index.authors[pool.candidates[keep[j]]],
                                       k or query.k, weight, config.diverse_pool, config.diverse_keep)]
            lowest = pool.scores[order].min() if len(order) == (k or query.k) else -np.inf
            left_out = [int(pool.candidates[j]) for j in hidden[np.argsort(-pool.scores[hidden], kind="stable")]
                        if pool.scores[j] >= lowest]
        else:
            order = diverse_order(pool.scores, lambda j: self.index.authors[pool.candidates[j]], k or query.k, weight,
                                  config.diverse_pool, config.diverse_keep)
        positions = [int(pool.candidates[j]) for j in order]
        return Ranking(positions, pool.scores[order],
                       {name: values[order] for name, values in pool.components.items()}, pool.via, pool.route,
                       pool.features[order] if pool.features is not None else None,
                       pool.evidence.best_sentences(np.asarray(positions, dtype=np.int64), pool.config)
                       if pool.evidence else {}, left_out)

    def recommend(self, query: Query, config: PipelineConfig | None = None, *,
                  show_retracted: bool | None = None) -> RecommendResult:
        """The top `query.k` papers with score components and an explanation each (by default the index's
        learned reranker runs when it has one: for a passage, the passage reranker first). Retracted papers are
        left out (their ids in the answer's `left_out`) unless `show_retracted`; shown, each carries its mark
        (`Recommendation.retraction`, and `extra["retraction"]` of its record, which exports write)."""
        reranking = self._reranking(query)
        config = config or DEFAULT.with_(rerank=reranking is not None)
        ranking = self._rank(query, config, None, reranking if config.rerank else None, show_retracted)
        papers = self.retracted.mark(self.index.papers(ranking.positions), ranking.positions)
        why = explain.Explainer(self._queries.lexical_text(query.main_text, ranking.route), self.index.lexical)
        results = []
        for i, (pos, paper) in enumerate(zip(ranking.positions, papers)):
            components = {name: float(values[i]) for name, values in ranking.components.items()}
            via = ranking.via.get(pos)
            drivers = reranking[0].drivers(ranking.features[i]) if ranking.features is not None else []
            text = why.explain(paper, components, self.index.titles[via] if via is not None else None, drivers,
                               ranking.fits.get(pos))
            results.append(Recommendation.of(paper, i + 1, float(ranking.scores[i]), components, text))
            results[-1].retraction = str(paper.extra.get("retraction") or "")
        return RecommendResult(results, ranking.route, papers, [self.index.ids[p] for p in ranking.left_out])

    def passage_features(self, pool: CandidatePool) -> np.ndarray:
        """The passage reranker's (graph-free) feature matrix of a local query's pool, trained or not."""
        return self._local_features.compute(pool)

    def graph_features(self, pool: CandidatePool) -> np.ndarray:
        """The graph-trained reranker's feature matrix of a pool."""
        return self._features.compute(pool)

    def prepare(self, queries: list[Query], config: PipelineConfig = DEFAULT) -> None:
        """Encode the texts of many queries in batches ahead of ranking them one by one (a document review,
        training): each later query finds its vectors cached."""
        self._queries.prime(queries, config)

    def encode(self, texts: list[str] | tuple[str, ...], field: str = "dense") -> np.ndarray:
        """Unit vectors of texts in a dense field ("dense": the base English encoder; "tuned", "multilingual"),
        encoded in one batch and cached."""
        return self._queries.encode(field, tuple(texts))

    def query_vector(self, query: Query, field: str = "dense", config: PipelineConfig = DEFAULT) -> np.ndarray:
        """The vector a query is searched with in a dense field (cached)."""
        return self._queries.vector(query, config, field)

    def lexical_text(self, text: str, route: Route) -> str:
        """The text BM25 is asked for a query's text on its route (a gloss for a non-English query)."""
        return self._queries.lexical_text(text, route)

    def similarity(self, vector: np.ndarray, positions: np.ndarray, field: str = "dense") -> np.ndarray:
        """Cosines of a vector of a dense field and the papers at corpus positions."""
        return self._dense[field].similarity(vector, positions)

    def nearest_papers(self, texts: list[str], exclude: set[str] = frozenset(),
                       n: int = 2) -> list[tuple[list[int], np.ndarray]]:
        """For each text, the `n` papers closest to it under the base English encoder, none of `exclude`: their
        positions and cosines (the absolute scale of `confidence.py`). The texts are encoded in one batch."""
        if not texts:
            return []
        if not self.show_retracted and len(self.retracted.positions):
            exclude = set(exclude) | {self.index.ids[p] for p in self.retracted.positions}
        filters = Filters.of(Query(exclude=set(exclude)), self.index)
        found = []
        for vector in self.encode(texts):
            scores = self.backend.nearest("dense", vector, filters)
            positions = [int(p) for p in scores.top(n)]
            found.append((positions, scores.of(np.asarray(positions, dtype=np.int64))))
        return found

    def closeness(self, text: str, paper_ids: list[str]) -> np.ndarray:
        """The cosines of a text and papers under the base English encoder (`nearest_papers`' scale)."""
        vector = self.encode((text,))[0]
        positions = np.asarray([self.index.position[pid] for pid in paper_ids], dtype=np.int64)
        return self.backend.nearest("dense", vector, Filters.of(Query(), self.index)).of(positions)

    def already_cited(self, reference_source: str | Path) -> set[str]:
        """Ids of corpus papers a reference list already cites (BibTeX, LaTeX or copied from a PDF; text, or a
        file Path). Titles are checked against the papers' authors and years, so the full records are read."""
        return match_references(parse_reference_list(reference_source), self.index.all_papers())
