"""The recommendation pipeline and its Python API: `Recommender.load(dir).recommend(query)`."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import explain
from .encoders import get_encoder
from .index import ANNOY_TREES, Index
from .language import LanguageInfo, cross_language_terms, detect_language
from .pipeline import DEFAULT, PipelineConfig
from .query import Query, Recommendation
from .references import match_references, parse_reference_list
from .selection import author_key, select_diverse

DIVERSE_POOL = 5  # diverse selection considers the best k * DIVERSE_POOL candidates
NO_MULTILINGUAL_FIELD = "corpus indexed without multilingual field"


@dataclass(frozen=True)
class Route:
    """How a query is answered: its detected language and the dense field that serves it.

    field: "dense" (English encoder, the English pipeline), "tuned" (the same encoder with the index's
    citation-tuned head, `tuning.py`) or "multilingual" (multilingual encoder and index; lexical matching then
    sees the query's English gloss, or without a glossary its Latin-script terms and numbers).
    warning: "" or a short reason why a non-English query gets the English pipeline
    (NO_MULTILINGUAL_FIELD when the index was built without `multilingual=True`).
    gloss: on the multilingual field, the English words the query's text was read as (`gloss.py`; "" when the
    index has no glossary): BM25 and the English encoder see these.
    """

    language: LanguageInfo
    field: str = "dense"
    warning: str = ""
    gloss: str = ""

    @property
    def multilingual(self) -> bool:
        return self.field == "multilingual"

    def to_dict(self) -> dict:
        return {"language": self.language.to_dict(), "field": self.field, "multilingual": self.multilingual,
                "warning": self.warning, "gloss": self.gloss}


@dataclass
class Ranking:
    """Corpus positions in final order with their score components (no explanations: cheap)."""

    positions: list[int]
    scores: np.ndarray
    components: dict[str, np.ndarray]
    via: dict[int, int]  # position -> the top neighbour citing it
    route: Route | None = None  # the query's language and the dense field used
    features: np.ndarray | None = None  # learned rerank: the model's feature rows, in final order


@dataclass
class CandidatePool:
    """The candidate pool of one query before the final ordering; a reranker replaces `scores` (and adds a
    component). `lexical`/`vector`: the query's BM25 scores over the corpus and its unit vector (None when off)."""

    query: Query
    config: PipelineConfig
    candidates: np.ndarray
    components: dict[str, np.ndarray]
    scores: np.ndarray
    via: dict[int, int]
    route: Route
    allowed: np.ndarray
    lexical: np.ndarray | None = None
    vector: np.ndarray | None = None
    features: np.ndarray | None = None  # set by the learned reranker: one feature row per candidate


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


def _scaled(values: np.ndarray) -> np.ndarray:
    top = float(values.max()) if len(values) else 0.0
    return values / top if top > 0 else np.zeros_like(values)


def _top(scores: np.ndarray, allowed: np.ndarray, n: int) -> np.ndarray:
    masked = np.where(allowed, scores, -np.inf)
    n = min(n, int(allowed.sum()))
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-masked, n - 1)[:n]
    top = top[np.isfinite(masked[top]) & (masked[top] > 0)] if scores.dtype != bool else top
    return top[np.argsort(-masked[top], kind="stable")]


class Recommender:
    """Ranks the papers of one index for drafts and passages."""

    def __init__(self, index: Index):
        self.index = index
        self.encoder = get_encoder("sbert", index.manifest["max_tokens"])
        self.multilingual_available = index.multilingual is not None
        self._learned = None  # the learned reranker of the index, loaded on first use
        self._tuned = None    # (head, tuned corpus vectors) of the citation-tuned encoder, loaded on first use

    def learned(self):
        """The learned reranker stored with the index (`python -m recommender train`), loaded once;
        a clear error when none was trained or its file is damaged."""
        if self._learned is None:
            from .reranker import load_reranker

            self._learned = load_reranker(self.index.root)
        return self._learned

    @property
    def has_learned(self) -> bool:
        from .reranker import model_path

        return self._learned is not None or model_path(self.index.root).is_file()

    @property
    def tuned_head(self):
        """The index's citation-tuned encoder head (`python -m recommender train`), or None."""
        if self._tuned is None:
            from .tuning import load_head

            head = load_head(self.index.root, self.index.dense.shape[1])
            self._tuned = (head, head.apply(self.index.dense) if head is not None else None)
        return self._tuned[0]

    @classmethod
    def load(cls, directory: Path | str) -> "Recommender":
        return cls(Index.load(directory))

    # -- filters -------------------------------------------------------------------------------
    def allowed(self, query: Query) -> np.ndarray:
        """Boolean mask of the papers the query may return."""
        index = self.index
        mask = np.ones(len(index), dtype=bool)
        if query.year_min is not None:
            mask &= index.years >= query.year_min
        if query.year_max is not None:
            mask &= (index.years <= query.year_max) & (index.years > 0)
        if query.max_date:
            limit = int(query.max_date.replace("-", "")[:8])
            dated = index.dates > 0
            undated_ok = (index.years == 0) | (index.years <= limit // 10000)  # papers with no date at all stay
            mask &= np.where(dated, index.dates <= limit, undated_ok)
        if query.venues:
            wanted = [v.lower() for v in query.venues]
            mask &= np.array([any(w in v.lower() for w in wanted) for v in index.venues], dtype=bool)
        for pid in query.exclude:
            pos = index.position.get(pid)
            if pos is not None:
                mask[pos] = False
        return mask

    # -- signals -------------------------------------------------------------------------------
    def lexical_text(self, text: str, route: Route | None = None) -> str:
        """What BM25 sees of a query text. English pipeline: the text itself. A non-English query on the
        multilingual field: its English gloss when the index has a glossary, else only the terms an English index
        can share with it ("基于BERT的引文推荐" -> "基于 BERT 的引文推荐"; the language's stop words dropped)."""
        if route is None or not route.multilingual or route.language.is_english:
            return text
        if self.index.glossary is not None:
            return self.gloss(text, route.language.code)
        return cross_language_terms(text, route.language.code)

    @lru_cache(maxsize=512)
    def gloss(self, text: str, language: str) -> str:
        """The English gloss of a non-English text from the index's glossary (`gloss.py`)."""
        return self.index.glossary.translate(text, language, lambda words: self._encode("multilingual", tuple(words)))

    def lexical_scores(self, query: Query, config: PipelineConfig, route: Route | None = None) -> np.ndarray:
        scores = _scaled(self.index.lexical.scores(self.lexical_text(query.main_text, route)))
        if query.is_local and query.global_text and config.global_weight > 0:
            glob = self.index.lexical.scores(self.lexical_text(query.global_text, route))
            scores = scores + config.global_weight * _scaled(glob)
        return scores

    def query_vector(self, query: Query, config: PipelineConfig, field: str = "dense", prepare=None) -> np.ndarray:
        """The query's unit vector in a field (the passage plus the weighted draft in local mode); `prepare`
        rewrites each text first."""
        texts = [query.main_text] + ([query.global_text] if query.is_local and query.global_text else [])
        vectors = self._encode(field, tuple(prepare(t) for t in texts) if prepare else tuple(texts))
        vector = vectors[0] + (config.global_weight * vectors[1] if len(vectors) > 1 else 0.0)
        return _unit(vector)

    def gloss_vector(self, query: Query, config: PipelineConfig, route: Route) -> np.ndarray | None:
        """The English encoder's vector of the query's gloss (None unless the route has one and it is weighted)."""
        if not (route.gloss and config.dense and config.w_gloss > 0):
            return None
        return self.query_vector(query, config, "dense", lambda text: self.lexical_text(text, route))

    @classmethod
    def clear_caches(cls) -> None:
        """Forget encoded texts and glosses (benchmarks: every timed run pays for its own encoding)."""
        cls._encode.cache_clear()
        cls.gloss.cache_clear()

    @lru_cache(maxsize=512)  # repeated texts: slider changes in the app, several methods in evaluate
    def _encode(self, field: str, texts: tuple[str, ...]) -> np.ndarray:
        if field == "tuned":
            return self.tuned_head.apply(self._encode("dense", texts))
        encoder = get_encoder("multilingual") if field == "multilingual" else self.encoder
        return encoder.encode(list(texts))

    def _field(self, field: str):
        """The vectors and Annoy index (None: exact search) of a dense field."""
        if field == "multilingual":
            return self.index.multilingual, self.index.multilingual_annoy
        if field == "tuned" and self.tuned_head is not None:
            return self._tuned[1], None
        return self.index.dense, self.index.annoy

    def dense_candidates(self, vector: np.ndarray, allowed: np.ndarray, n: int, field: str = "dense") -> np.ndarray:
        """Approximate neighbours from Annoy; exact search when that is as cheap (small corpus, deep pool)
        or when the filter removes most of Annoy's answers."""
        matrix, annoy = self._field(field)
        if annoy is None or n * ANNOY_TREES >= len(self.index):
            return _top(np.asarray(matrix @ vector), allowed, n)
        found = np.asarray(annoy.get_nns_by_vector(vector, n * 2), dtype=np.int64)
        found = found[allowed[found]][:n] if len(found) else found
        if len(found) < min(n, int(allowed.sum())) // 2:
            return _top(np.asarray(matrix @ vector), allowed, n)
        return found

    def own_work(self, query: Query, config: PipelineConfig) -> dict[int, float]:
        """Papers written by the query's authors: position -> share of the query's authors on it."""
        keys = {author_key(name) for name in query.authors} - {""}
        if not config.own_work or not keys:
            return {}
        counts: dict[int, float] = {}
        for key in keys:
            for pos in self.index.by_author.get(key, ()):
                counts[int(pos)] = counts.get(int(pos), 0.0) + 1.0 / len(keys)
        return counts

    # -- language ------------------------------------------------------------------------------
    def detect(self, query: Query) -> LanguageInfo:
        """The language of the text that drives retrieval (the passage in local mode, else the draft)."""
        return detect_language(query.main_text)

    def route(self, query: Query, config: PipelineConfig = DEFAULT) -> Route:
        """Which pipeline answers the query. `config.multilingual`: "auto" sends non-English queries to the
        multilingual field when the index has one; "off" always uses the English pipeline; "on" sends every
        query to the multilingual field. `config.tuned` does the same for the citation-tuned encoder, which
        serves English queries."""
        for name in ("multilingual", "tuned"):
            if getattr(config, name) not in ("auto", "off", "on"):
                raise ValueError(f"{name} must be 'auto', 'off' or 'on', not {getattr(config, name)!r}")
        language = self.detect(query)
        wanted = config.multilingual == "on" or (config.multilingual == "auto" and not language.is_english)
        if not wanted:
            return Route(language, self._english_field(config))
        if not self.multilingual_available:
            return Route(language, self._english_field(config), NO_MULTILINGUAL_FIELD)
        glossed = self.index.glossary is not None and not language.is_english
        return Route(language, "multilingual", gloss=self.gloss(query.main_text, language.code) if glossed else "")

    def _english_field(self, config: PipelineConfig) -> str:
        if config.tuned == "off" or (config.tuned == "auto" and self.tuned_head is None):
            return "dense"
        if self.tuned_head is None:
            from .reranker import LearnedModelError

            raise LearnedModelError(f"{self.index.root} has no citation-tuned encoder; train one with "
                                    f"`python -m recommender train --index {self.index.root}`.")
        return "tuned"

    # -- ranking -------------------------------------------------------------------------------
    def candidate_pool(self, query: Query, config: PipelineConfig = DEFAULT) -> CandidatePool:
        """Candidates from every enabled retriever (and graph expansion) with their components and fused scores."""
        query.validate()
        allowed = self.allowed(query)
        route = self.route(query, config)
        field = route.field
        if route.multilingual and not route.language.is_english:  # BM25 sees a few shared terms only
            config = config.with_(w_lexical=config.w_lexical_multilingual)
        pools = []
        lexical = self.lexical_scores(query, config, route) if config.lexical else None
        if lexical is not None:
            pools.append(_top(lexical, allowed, config.pool))
        vector = self.query_vector(query, config, field) if config.dense else None
        if vector is not None:
            pools.append(self.dense_candidates(vector, allowed, config.pool, field))
        signals = {"vector": vector, "field": field, "own": self.own_work(query, config),
                   "gloss": self.gloss_vector(query, config, route)}
        if signals["gloss"] is not None:
            pools.append(self.dense_candidates(signals["gloss"], allowed, config.pool))
        if signals["own"]:
            mine = np.fromiter(signals["own"], dtype=np.int64, count=len(signals["own"]))
            pools.append(mine[allowed[mine]])
        candidates = np.unique(np.concatenate(pools)) if pools else np.zeros(0, dtype=np.int64)
        components = self._components(candidates, lexical, config, **signals)
        scores = self._fuse(components, config)
        via: dict[int, int] = {}
        if config.graph and len(candidates):
            candidates, components, scores, via = self._expand(candidates, components, scores, lexical, allowed,
                                                               config, signals)
        return CandidatePool(query, config, candidates, components, scores, via, route, allowed, lexical, vector)

    def rank(self, query: Query, config: PipelineConfig = DEFAULT, k: int | None = None) -> Ranking:
        """Score candidates from every enabled signal and order them (diverse selection included)."""
        pool = self.candidate_pool(query, config)
        k = k or query.k
        # final rerank by the index's learned model, which was trained on English-field features: a query answered
        # through the multilingual field (another cosine scale, a gloss for BM25) keeps the fused order
        if config.rerank and not pool.route.multilingual and len(pool.candidates):
            self.learned().rerank(self, pool)
        candidates, components, scores, via, route = pool.candidates, pool.components, pool.scores, pool.via, pool.route
        order = np.argsort(-scores, kind="stable")
        diversity = query.diversity if config.diversity is None else config.diversity
        if diversity > 0:
            head = order[: k * DIVERSE_POOL]
            rewards = np.clip(scores[head], 0, None).tolist()
            picked = [head[i] for i in select_diverse(rewards, [self.index.authors[candidates[j]] for j in head],
                                                      k, diversity)]
            chosen = set(picked)
            order = np.concatenate([picked, [j for j in order if j not in chosen]]).astype(np.int64)
        order = order[:k]
        return Ranking([int(candidates[j]) for j in order], scores[order],
                       {name: values[order] for name, values in components.items()}, via, route,
                       pool.features[order] if pool.features is not None else None)

    def _components(self, candidates, lexical, config, vector=None, field: str = "dense",
                    own: dict[int, float] | None = None, gloss: np.ndarray | None = None) -> dict[str, np.ndarray]:
        comps = {}
        if own:  # "own": share of the query's authors who wrote the paper
            comps["own"] = np.array([own.get(int(c), 0.0) for c in candidates], dtype=np.float32)
        if lexical is not None:
            comps["lexical"] = lexical[candidates].astype(np.float32)
        if vector is not None:  # "dense": cosine in the field that served the query
            comps["dense"] = np.asarray(self._field(field)[0][candidates] @ vector, dtype=np.float32)
        if gloss is not None:  # "gloss": English-encoder cosine of a non-English query's gloss
            comps["gloss"] = np.asarray(self.index.dense[candidates] @ gloss, dtype=np.float32)
        return comps

    def _fuse(self, comps: dict[str, np.ndarray], config: PipelineConfig) -> np.ndarray:
        n = len(next(iter(comps.values()))) if comps else 0
        weights = {"lexical": config.w_lexical, "dense": config.w_dense, "gloss": config.w_gloss,
                   "graph": config.w_graph, "popularity": config.w_popularity, "own": config.w_own}
        total = np.zeros(n, dtype=np.float32)
        for name, values in comps.items():
            if config.fusion == "rrf" and name in ("lexical", "dense", "gloss"):
                ranks = np.empty(n)
                ranks[np.argsort(-values, kind="stable")] = np.arange(1, n + 1)
                total += 1.0 / (config.rrf_k + ranks)
            elif config.fusion == "rrf":
                total += weights[name] * values / (config.rrf_k + 1)
            else:
                total += weights[name] * (_scaled(values) if name == "lexical" else values)
        return total

    def _expand(self, candidates, comps, scores, lexical, allowed, config, signals: dict):
        """Citeomatic-style expansion: papers cited by the top neighbours join the pool and get a graph score."""
        graph = self.index.graph
        seeds = candidates[np.argsort(-scores, kind="stable")[: config.expand_from]]
        seed_weight = {int(s): max(float(w), 0.0) for s, w in zip(seeds, np.sort(scores)[::-1][: len(seeds)])}
        total_weight = sum(seed_weight.values()) or 1.0
        support: dict[int, float] = {}
        via: dict[int, int] = {}
        for seed in seeds:
            for cited in graph.references_of(int(seed)):
                cited = int(cited)
                if allowed[cited]:
                    support[cited] = support.get(cited, 0.0) + seed_weight[int(seed)] / total_weight
                    via.setdefault(cited, int(seed))
        extra = np.array(sorted(set(support) - set(candidates.tolist())), dtype=np.int64)
        added = self._components(extra, lexical, config, **signals)  # only the new papers need scoring
        comps = {name: np.concatenate([values, added[name]]) for name, values in comps.items()}
        candidates = np.concatenate([candidates, extra])
        comps["graph"] = np.array([support.get(int(c), 0.0) for c in candidates], dtype=np.float32)
        if config.w_popularity > 0:
            citers = graph.cited_by[candidates] @ allowed.astype(np.float32)
            comps["popularity"] = np.log1p(citers).astype(np.float32) / np.log1p(max(citers.max(), 1))
        return candidates, comps, self._fuse(comps, config), via

    # -- public API ----------------------------------------------------------------------------
    def already_cited(self, reference_source: str | Path) -> set[str]:
        """Ids of corpus papers a reference list already cites (BibTeX, LaTeX or copied from a PDF; text, or a
        file Path). Titles are checked against the papers' authors and years, so the full records are read."""
        return match_references(parse_reference_list(reference_source), self.index.all_papers())

    def recommend(self, query: Query, config: PipelineConfig | None = None) -> list[Recommendation]:
        """The top `query.k` papers with score components and an explanation each (by default the index's
        learned reranker runs when one was trained)."""
        ranking = self.rank(query, config or DEFAULT.with_(rerank=self.has_learned))
        papers = self.index.papers(ranking.positions)
        query_text = self.lexical_text(query.main_text, ranking.route)
        weights = self.index.lexical.term_weights(query_text)
        surface = explain.surface_words(query_text)
        results = []
        for rank, (pos, paper, score) in enumerate(zip(ranking.positions, papers, ranking.scores), start=1):
            comps = {name: float(values[rank - 1]) for name, values in ranking.components.items()}
            via = ranking.via.get(pos)
            text = explain.explanation(explain.matched_terms(weights, paper, surface),
                                       explain.closest_sentence(weights, paper),
                                       self.index.titles[via] if via is not None else None, comps)
            if ranking.features is not None:  # learned rerank: name the evidence that lifted the paper most
                drivers = self.learned().drivers(ranking.features[rank - 1])
                text += f" Ranked by the learned model, mostly for: {', '.join(drivers)}." if drivers else ""
            results.append(Recommendation(paper_id=paper.id, title=paper.title, authors=paper.authors,
                                          year=paper.year, venue=paper.venue, score=float(score),
                                          components=comps, explanation=text, doi=paper.doi, rank=rank))
        return results
