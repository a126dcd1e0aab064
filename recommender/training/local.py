"""Training of the local reranker: a model over `local_features.LOCAL_FEATURES`, fitted on citation contexts
(passages with [CIT] whose cited papers are known), so that an index without a citation graph learns too.

    contexts = read_contexts("contexts.jsonl", recommender.index)
    reranker = train_local(recommender, contexts)     # stored as <index>/learned/local_reranker.model

A context file is JSONL (optionally gzipped), one citing context per line, as the benchmark query files:
`context` (the passage, with [CIT] where the citations stood), `relevant` (ids of the papers it cites),
optionally `citing_title`, `citing_abstract` (the draft, used as global context) and `citing_id` (the citing
paper: never returned, and the unit of cross-validation: folds never split one citing paper's contexts).
"""
from __future__ import annotations

import gzip
import hashlib
import json
import platform
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping

import numpy as np
from scipy import stats
from tqdm.auto import tqdm

from recommender.config import METHODS, PipelineConfig
from recommender.evaluation.metrics import ndcg_at, summarize
from recommender.evaluation.queries import EvalQuery
from recommender.pipeline.learned import Reranker, save_reranker
from recommender.pipeline.local_features import LOCAL_FEATURES
from recommender.query import Query
from recommender.pipeline.recommender import Recommender
from recommender.training.reranker import fit

FOLDS = 5
PRIME_BATCH = 128  # contexts whose texts are encoded in one batch (two texts each fit the reader's cache)
METRICS = ("ndcg@10", "recall@10", "mrr")  # recorded from the cross-validation
MIN_PAPERS = 10  # fewest citing papers whose test is trusted (bench/learned_honesty.py)
DRAWS = 2000     # bootstrap resamples of the citing papers
LEVEL = 0.95     # of the interval for as many other papers; the model is kept when its lower bound is above 0


@dataclass
class ContextSet:
    """The usable contexts of a file: queries, the citing paper of each (its fold unit), and what was left out."""

    queries: list[EvalQuery]
    groups: list[str]
    skipped: int      # contexts none of whose cited papers is in the index
    path: str
    sha256: str

    @property
    def citing_papers(self) -> int:
        return len(set(self.groups))


@dataclass
class PoolRows:
    """One context's candidate pool: corpus positions, LOCAL_FEATURES rows, which are cited, the fused scores."""

    candidates: np.ndarray
    features: np.ndarray
    cited: np.ndarray
    fused: np.ndarray


def pool_config(config: PipelineConfig | None = None) -> PipelineConfig:
    """The pool the local model learns on and reranks: the `learned` method's (hybrid, graph expansion where
    the index has a graph), plain order."""
    return (config or METHODS["learned"]).with_(rerank=False, diversity=0.0)


# -- the context file ------------------------------------------------------------------------------------
def _lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{path}: damaged gzip file ({exc})") from exc
    try:
        return raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 JSONL context file (byte {exc.start} is not UTF-8)") from exc


def _parse(line: str, number: int, path: Path) -> dict:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}, line {number}: not JSON ({exc.msg}); a context file has one JSON object "
                         f"per line") from exc
    if not isinstance(row, dict):
        raise ValueError(f"{path}, line {number}: a JSON object is expected, not {type(row).__name__}")
    if not isinstance(row.get("context"), str) or not row["context"].strip():
        raise ValueError(f"{path}, line {number}: no \"context\" (the citing passage, with [CIT])")
    relevant = row.get("relevant")
    if not isinstance(relevant, list) or not relevant or not all(isinstance(r, str) for r in relevant):
        raise ValueError(f"{path}, line {number}: \"relevant\" must be a non-empty list of paper ids")
    for name in ("citing_title", "citing_abstract", "citing_id"):
        if row.get(name) is not None and not isinstance(row[name], str):
            raise ValueError(f"{path}, line {number}: \"{name}\" must be text")
    return row


def read_contexts(path: Path | str, index) -> ContextSet:
    """The contexts of a file that cite at least one paper of the index; ValueError naming the line for a bad
    record, and when no context cites a paper of the index."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"context file {path} does not exist")
    queries, groups, skipped, rows = [], [], 0, 0
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        row = _parse(line, number, path)
        rows += 1
        relevant = {r for r in row["relevant"] if r in index.position}
        if not relevant:
            skipped += 1
            continue
        citing = row.get("citing_id") or ""
        query = Query(title=row.get("citing_title") or "", abstract=row.get("citing_abstract") or "",
                      context=row["context"], exclude={citing} if citing else set())
        queries.append(EvalQuery(str(row.get("qid") or f"line{number}"), query, relevant))
        # the fold unit: the citing paper (by id, else by title; a context without either stands alone)
        groups.append(citing or (f"title:{query.title.strip().lower()}" if query.title.strip() else f"line{number}"))
    if not rows:
        raise ValueError(f"{path}: no contexts (an empty file)")
    if not queries:
        raise ValueError(f"{path}: none of its {rows} contexts cites a paper of this index (\"relevant\" holds "
                         f"ids of the index's papers)")
    return ContextSet(queries, groups, skipped, str(path.resolve()), hashlib.sha256(path.read_bytes()).hexdigest())


def without_drafts(queries: list[EvalQuery]) -> list[EvalQuery]:
    """The same contexts with the citing paper's title and abstract removed (a passage pasted alone)."""
    return [EvalQuery(q.qid, replace(q.query, title="", abstract=""), q.relevant) for q in queries]


# -- folds -----------------------------------------------------------------------------------------------
def grouped_folds(groups: list[str], k: int = FOLDS, seed: int = 0) -> np.ndarray:
    """A fold number per item such that all items of a group share a fold: groups in a seeded random order, the
    largest first, each into the fold with the fewest items so far. Fewer than k groups give one fold each."""
    names = sorted(set(groups))
    if len(names) < 2:
        raise ValueError("cross-validation needs contexts from at least two citing papers")
    k = min(k, len(names))
    sizes = {name: 0 for name in names}
    for g in groups:
        sizes[g] += 1
    random.Random(seed).shuffle(names)
    names.sort(key=lambda name: -sizes[name])  # stable: equal sizes keep the shuffled order
    load, fold_of = [0] * k, {}
    for name in names:
        fold = min(range(k), key=lambda f: (load[f], f))
        fold_of[name] = fold
        load[fold] += sizes[name]
    return np.array([fold_of[g] for g in groups], dtype=np.int64)


# -- pools, fitting, cross-validation ---------------------------------------------------------------------
def collect_pools(recommender: Recommender, queries: list[EvalQuery], config: PipelineConfig | None = None,
                  progress: bool = True, on_progress: Callable[[int, int], None] | None = None) -> list[PoolRows]:
    """Each context's pool with its LOCAL_FEATURES rows (the recommender's own extractor and retrievers);
    `on_progress(done, total)` after each."""
    config = pool_config(config)
    index, out = recommender.index, []
    for i, item in enumerate(tqdm(queries, desc="context pools", disable=not progress)):
        if on_progress:
            on_progress(i, len(queries))
        if i % PRIME_BATCH == 0:  # encode the next passages and drafts together (one at a time is slower)
            recommender.prepare([q.query for q in queries[i:i + PRIME_BATCH]], config)
        pool = recommender.candidate_pool(item.query, config)
        features = recommender.passage_features(pool)
        cited = np.array([index.ids[c] in item.relevant for c in pool.candidates], dtype=bool)
        out.append(PoolRows(np.asarray(pool.candidates), features, cited, np.asarray(pool.scores)))
    return out


def stack(pools: list[PoolRows]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X, y and the query of every row over the pools that hold a cited paper (the others teach nothing)."""
    kept = [p for p in pools if p.cited.any()]
    if not kept:
        raise ValueError("no context has a cited paper in its candidate pool: nothing to learn from")
    X = np.concatenate([p.features for p in kept])
    y = np.concatenate([p.cited for p in kept]).astype(np.int8)
    g = np.concatenate([np.full(len(p.cited), i) for i, p in enumerate(kept)])
    return X, y, g


def fit_pools(pools: list[PoolRows], kind: str = "lambdarank", seed: int = 0) -> Reranker:
    """A model over LOCAL_FEATURES, sized for a few hundred contexts."""
    X, y, g = stack(pools)
    return fit(X, y, kind, seed, g, features=LOCAL_FEATURES, few_queries=True)


def out_of_fold(pools: list[PoolRows], folds: np.ndarray, held: int, kind: str = "lambdarank",
                seed: int = 0) -> list[np.ndarray]:
    """Scores of the first `held` pools, each from the model fitted on the pools of the other folds."""
    scores: list[np.ndarray] = [np.zeros(0, np.float32)] * held
    for fold in np.unique(folds[:held]):
        model = fit_pools([p for p, f in zip(pools, folds) if f != fold], kind, seed)
        for i in np.flatnonzero(folds[:held] == fold):
            if len(pools[i].candidates):
                scores[i] = model.score(pools[i].features)
    return scores


def ranked(pool: PoolRows, scores: np.ndarray) -> list[int]:
    """The pool's corpus positions by descending score (ties in pool order, as `select.diverse_order` with weight
    0)."""
    return pool.candidates[np.argsort(-scores, kind="stable")].tolist()


def paired_bootstrap(before: np.ndarray, after: np.ndarray, groups: list[str], seed: int = 0,
                     draws: int = DRAWS, level: float = LEVEL) -> dict[str, float]:
    """The mean of `after - before` (per-context scores of the same contexts) and the `level` interval in which
    that mean, measured on as many other citing papers, would fall. Papers are resampled with replacement, each with
    all its contexts (a paper's contexts are not independent), both orders compared on the same contexts; two
    independent resamples give the spread of this set's mean and of the other set's, added, each widened for few
    papers by t(n-1)/z * sqrt(n/(n-1)) (a bootstrap's spread of n papers' mean falls short of its standard error,
    and a normal quantile of n-1 degrees of freedom)."""
    names, inverse = np.unique(np.asarray(groups), return_inverse=True)
    n = len(names)
    if n < 2:
        raise ValueError("an interval over citing papers needs at least two")
    delta = np.asarray(after, np.float64) - np.asarray(before, np.float64)
    sums = np.bincount(inverse, weights=delta, minlength=n)
    sizes = np.bincount(inverse, minlength=n).astype(np.float64)
    mean = float(delta.mean())
    rng = np.random.default_rng(seed)
    ours, others = ((counts @ sums) / (counts @ sizes) - mean
                    for counts in rng.multinomial(n, np.full(n, 1 / n), size=(2, draws)))
    z = float(stats.norm.ppf(0.5 + level / 2))
    widen = float(stats.t.ppf(0.5 + level / 2, n - 1)) / z * np.sqrt(n / (n - 1))
    low, high = mean + widen * np.percentile(ours + others, [50 * (1 - level), 50 * (1 + level)])
    return {"delta": mean, "low": float(low), "high": float(high)}


def assess(pools: list[PoolRows], queries: list[EvalQuery], groups: list[str], position: Mapping[str, int],
           kind: str = "lambdarank", seed: int = 0, folds: int = FOLDS) -> dict:
    """The learned order against the untrained (fused) one on papers the model never saw: each context ranked by
    the model fitted on the other folds' citing papers (`grouped_folds`), nDCG@10 per context, and the paired
    bootstrap over citing papers of the difference (`paired_bootstrap`). `position`: paper id -> corpus position."""
    fold = grouped_folds(groups, folds, seed)
    learned = out_of_fold(pools, fold, len(queries), kind, seed)
    cited = [{position[r] for r in q.relevant} for q in queries]
    runs = {"fused": [(ranked(p, p.fused), c) for p, c in zip(pools, cited)],
            "learned": [(ranked(p, s), c) for p, s, c in zip(pools, learned, cited)]}
    ndcg = {name: np.array([ndcg_at(order, relevant, 10) for order, relevant in r]) for name, r in runs.items()}
    return {"papers": len(set(groups)), "contexts": len(queries), "folds": int(fold.max()) + 1,
            **{name: {m: round(summarize(r)[m], 4) for m in METRICS} for name, r in runs.items()},
            "ndcg@10_difference": {k: round(v, 4) for k, v in
                                   paired_bootstrap(ndcg["fused"], ndcg["learned"], groups, seed).items()},
            "level": LEVEL, "draws": DRAWS}


def decide(test: dict | None, papers: int, min_papers: int = MIN_PAPERS) -> str:
    """"kept" when at least `min_papers` citing papers tested the model and the lower bound of its nDCG@10 gain
    on as many other papers (`paired_bootstrap`) is above zero; else "too few papers" or "not shown better"."""
    if test is None or papers < min_papers:
        return "too few papers"
    return "kept" if test["ndcg@10_difference"]["low"] > 0 else "not shown better"


def percent(test: dict, value: float) -> str:
    """An nDCG@10 difference as a share of the untrained order's nDCG@10 (the difference itself when that is 0)."""
    base, value = test["fused"]["ndcg@10"], value + 0.0  # never "-0.0"
    return f"{100 * value / base:+.1f}%" if base > 0 else f"{value:+.4f}"


def gain_text(info: dict) -> str:
    """The tested gain with its interval and the number of papers, or why there is none, for people."""
    test = info["test"]
    if info["decision"] == "too few papers":
        papers = info["citing_papers"]
        return (f"{papers} citing paper{' is' if papers == 1 else 's are'} too few to test it (at least "
                f"{info['min_papers']} are needed: on fewer the test cannot tell a gain from chance)")
    change = test["ndcg@10_difference"]
    return (f"nDCG@10 {test['fused']['ndcg@10']:.3f} untrained, {test['learned']['ndcg@10']:.3f} learned, "
            f"{percent(test, change['delta'])} on {test['contexts']} contexts of {test['papers']} citing papers it did "
            f"not learn from ({round(100 * test['level'])}% interval for as many other papers: "
            f"{percent(test, change['low'])} to {percent(test, change['high'])})")


def pool_recall(pools: list[PoolRows], queries: list[EvalQuery]) -> float:
    """Share of the cited papers that the pools hold."""
    total = sum(len(q.relevant) for q in queries)
    return round(sum(int(p.cited.sum()) for p, q in zip(pools, queries)) / total, 4) if total else 0.0


def train_local(recommender: Recommender, contexts: ContextSet, *, kind: str = "lambdarank", seed: int = 0,
                folds: int = FOLDS, save: bool = True, progress: bool = True,
                config: PipelineConfig | None = None, source: str | None = None,
                on_progress: Callable[[int, int], None] | None = None, min_papers: int | None = None) -> Reranker:
    """Fit the local reranker on every context, test it by citing paper (`assess`, recorded in `info["test"]`:
    None with fewer than `min_papers` citing papers, default MIN_PAPERS) and store it with the index (`save`) only
    when the test shows it ranking better (`decide`; `info["decision"]` says why, `info["stored"]` whether). The
    info also counts the contexts with and without a draft: the model serves only the kinds of query it learned
    from. `source` says where the contexts came from (default: the context file's path); `on_progress(done,
    total)` follows the pools."""
    started = time.time()
    min_papers = max(2, min_papers or MIN_PAPERS)
    pools = collect_pools(recommender, contexts.queries, config, progress, on_progress)
    collected = time.time()
    test = None
    if contexts.citing_papers >= min_papers:
        test = assess(pools, contexts.queries, contexts.groups, recommender.index.position, kind, seed, folds)
    reranker = fit_pools(pools, kind, seed)
    drafted = sum(bool(q.query.global_text) for q in contexts.queries)
    reranker.info.update({
        "mode": "local", "source": source or contexts.path, "source_sha256": contexts.sha256,
        "contexts": len(contexts.queries), "contexts_with_draft": drafted,
        "contexts_without_draft": len(contexts.queries) - drafted, "contexts_skipped": contexts.skipped,
        "citing_papers": contexts.citing_papers, "queries_used": sum(bool(p.cited.any()) for p in pools),
        "pairs": int(sum(len(p.cited) for p in pools)), "pool_recall": pool_recall(pools, contexts.queries),
        "test": test, "min_papers": min_papers, "decision": decide(test, contexts.citing_papers, min_papers),
        "seed": seed, "field": recommender.route(contexts.queries[0].query, pool_config(config)).field,
        "trained": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "index_version": recommender.index.version.name,
        "python": platform.python_version(), "collect_seconds": round(collected - started, 1),
        "fit_seconds": round(time.time() - collected, 1)})
    reranker.info["stored"] = save and reranker.info["decision"] == "kept"
    if reranker.info["stored"]:
        save_reranker(recommender.index.root, reranker, local=True)
    return reranker


def summary(info: dict, path) -> str:
    """What `train --contexts` did, for people."""
    text = (f"trained on {info['contexts']} contexts from {info['citing_papers']} citing papers "
            f"({info['pairs']} pairs; pool recall {info['pool_recall']:.3f}) in "
            f"{info['collect_seconds'] + info['fit_seconds']:.0f} s; ")
    if info["test"] is not None:
        text += f"tested by citing paper ({info['test']['folds']} folds): "
    text += gain_text(info)
    if info["stored"]:
        return text + f"; model written to {path}"
    if info["decision"] == "not shown better":
        return text + (f"; the interval's lower bound is not above zero, so the model was not stored ({path} is "
                       f"unchanged)")
    return text + f", so the model was not stored ({path} is unchanged)"
