"""The recommendation pipeline, stage by stage: `Recommender.load(dir).recommend(query)`.

    read      reader.py    the query's language, the dense field that serves it, its English gloss, its vectors
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

from . import explain
from .backends import Backend, Filters, open_backend
from .config import DEFAULT, PipelineConfig
from .encoders import english_encoder
from .features import FeatureExtractor
from .index import Index
from .learned import EncoderHead, Reranker, load_head, load_reranker, not_trained
from .local_features import LocalFeatureExtractor
from .pool import CandidatePool, gather
from .query import Query, Ranking, RecommendResult, Recommendation, Route
from .reader import QueryReader
from .references import match_references, parse_reference_list
from .retrieve import dense_retrievers
from .select import diverse_order


class Recommender:
    """Ranks the papers of one index for drafts and passages. Its learned parts, the citation-tuned encoder
    `head`, the `reranker` and the `local_reranker` of passages (trained on citation contexts), are given
    (`load` finds those stored with the index); `encoder` replaces the
    English sentence encoder; `backend` retrieves the candidates: a Backend, or the URI of one
    (`backends.open_backend`; None: the index's own BM25 and dense retrievers, in this process)."""

    def __init__(self, index: Index, *, head: EncoderHead | None = None, reranker: Reranker | None = None,
                 encoder=None, backend: Backend | str | None = None, local_reranker: Reranker | None = None):
        self.index, self.head, self.reranker, self.local_reranker = index, head, reranker, local_reranker
        self.encoder = encoder or english_encoder(index.manifest["model"])  # the encoder that built the index
        self.reader = QueryReader(index, self.encoder, head)
        self.dense = dense_retrievers(index, head)
        self.backend = backend if isinstance(backend, Backend) else open_backend(backend, index, self.dense, head)
        self.features = FeatureExtractor(index, self.backend, self.reader, self.dense)
        self.local_features = LocalFeatureExtractor(self.features, self.dense)

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
        """Forget encoded texts and glosses (benchmarks: every timed run pays for its own encoding)."""
        self.reader.clear()

    def route(self, query: Query, config: PipelineConfig = DEFAULT) -> Route:
        """Which pipeline answers the query (`QueryReader.route`); a LearnedModelError when it needs the
        citation-tuned encoder and the index has none."""
        route = self.reader.route(query, config)
        if route.field == "tuned" and self.head is None:
            raise not_trained(self.index.root, "citation-tuned encoder")
        return route

    def candidate_pool(self, query: Query, config: PipelineConfig = DEFAULT) -> CandidatePool:
        """Candidates from every enabled retriever (and graph expansion) with their components and fused scores."""
        query.validate()
        return gather(query, config, self.route(query, config), Filters.of(query, self.index), index=self.index,
                      reader=self.reader, backend=self.backend)

    def reranker_for(self, query: Query) -> Reranker | None:
        """The learned model that reorders the query's pool: for a local query the passage reranker, when the index
        has one trained on such queries (with a draft, or a passage alone), else the graph-trained reranker (None
        when neither applies)."""
        local = self.local_reranker
        if query.is_local and local is not None and \
                local.info.get("contexts_with_draft" if query.global_text else "contexts_without_draft", 1) > 0:
            return local
        return self.reranker

    def rank(self, query: Query, config: PipelineConfig = DEFAULT, k: int | None = None) -> Ranking:
        """The top k (default `query.k`) corpus positions in final order, with their score components."""
        pool = self.candidate_pool(query, config)
        # the learned model was trained on English-field features: a query answered through the multilingual
        # field (another cosine scale, a gloss for BM25) keeps the fused order
        if config.rerank and not pool.route.multilingual and len(pool.candidates):
            reranker = self.reranker_for(query)
            if reranker is None:
                raise not_trained(self.index.root, "learned model")
            extractor = self.local_features if reranker is self.local_reranker else self.features
            features = extractor.compute(pool)
            pool.rescore(reranker.score(features), features)
        weight = query.diversity if config.diversity is None else config.diversity
        order = diverse_order(pool.scores, lambda j: self.index.authors[pool.candidates[j]], k or query.k, weight,
                              config.diverse_pool, config.diverse_keep)
        positions = [int(pool.candidates[j]) for j in order]
        return Ranking(positions, pool.scores[order],
                       {name: values[order] for name, values in pool.components.items()}, pool.via, pool.route,
                       pool.features[order] if pool.features is not None else None,
                       pool.evidence.best_sentences(np.asarray(positions, dtype=np.int64), pool.config)
                       if pool.evidence else {})

    def recommend(self, query: Query, config: PipelineConfig | None = None) -> RecommendResult:
        """The top `query.k` papers with score components and an explanation each (by default the index's
        learned reranker runs when it has one: for a passage, the passage reranker first)."""
        reranker = self.reranker_for(query)
        ranking = self.rank(query, config or DEFAULT.with_(rerank=reranker is not None))
        papers = self.index.papers(ranking.positions)
        why = explain.Explainer(self.reader.lexical_text(query.main_text, ranking.route), self.index.lexical)
        results = []
        for i, (pos, paper) in enumerate(zip(ranking.positions, papers)):
            components = {name: float(values[i]) for name, values in ranking.components.items()}
            via = ranking.via.get(pos)
            drivers = reranker.drivers(ranking.features[i]) if ranking.features is not None else []
            text = why.explain(paper, components, self.index.titles[via] if via is not None else None, drivers,
                               ranking.fits.get(pos))
            results.append(Recommendation.of(paper, i + 1, float(ranking.scores[i]), components, text))
        return RecommendResult(results, ranking.route, papers)

    def nearest_papers(self, texts: list[str], exclude: set[str] = frozenset(),
                       n: int = 2) -> list[tuple[list[int], np.ndarray]]:
        """For each text, the `n` papers closest to it under the base English encoder, none of `exclude`: their
        positions and cosines (the absolute scale of `confidence.py`). The texts are encoded in one batch."""
        if not texts:
            return []
        filters = Filters.of(Query(exclude=set(exclude)), self.index)
        found = []
        for vector in self.reader.encode("dense", tuple(texts)):
            scores = self.backend.nearest("dense", vector, filters)
            positions = [int(p) for p in scores.top(n)]
            found.append((positions, scores.of(np.asarray(positions, dtype=np.int64))))
        return found

    def closeness(self, text: str, paper_ids: list[str]) -> np.ndarray:
        """The cosines of a text and papers under the base English encoder (`nearest_papers`' scale)."""
        vector = self.reader.encode("dense", (text,))[0]
        positions = np.asarray([self.index.position[pid] for pid in paper_ids], dtype=np.int64)
        return self.backend.nearest("dense", vector, Filters.of(Query(), self.index)).of(positions)

    def already_cited(self, reference_source: str | Path) -> set[str]:
        """Ids of corpus papers a reference list already cites (BibTeX, LaTeX or copied from a PDF; text, or a
        file Path). Titles are checked against the papers' authors and years, so the full records are read."""
        return match_references(parse_reference_list(reference_source), self.index.all_papers())
