"""The learned reranker: a small model over `features.FEATURES`, trained on the index's own citations.

    reranker = train(recommender, training_queries(recommender, split="splits.json:train"))
    recommender.rank(query, METHODS["learned"])        # the hybrid+graph pool, reordered by the model

Storage: `<index root>/learned/reranker.model`, beside the index versions, so it survives new index versions
(its features are computed from whatever version is live). The file is one JSON header line (format, feature
names, training facts, SHA-256 and size of the payload) followed by the pickled model (LightGBM or scikit-learn);
it is written to a temporary file and renamed into place, so an interrupted training leaves the old model (or none).
Like the rest of an index directory, the file is trusted: load models only from indexes you built.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import platform
import random
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from tqdm.auto import tqdm

from .evaluate import EvalQuery, queries_for_papers, split_positions
from .features import DESCRIPTIONS, FEATURES, FeatureExtractor
from .index_files import IndexError_
from .pipeline import METHODS, PipelineConfig

LEARNED_DIR = "learned"
MODEL_FILE = "reranker.model"
FORMAT = 1
TRAIN_POOL = 300          # candidates per retriever while collecting training pairs
HARD_NEGATIVES = 20       # the best-scored non-cited papers of each pool ...
RANDOM_NEGATIVES = 40     # ... plus this many drawn uniformly from the rest of the pool (classifiers; a ranker
                          # learns from every non-cited paper of the pool, as it will rerank whole pools)
DEFAULT_MAX_QUERIES = 3000
MODEL_KINDS = ("lambdarank", "logreg", "hgb")


class LearnedModelError(IndexError_):
    """A learned model that is missing, damaged, or made for other features."""


def model_path(root: Path | str) -> Path:
    return Path(root) / LEARNED_DIR / MODEL_FILE


@dataclass
class Reranker:
    """A fitted model, the feature names it expects, and facts about its training."""

    model: object
    features: tuple[str, ...] = FEATURES
    info: dict = field(default_factory=dict)
    _extractors: dict = field(default_factory=dict, repr=False)

    def score(self, matrix: np.ndarray) -> np.ndarray:
        """One score in [0, 1] per row of a FEATURES matrix: a classifier's probability of being cited, or a
        ranker's score through a logistic squash (same order; not a probability)."""
        if hasattr(self.model, "predict_proba"):
            return self.model.predict_proba(matrix)[:, 1].astype(np.float32)
        return (1.0 / (1.0 + np.exp(-self.model.predict(matrix)))).astype(np.float32)

    def extractor(self, recommender) -> FeatureExtractor:
        key = id(recommender)
        if key not in self._extractors:
            self._extractors = {key: FeatureExtractor(recommender)}
        return self._extractors[key]

    def rerank(self, recommender, pool) -> None:
        """Replace the pool's scores by the model's; the score joins the components as "learned"."""
        matrix = self.extractor(recommender).compute(pool)
        scores = self.score(matrix)
        pool.scores = scores
        pool.components["learned"] = scores
        pool.features = matrix

    def drivers(self, row: np.ndarray, top: int = 2) -> list[str]:
        """Readable names of the evidence that lifted one candidate most, for explanations: a simple
        attribution that ranks features by (value - training mean) / spread, signed by whether cited papers
        have higher values than non-cited ones and weighted by how far the two classes lie apart."""
        means = np.asarray(self.info.get("feature_means") or np.zeros(len(self.features)), dtype=np.float64)
        scales = np.asarray(self.info.get("feature_scales") or np.ones(len(self.features)), dtype=np.float64)
        signs = np.asarray(self.info.get("feature_signs") or np.ones(len(self.features)), dtype=np.float64)
        weights = np.asarray(self.info.get("feature_importance") or np.ones(len(self.features)), dtype=np.float64)
        with np.errstate(invalid="ignore"):
            lift = np.nan_to_num(signs * weights * (row - means) / np.where(scales > 0, scales, 1.0))
        names = []
        for i in np.argsort(-lift):
            text = DESCRIPTIONS[self.features[i]]
            if lift[i] > 0 and text not in names:
                names.append(text)
            if len(names) == top:
                break
        return names


# -- storage -------------------------------------------------------------------------------------------
def save_reranker(root: Path | str, reranker: Reranker) -> Path:
    """Write the model atomically under `<root>/learned/` and return its path."""
    path = model_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = pickle.dumps(reranker.model, protocol=pickle.HIGHEST_PROTOCOL)
    header = {"format": FORMAT, "features": list(reranker.features), "info": reranker.info,
              "sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload)}
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n")
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _read_model_file(path: Path) -> tuple[dict, bytes]:
    """The JSON header line and the payload of a model file (ValueError when the header is not JSON)."""
    head, _, payload = path.read_bytes().partition(b"\n")
    return json.loads(head.decode("utf-8")), payload


def load_reranker(root: Path | str) -> Reranker:
    """The learned model of an index; LearnedModelError with the remedy when it is missing or damaged."""
    path = model_path(root)
    retrain = f"retrain it with `python -m recommender train --index {root}`"
    if not path.is_file():
        raise LearnedModelError(f"{root} has no learned model ({path} is missing); train one with "
                                f"`python -m recommender train --index {root}`.")
    try:
        header, payload = _read_model_file(path)
    except (OSError, ValueError) as exc:
        raise LearnedModelError(f"{path}: unreadable model header ({exc}); {retrain}.") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise LearnedModelError(f"{path}: model format {header.get('format') if isinstance(header, dict) else '?'} "
                                f"is not {FORMAT}; {retrain}.")
    if len(payload) != header.get("bytes") or hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise LearnedModelError(f"{path}: model file is damaged (checksum mismatch); {retrain}.")
    if tuple(header.get("features") or ()) != FEATURES:
        raise LearnedModelError(f"{path}: the model was trained on other features than this version computes; "
                                f"{retrain}.")
    try:
        model = pickle.loads(payload)
    except Exception as exc:  # a model pickled by an incompatible scikit-learn
        raise LearnedModelError(f"{path}: the model cannot be loaded ({exc}); {retrain}.") from exc
    return Reranker(model, FEATURES, header.get("info") or {})


def describe_learned(root: Path | str) -> str:
    """One line for people: what the index has learned from its citations, or how to train it."""
    from .tuning import head_path  # tuning imports this module

    parts = []
    if head_path(root).is_file():
        parts.append("a citation-tuned encoder")
    path = model_path(root)
    if path.is_file():
        try:
            info = _read_model_file(path)[0].get("info") or {}
            parts.append(f"a {info.get('model', '?')} reranker trained on {info.get('queries_used', '?')} queries "
                         f"({str(info.get('trained', '?'))[:10]})")
        except (OSError, ValueError, AttributeError):  # damaged header: loading it will say how to retrain
            parts.append("a reranker whose file cannot be read")
    if not parts:
        return ("Ranking uses the untrained signals; `python -m recommender train --index DIR` learns an encoder "
                "and a reranker from this corpus's citation graph.")
    return "Learned from this corpus's citations: " + " and ".join(parts) + "."


# -- training queries ----------------------------------------------------------------------------------
def default_cutoff_year(recommender, share: float = 0.8) -> int:
    """The year before which about `share` of the dated papers with in-corpus references lie."""
    index = recommender.index
    citing = np.asarray(index.graph.cites.getnnz(axis=1)) > 0
    years = np.sort(index.years[citing & (index.years > 0)])
    if len(years) == 0:
        raise ValueError("no dated paper cites another paper of the corpus: nothing to train on")
    cutoff = int(years[min(int(share * len(years)), len(years) - 1)])
    return cutoff if cutoff > years[0] else cutoff + 1


def training_queries(recommender, split: str | None = None, before: int | None = None) -> list[EvalQuery]:
    """Training queries: the papers of `split` ("splits.json:NAME"), else the corpus papers older than
    `before` (default: `default_cutoff_year`) that cite other corpus papers."""
    index = recommender.index
    if split:
        positions = split_positions(split, index)
    else:
        before = before if before is not None else default_cutoff_year(recommender)
        positions = [int(p) for p in np.flatnonzero((index.years > 0) & (index.years < before))]
    queries = queries_for_papers(recommender, positions)
    if not queries:
        raise ValueError("no training queries: no selected paper cites another paper of the corpus")
    return queries


# -- training ------------------------------------------------------------------------------------------
class _StoredVectors:
    """While training, a query that is a corpus paper's own text uses the paper's stored vector
    instead of encoding it again (same encoder, same text)."""

    def __init__(self, recommender, queries: list[EvalQuery]):
        self.recommender = recommender
        index = recommender.index
        self.lookup = {q.query.main_text: index.position[q.qid] for q in queries if q.qid in index.position}
        self.original = recommender._encode

    def __enter__(self):
        dense, lookup, original = self.recommender.index.dense, self.lookup, self.original

        def encode(field_name: str, texts: tuple[str, ...]) -> np.ndarray:
            if field_name == "dense" and len(texts) == 1 and texts[0] in lookup:
                return np.asarray(dense[[lookup[texts[0]]]], dtype=np.float32)
            return original(field_name, texts)

        self.recommender._encode = encode
        return self

    def __exit__(self, *exc):
        self.recommender.__dict__.pop("_encode", None)


def collect(recommender, queries: list[EvalQuery], config: PipelineConfig | None = None, *,
            hard: int = HARD_NEGATIVES, random_negatives: int | None = RANDOM_NEGATIVES, seed: int = 0,
            progress: bool = True, on_progress: Callable[[int, int], None] | None = None):
    """Feature rows of the cited papers in each query's pool plus sampled non-cited ones (all of them when
    `random_negatives` is None), the rows of a query adjacent: cited, hard negatives, then random ones.

    Returns (X, y, group, facts) where facts counts queries, pairs and the pool's recall of the citations.
    """
    config = (config or METHODS["learned"].with_(pool=TRAIN_POOL)).with_(rerank=False, diversity=0.0)
    extractor = FeatureExtractor(recommender)
    rng = random.Random(seed)
    rows, labels, groups = [], [], []
    found = total = used = 0
    ids = recommender.index.ids
    with _StoredVectors(recommender, queries):
        for qi, item in enumerate(tqdm(queries, desc="training pairs", disable=not progress)):
            pool = recommender.candidate_pool(item.query, config)
            if on_progress:
                on_progress(qi + 1, len(queries))
            total += len(item.relevant)
            if not len(pool.candidates):
                continue
            cited = np.array([ids[c] in item.relevant for c in pool.candidates], dtype=bool)
            found += int(cited.sum())
            if not cited.any():
                continue
            order = np.argsort(-pool.scores, kind="stable")
            negatives = [j for j in order if not cited[j]]
            chosen = negatives[:hard]
            rest = negatives[hard:]
            chosen += rest if random_negatives is None else rng.sample(rest, min(random_negatives, len(rest)))
            keep = np.concatenate([np.flatnonzero(cited), np.asarray(chosen, dtype=np.int64)]).astype(np.int64)
            rows.append(extractor.compute(pool)[keep])
            labels.append(cited[keep])
            groups.append(np.full(len(keep), qi))
            used += 1
    if not rows:
        raise ValueError("no training query has a cited paper in its candidate pool: nothing to learn from")
    X, y, g = np.concatenate(rows), np.concatenate(labels).astype(np.int8), np.concatenate(groups)
    facts = {"queries": len(queries), "queries_used": used, "pairs": int(len(y)), "positives": int(y.sum()),
             "pool_recall": round(found / total, 4) if total else 0.0}
    return X, y, g, facts


def make_model(kind: str = "lambdarank", seed: int = 0):
    """"lambdarank": LightGBM trees trained to rank each query's whole pool (NaN-aware; best MRR on hep-th dev,
    bench/rerank_objectives.py); "hgb": gradient-boosted trees (NaN-aware); "logreg": standardised logistic
    regression. The last two are pointwise classifiers."""
    if kind == "lambdarank":
        from lightgbm import LGBMRanker

        return LGBMRanker(objective="lambdarank", n_estimators=300, learning_rate=0.05, num_leaves=31,
                          min_child_samples=20, reg_lambda=1.0, random_state=seed, n_jobs=1, deterministic=True,
                          force_row_wise=True, verbose=-1)
    if kind == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, max_leaf_nodes=31,
                                              min_samples_leaf=20, l2_regularization=1.0, random_state=seed)
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
        groups: np.ndarray | None = None) -> Reranker:
    """Fit a model (a ranker on each query's rows; a classifier with per-query balanced weights when `groups`
    is given) and record what explanations need (feature means, spreads, directions, importance)."""
    if len(set(y.tolist())) < 2:
        raise ValueError("training pairs hold only one class (need cited and non-cited papers)")
    model = make_model(kind, seed)
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
    means = np.nanmean(X, axis=0)
    scales = np.nanstd(X, axis=0)
    pos, neg = np.nanmean(X[y == 1], axis=0), np.nanmean(X[y == 0], axis=0)
    signs = np.sign(np.nan_to_num(pos - neg))
    importance = np.abs(np.nan_to_num(pos - neg)) / np.where(scales > 0, scales, 1.0)
    info = {"model": kind, "feature_means": np.nan_to_num(means).tolist(), "feature_scales": np.nan_to_num(scales).tolist(),
            "feature_signs": signs.tolist(), "feature_importance": importance.tolist()}
    return Reranker(model, FEATURES, info)


def train(recommender, queries: list[EvalQuery], *, kind: str = "lambdarank",
          max_queries: int | None = DEFAULT_MAX_QUERIES, seed: int = 0, save: bool = True, progress: bool = True,
          source: str = "", config: PipelineConfig | None = None) -> Reranker:
    """Collect pairs from (a seeded subsample of) the queries, fit, and store the model with the index."""
    started = time.time()
    if max_queries and len(queries) > max_queries:
        queries = random.Random(seed).sample(queries, max_queries)
    negatives = None if kind == "lambdarank" else RANDOM_NEGATIVES
    X, y, groups, facts = collect(recommender, queries, config, random_negatives=negatives, seed=seed,
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
        recommender._learned = reranker
    return reranker
