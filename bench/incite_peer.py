"""A peer in the same run (issue 17): inCite (`incite-app`) and our methods on the same queries and corpora, and
inCite's citation-tuned MiniLM as our dense encoder.

    nice -n 19 python -m bench.incite_peer --data ../shared/data --sets acm-cr citeseer hepth \\
        --hepth-index /work/idx/hepth --hepth-limit 500

Per query set, one table of rows scored by the project's metrics (`recommender.evaluation.metrics`):
- ours: `bm25`, `dense`, `hybrid`, `full` (the default pipeline, what the app serves) and `learned` when the index
  has a trained model, through `evaluate` as in `python -m recommender evaluate`;
- the peer: `bench/incite_peer_worker.py` runs inCite's own retrieval (its ONNX MiniLM, its FAISS store, its stemmed
  BM25 fused by reciprocal rank, `InCiteAgent.recommend` with its defaults) in the peer's environment
  (--peer-python; `bench/requirements-peer.txt`). Its query is what a user of inCite would type: the passage (the
  `[CIT]` marks removed) in local mode, title and abstract in global mode; in local mode also the citing paper's
  title and abstract followed by the passage (the same text our methods get). Its lists are cut by the same
  protocol as ours (`retrieve.allowed`: the citing paper itself and papers dated after a query paper removed);
- inCite's encoder inside our pipeline: the paper vectors of the peer's FAISS store (inCite's text and length)
  become our dense field (a sibling index in --work that shares every other file with the real one, read only),
  and queries are encoded by `bench/incite_encoder.py`; rows `dense`, `hybrid`, `full` with "inCite encoder".

Indexes: ACM-CR on the 10,000-paper pool of /work/idx/acm-pool (every paper a development query cites plus a seeded
sample; built by `bench/review_places.py`), CiteSeer on /work/idx/citeseer, hep-th on --hepth-index. The corpus the
peer indexes is the very paper list of each index. Everything derived (corpus copies, the peer's FAISS stores,
rankings, sibling indexes) goes to --work, never into the repository. Writes bench/results/incite_peer.json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from annoy import AnnoyIndex

from bench.incite_encoder import InciteEncoder
from recommender import index_files as files
from recommender.config import ANNOY_TREES, METHODS
from recommender.evaluation.evaluate import evaluate
from recommender.evaluation.metrics import summarize
from recommender.evaluation.queries import EvalQuery, queries_from_file, queries_from_split
from recommender.index import Index
from recommender.recommender import Recommender
from recommender.retrieve import allowed

DEPTH = 1000
OURS = ("bm25", "dense", "hybrid", "full", "learned")
WITH_INCITE_ENCODER = ("dense", "hybrid", "full")
PEER_MAX_TOKENS = 512  # what inCite's ONNX embedder cuts its texts at
SETS = {
    "acm-cr": {"dir": "acm-cr", "index": "/work/idx/acm-pool",
               "files": {"paragraphs": "queries.jsonl.gz", "sentences": "queries_sentences.jsonl.gz",
                         "papers": "queries_paper_level.jsonl.gz"}},
    "citeseer": {"dir": "citeseer-tag", "index": "/work/idx/citeseer", "split": "splits.json:dev"},
    "hepth": {"dir": "hepth-kddcup2003", "index": "/work/idx/hepth", "split": "splits.json:dev"},
}
KEYS = ("ndcg@10", "mrr", "recall@10", "map", "recall@100", "recall@1000")


def query_sets(name: str, data: Path, index: Index, limit: int | None, seed: int) -> dict[str, list[EvalQuery]]:
    """The development queries of a data set; with `limit`, a seeded sample of that many of each set."""
    spec, folder = SETS[name], data / SETS[name]["dir"]
    if "split" in spec:
        file, _, split = spec["split"].rpartition(":")
        sets = {split: queries_from_split(f"{folder / file}:{split}", index)}
    else:
        ids = set(index.ids)
        sets = {label: queries_from_file(folder / file, ids) for label, file in spec["files"].items()}
    if limit:
        sets = {label: sorted(random.Random(seed).sample(qs, min(limit, len(qs))), key=lambda q: q.qid)
                for label, qs in sets.items()}
    return sets


def peer_corpus(index: Index, path: Path) -> None:
    """The index's papers as an inCite corpus file (its loader's fields), in index order."""
    if path.is_file():
        return
    with path.open("w", encoding="utf-8") as out:
        for paper in index.all_papers():
            out.write(json.dumps({"id": paper.id, "title": paper.title.strip() or paper.id, "abstract": paper.abstract,
                                  "authors": paper.authors, "year": paper.year, "journal": paper.venue or None,
                                  "doi": paper.doi or None}, ensure_ascii=False) + "\n")


def peer_texts(queries: list[EvalQuery]) -> dict[str, list[dict]]:
    """What a user of inCite types: the passage (local) or title and abstract (global); in local mode also the
    draft's title and abstract before the passage."""
    local = any(q.query.is_local for q in queries)
    variants = {"incite": [{"qid": q.qid, "text": q.query.main_text} for q in queries]}
    if local:
        variants["incite, draft + passage"] = [
            {"qid": q.qid, "text": f"{q.query.global_text}. {q.query.context_text}".strip(". ")} for q in queries]
    return variants


def run_peer(python: str, work: Path, label: str, rows: list[dict], corpus: Path, faiss: Path) -> dict[str, list]:
    """inCite's ranked ids per query id, from the worker in the peer's environment (cached in `work`)."""
    slug = label.replace(" ", "_").replace(",", "").replace("+", "plus")
    queries, runs = work / f"{slug}.queries.jsonl", work / f"{slug}.runs.jsonl"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if not runs.is_file() or not queries.is_file() or queries.read_text(encoding="utf-8") != text:
        queries.write_text(text, encoding="utf-8")
        env = {**os.environ, "HOME": str(work), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        command = [python, "-m", "bench.incite_peer_worker", "--corpus", str(corpus), "--queries", str(queries),
                   "--faiss", str(faiss), "--out", str(runs) + ".part", "--k", str(DEPTH)]
        subprocess.run(command, check=True, env=env, cwd=Path(__file__).resolve().parent.parent)
        os.replace(str(runs) + ".part", runs)
    found = [json.loads(line) for line in runs.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["qid"]: r for r in found}


def score_peer(index: Index, queries: list[EvalQuery], runs: dict[str, dict]) -> dict[str, float]:
    """Metrics of the peer's lists after the protocol's cut (the query paper and later papers removed)."""
    scored, seconds = [], []
    for item in queries:
        mask = allowed(index, item.query)
        ranked = [pid for pid in runs[item.qid]["ranked"] if pid in index.position and mask[index.position[pid]]]
        scored.append((ranked[:DEPTH], item.relevant))
        seconds.append(runs[item.qid]["seconds"])
    result = summarize(scored)
    result.update({"ms_p50": round(1000 * float(np.percentile(seconds, 50)), 1),
                   "ms_p95": round(1000 * float(np.percentile(seconds, 95)), 1)})
    return result


def faiss_vectors(faiss_dir: Path, ids: list[str]) -> np.ndarray:
    """The peer's paper vectors, read back from its FAISS store, in index order."""
    import faiss

    store = faiss.read_index(str(faiss_dir / "index.faiss"))
    id_map = json.loads((faiss_dir / "id_map.json").read_text(encoding="utf-8"))["id_to_idx"]
    vectors = store.reconstruct_n(0, store.ntotal)
    return np.ascontiguousarray(vectors[[int(id_map[pid]) for pid in ids]], dtype=np.float32)


def sibling_index(base: Index, vectors: np.ndarray, root: Path, model: str) -> Index:
    """An index that is `base` with `vectors` as its dense field: every other file is a link to base's (never
    written), the dense Annoy forest (and format 2's `.npy` copy) are new. Published once, then reused."""
    try:
        files.current_version(root)
        return Index.load(root)
    except files.IndexError_:
        pass
    dense = {"dense.ann", "dense.npy"}
    with files.build_lock(root):
        staging = files.new_staging_dir(root)
        for name in base.manifest["files"]:
            if name not in dense:
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                (staging / name).symlink_to(base.version / name)
        if "dense.npy" in base.manifest["files"]:
            np.save(staging / "dense.npy", vectors)
        forest = AnnoyIndex(vectors.shape[1], "angular")
        for pos, vector in enumerate(vectors):
            forest.add_item(pos, vector)
        forest.build(ANNOY_TREES, n_jobs=-1)
        forest.save(str(staging / "dense.ann"))
        forest.unload()
        info = {k: v for k, v in base.manifest.items() if k not in ("files", "created")}
        files.publish(root, staging, {**info, "model": model, "source": {**info.get("source", {}),
                                                                         "vectors": "incite FAISS store"}})
    return Index.load(root)


def rows_table(rows: dict[str, dict]) -> str:
    head = "| method | " + " | ".join(KEYS) + " | p95 ms |\n| --- |" + " ---: |" * (len(KEYS) + 1)
    lines = [f"| {name} | " + " | ".join(f"{m[k]:.4f}" for k in KEYS) + f" | {m.get('ms_p95', 0):.0f} |"
             for name, m in rows.items()]
    return "\n".join([head, *lines])


def run_set(name: str, args, report: dict) -> None:
    root = Path(getattr(args, f"{name.replace('-', '_')}_index") or SETS[name]["index"])
    work = args.work / name
    work.mkdir(parents=True, exist_ok=True)
    rec = Recommender.load(root)
    index = rec.index
    limit = args.hepth_limit if name == "hepth" else None
    sets = query_sets(name, args.data, index, limit, args.seed)
    corpus, faiss_dir = work / "corpus.jsonl", work / "faiss"
    peer_corpus(index, corpus)

    encoder = InciteEncoder(PEER_MAX_TOKENS)
    ours_incite = None
    entry = report["sets"].setdefault(name, {"index": str(root), "papers": len(index),
                                             "index_version": index.version.name, "query_sets": {}})
    for label, queries in sets.items():
        started = time.time()
        rows = {}
        methods = {m: METHODS[m] for m in OURS}
        for method, metrics in evaluate(rec, queries, methods, depth=DEPTH, progress=False).items():
            rows["full (default)" if method == "full" else method] = metrics
        for variant, texts in peer_texts(queries).items():
            runs = run_peer(args.peer_python, work, f"{label} {variant}", texts, corpus, faiss_dir)
            rows[variant] = score_peer(index, queries, runs)
        if ours_incite is None:
            sibling = sibling_index(index, faiss_vectors(faiss_dir, index.ids), work / "ours-incite-encoder",
                                    encoder.name)
            ours_incite = Recommender(sibling, encoder=encoder)
        for method, metrics in evaluate(ours_incite, queries, {m: METHODS[m] for m in WITH_INCITE_ENCODER},
                                        depth=DEPTH, progress=False).items():
            rows[f"{'full (default)' if method == 'full' else method}, inCite encoder"] = metrics
        seconds = time.time() - started
        entry["query_sets"][label] = {"queries": len(queries), "sample": bool(limit), "seconds": round(seconds, 1),
                                      "rows": {k: {m: round(v, 4) if isinstance(v, float) else v for m, v in r.items()}
                                               for k, r in rows.items()}}
        print(f"\n### {name} / {label} ({len(queries)} queries, {seconds:.0f} s)\n\n{rows_table(rows)}", flush=True)
        write_report(args.json, report)


def write_report(path: Path, report: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--acm-cr-index", dest="acm_cr_index", type=Path)
    parser.add_argument("--citeseer-index", type=Path)
    parser.add_argument("--hepth-index", type=Path)
    parser.add_argument("--hepth-limit", type=int, help="a seeded sample of this many hep-th dev queries")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peer-python", default=os.environ.get("INCITE_PEER_PYTHON", "/work/idx/peer/venv/bin/python"),
                        help="the Python of the peer's environment (bench/requirements-peer.txt)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/incite-peer"), help="derived files (never the repo)")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results" / "incite_peer.json")
    args = parser.parse_args()
    if not Path(args.peer_python).is_file():
        raise SystemExit(f"{args.peer_python}: no such Python; create the peer's environment (README, Benchmarks)")
    report = json.loads(args.json.read_text(encoding="utf-8")) if args.json.is_file() else {}
    report.update({"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores, {platform.machine()}",
                   "depth": DEPTH, "seed": args.seed})
    report.setdefault("sets", {})
    for name in args.sets:
        run_set(name, args, report)
    print(f"\nwrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
