"""Training of the learned reranker (`learned.Reranker`): a small model over `features.FEATURES`, fitted on
the index's own citations.

    reranker = train(recommender, training_queries(recommender.index, split="splits.json:train"))
    Recommender.load(root).rank(query, METHODS["learned"])   # the hybrid+graph pool, reordered by the model
"""
from __future__ import annotations

import platform
import random
import time
import warnings
from typing import Callable

import numpy as np
from tqdm.auto import tqdm

from recommender.config import METHODS, PipelineConfig
from recommender.evaluation.queries import EvalQuery, queries_for_papers, split_positions
from recommender.pipeline.features import FEATURES
from recommender.pipeline.learned import Reranker, save_reranker
from recommender.pipeline.recommender import Recommender

TRAIN_POOL = 300          # candidates per retriever while collecting training pairs
HARD_NEGATIVES = 20       # the best-scored non-cited papers of each pool ...
RANDOM_NEGATIVES = 40     # ... plus this many drawn uniformly from the rest of the pool (classifiers; a ranker
                          # learns from every non-cited paper of the pool, as it will rerank whole pools)
DEFAULT_MAX_QUERIES = 3000
MODEL_KINDS = ("lambdarank", "logreg", "hgb")


# -- training queries ----------------------------------------------------------------------------------
def default_cutoff_year(index, share: float = 0.8) -> int:
    """The year before which about `share` of the dated papers with in-corpus references lie."""
    citing = np.asarray(index.graph.cites.getnnz(axis=1)) > 0
    years = np.sort(index.years[citing & (index.years > 0)])
    if len(years) == 0:
        raise ValueError("no dated paper cites another paper of the corpus: nothing to train on")
    cutoff = int(years[min(int(share * len(years)), len(years) - 1)])
    return cutoff if cutoff > years[0] else cutoff + 1


def training_queries(index, split: str | None = None, before: int | None = None) -> list[EvalQuery]:
    """Training queries: the papers of `split` ("splits.json:NAME"), else the corpus papers older than
    `before` (default: `default_cutoff_year`) that cite other corpus papers."""
    if split:
        positions = split_positions(split, index)
    else:
        before = before if before is not None else default_cutoff_year(index)
        positions = [int(p) for p in np.flatnonzero((index.years > 0) & (index.years < before))]
    queries = queries_for_papers(index, positions)
    if not queries:
        raise ValueError("no training queries: no selected paper cites another paper of the corpus")
    return queries


# -- training ------------------------------------------------------------------------------------------
class StoredVectors:
    """An English encoder for training: a text that is a training paper's own text (a query made from the paper)
    gets the paper's stored vector instead of being encoded again (same encoder, same text)."""

    def __init__(self, encoder, vectors: np.ndarray, positions: dict[str, int]):
        self.encoder, self.vectors, self.positions = encoder, vectors, positions

    def encode(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1 and texts[0] in self.positions:
            return np.asarray(self.vectors[[self.positions[texts[0]]]], dtype=np.float32)
        return self.encoder.encode(texts)


def collect(recommender: Recommender, queries: list[EvalQuery], config: PipelineConfig | None = None, *,
            hard: int = HARD_NEGATIVES, random_negatives: int | None = RANDOM_NEGATIVES, seed: int = 0,
            progress: bool = True, on_progress: Callable[[int, int], None] | None = None):
    """Feature rows of the cited papers in each query's pool plus sampled non-cited ones (all of them when
    `random_negatives` is None), the rows of a query adjacent: cited, hard negatives, then random ones.

    Returns (X, y, group, facts) where facts counts queries, pairs and the pool's recall of the citations.
    """
    config = (config or METHODS["learned"].with_(pool=TRAIN_POOL)).with_(rerank=False, diversity=0.0)
    index = recommender.index
    stored = StoredVectors(recommender.encoder, index.dense,
                           {q.query.main_text: index.position[q.qid] for q in queries if q.qid in index.position})
    learner = Recommender(index, head=recommender.head, encoder=stored)
    rng = random.Random(seed)
    rows, labels, groups = [], [], []
    found = total = used = 0
    for qi, item in enumerate(tqdm(queries, desc="training pairs", disable=not progress)):
        pool = learner.candidate_pool(item.query, config)
        if on_progress:
            on_progress(qi + 1, len(queries))
        total += len(item.relevant)
        if not len(pool.candidates):
            continue
        cited = np.array([index.ids[c] in item.relevant for c in pool.candidates], dtype=bool)
        found += int(cited.sum())
        if not cited.any():
            continue
        order = np.argsort(-pool.scores, kind="stable")
        negatives = [j for j in order if not cited[j]]
        chosen = negatives[:hard]
        rest = negatives[hard:]
        chosen += rest if random_negatives is None else rng.sample(rest, min(random_negatives, len(rest)))
        keep = np.concatenate([np.flatnonzero(cited), np.asarray(chosen, dtype=np.int64)]).astype(np.int64)
        rows.append(learner.graph_features(pool)[keep])
        labels.append(cited[keep])
        groups.append(np.full(len(keep), qi))
        used += 1
    if not rows:
        raise ValueError("no training query has a cited paper in its candidate pool: nothing to learn from")
    X, y, g = np.concatenate(rows), np.concatenate(labels).astype(np.int8), np.concatenate(groups)
    facts = {"queries": len(queries), "queries_used": used, "pairs": int(len(y)), "positives": int(y.sum()),
             "pool_recall": round(found / total, 4) if total else 0.0}
    return X, y, g, facts


def collect_both(recommender: Recommender, queries: list[EvalQuery], config: PipelineConfig | None = None,
                 **options):
    """`collect` over each query's pool with its authors (own work) and again with them ignored, the rows of the
    second pass after the first's: one model learns both kinds of pool (a query that names its authors and one
    that names none; the `query_authors` feature tells them apart)."""
    config = config or METHODS["learned"].with_(pool=TRAIN_POOL)
    X, y, groups, facts = collect(recommender, queries, config, **options)
    if not config.own_work:
        return X, y, groups, facts
    X2, y2, groups2, facts2 = collect(recommender, queries, config.with_(own_work=False), **options)
    facts.update({"queries_used_without_authors": facts2["queries_used"], "pairs": facts["pairs"] + facts2["pairs"],
                  "positives": facts["positives"] + facts2["positives"],
                  "pool_recall_without_authors": facts2["pool_recall"]})
    return (np.concatenate([X, X2]), np.concatenate([y, y2]), np.concatenate([groups, groups2 + len(queries)]),
            facts)


def make_model(kind: str = "lambdarank", seed: int = 0, few_queries: bool = False):
    """"lambdarank": LightGBM trees trained to rank each query's whole pool (NaN-aware; best MRR on hep-th dev,
    bench/rerank_objectives.py); "hgb": gradient-boosted trees (NaN-aware); "logreg": standardised logistic
    regression. The last two are pointwise classifiers. `few_queries`: fewer, smaller trees for a few hundred
    training queries (citation contexts; bench/local_learning.py)."""
    trees, leaves, least = (100, 7, 50) if few_queries else (300, 31, 20)
    if kind == "lambdarank":
        from lightgbm import LGBMRanker

        return LGBMRanker(objective="lambdarank", n_estimators=trees, learning_rate=0.05, num_leaves=leaves,
                          min_child_samples=least, reg_lambda=1.0, random_state=seed, n_jobs=1, deterministic=True,
                          force_row_wise=True, verbose=-1)
    if kind == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=trees, learning_rate=0.05, max_leaf_nodes=leaves,
                                              min_samples_leaf=least, l2_regularization=1.0, random_state=seed)
    if kind == "logreg":
        from sklearn.impute import SimpleImputer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), LogisticRegression(max_iter=1000))
    raise ValueError(f"unknown model kind {kind!r}; choose {', '.join(MODEL_KINDS)}")


def query_weights(y: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Sample weights giving every query the same total weight on its cited and on its non-cited papers
    (else queries with long reference lists dominate the fit)."""
    weights = np.ones(len(y), dtype=np.float64)
    for label in (0, 1):
        mask = y == label
        counts = np.bincount(groups[mask], minlength=int(groups.max()) + 1)
        weights[mask] = 1.0 / counts[groups[mask]]
    return weights * len(y) / weights.sum()


def group_sizes(groups: np.ndarray) -> np.ndarray:
    """Row counts of consecutive runs of one query, as a ranker's `group=`; the rows of a query must be adjacent."""
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    if len(np.unique(groups[starts])) != len(starts):
        raise ValueError("the rows of each query must be contiguous")
    return np.diff(np.r_[starts, len(groups)])


def fit(X: np.ndarray, y: np.ndarray, kind: str = "lambdarank", seed: int = 0,
        groups: np.ndarray | None = None, features: tuple[str, ...] = FEATURES,
        few_queries: bool = False, layout: tuple[str, ...] | None = None) -> Reranker:
    """Fit a model (`make_model`) over the `features` columns of X, whose columns are `layout` (default: just
    `features`), as a ranker on each query's rows or a classifier with per-query balanced weights when `groups` is
    given, and record what explanations need (feature means, spreads, directions, importance)."""
    if layout is not None and tuple(layout) != tuple(features):
        X = X[:, [layout.index(name) for name in features]]
    if len(set(y.tolist())) < 2:
        raise ValueError("training pairs hold only one class (need cited and non-cited papers)")
    model = make_model(kind, seed, few_queries)
    if kind == "lambdarank":
        if groups is None:
            raise ValueError("a ranker needs the query of every row (groups)")
        sizes = group_sizes(groups)  # rows of a query in a seeded random order: tied scores favour no label
        order = np.lexsort((np.random.default_rng(seed).random(len(y)), np.repeat(np.arange(len(sizes)), sizes)))
        model.fit(X[order], y[order], group=sizes)
    elif groups is None:
        model.fit(X, y)
    else:
        weights = query_weights(y, groups)
        key = "sample_weight" if kind == "hgb" else "logisticregression__sample_weight"
        model.fit(X, y, **{key: weights})
    with warnings.catch_warnings():  # a column that is NaN throughout (a passage without draft) has no mean
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(X, axis=0)
        scales = np.nanstd(X, axis=0)
        pos, neg = np.nanmean(X[y == 1], axis=0), np.nanmean(X[y == 0], axis=0)
    signs = np.sign(np.nan_to_num(pos - neg))
    importance = np.abs(np.nan_to_num(pos - neg)) / np.where(scales > 0, scales, 1.0)
    info = {"model": kind, "feature_means": np.nan_to_num(means).tolist(), "feature_scales": np.nan_to_num(scales).tolist(),
            "feature_signs": signs.tolist(), "feature_importance": importance.tolist()}
    return Reranker(model, tuple(features), info, layout=layout)


def train(recommender: Recommender, queries: list[EvalQuery], *, kind: str = "lambdarank",
          max_queries: int | None = DEFAULT_MAX_QUERIES, seed: int = 0, save: bool = True, progress: bool = True,
          source: str = "", config: PipelineConfig | None = None) -> Reranker:
    """Collect pairs from (a seeded subsample of) the queries with the recommender's encoder head, fit, and
    store the model with the index (`save`)."""
    started = time.time()
    if max_queries and len(queries) > max_queries:
        queries = random.Random(seed).sample(queries, max_queries)
    negatives = None if kind == "lambdarank" else RANDOM_NEGATIVES
    X, y, groups, facts = collect_both(recommender, queries, config, random_negatives=negatives, seed=seed,
                                       progress=progress)
    collected = time.time()
    reranker = fit(X, y, kind, seed, groups)
    import sklearn

    reranker.info.update(facts)
    if kind == "lambdarank":
        import lightgbm

        reranker.info["lightgbm"] = lightgbm.__version__
    reranker.info.update({"source": source, "seed": seed, "trained": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                          "index_version": recommender.index.version.name, "sklearn": sklearn.__version__,
                          "python": platform.python_version(), "collect_seconds": round(collected - started, 1),
                          "fit_seconds": round(time.time() - collected, 1)})
    if save:
        save_reranker(recommender.index.root, reranker)
    return reranker
