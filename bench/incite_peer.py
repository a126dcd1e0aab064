"""A peer in the same run (issue 17): inCite (`incite-app`) and our methods on the same queries and corpora, and
inCite's citation-tuned MiniLM as our dense encoder.

    nice -n 19 python -m bench.incite_peer --sets citeseer --citeseer-index DIR --peer-python PY
    nice -n 19 python -m bench.incite_peer --sets acm-cr --acm-cr-index DIR --peer-python PY [--acm-pool-size 5000]
    nice -n 19 python -m bench.incite_peer --sets hepth --hepth-index DIR --peer-python PY --hepth-limit 500

Per query set, one table of rows scored by the project's metrics (`recommender.evaluation.metrics`):
- ours: `bm25`, `dense`, `hybrid`, `full` (the default pipeline, what the app serves) and `learned` when the index
  has a trained model, through `evaluate` as in `python -m recommender evaluate`;
- the peer: `bench/incite_peer_worker.py` runs inCite's own retrieval (its ONNX MiniLM, its FAISS store, its stemmed
  BM25 fused by reciprocal rank, `InCiteAgent.recommend` with its defaults) in the peer's environment
  (--peer-python; `bench/requirements-peer-env.txt`). Its query is what a user of inCite would type: the passage
  (the `[CIT]` marks removed) in local mode, title and abstract in global mode; on the --draft-variant sets also
  the citing paper's title and abstract followed by the passage (the same text our methods get). Its lists are
  cut by the protocol ours follow (`retrieve.allowed`: the citing paper, and papers dated after a query paper);
- inCite's encoder inside our pipeline: the paper vectors of the peer's FAISS store (inCite's text and length)
  become our dense field (a sibling index in --work that shares every other file with the real one, read only),
  and queries are encoded by `bench/incite_encoder.py`; rows `dense`, `hybrid`, `full` with "inCite encoder".

Indexes, one option per set run: ACM-CR on the 10,000-paper pool of --acm-cr-index (every paper a development
query cites plus a seeded sample; built by `bench/review_places.py`) or, with --acm-pool-size, on a prefix of it
(`acm_subpool`); CiteSeer on --citeseer-index; hep-th on --hepth-index. The corpus the peer indexes is the very
paper list of each index. --peer-python (or $INCITE_PEER_PYTHON) is the Python of the peer's environment. The
shared data is read from --data (default: ../shared/data beside the checkout). Everything derived (corpus copies,
the peer's FAISS stores and vectors, rankings, sibling indexes) goes to --work (default: .cache/bench/incite-peer
in the checkout, ignored by git), never into tracked files. Writes bench/results/incite_peer.json.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.incite_encoder import InciteEncoder
from bench.paths import DATA, RESULTS, SCRATCH, need, write_json
from bench.quality import DATASETS
from recommender.config import METHODS
from recommender.embedding.encoders import english_encoder
from recommender.evaluation.evaluate import evaluate
from recommender.evaluation.metrics import summarize
from recommender.evaluation.queries import EvalQuery, queries_from_file, queries_from_split
from recommender.pipeline.learned import load_head, load_reranker
from recommender.pipeline.recommender import Recommender
from recommender.pipeline.retrieve import allowed
from recommender.store import clusters, versions as files
from recommender.store.index import Index
from recommender.store.build import build_index

DEPTH = 1000
OURS = ("bm25", "dense", "hybrid", "full", "learned")
WITH_INCITE_ENCODER = ("dense", "hybrid", "full")
PEER_MAX_TOKENS = 512  # what inCite's ONNX embedder cuts its texts at
INDEXES = {"acm-cr": "the 10,000-paper ACM-CR pool index (bench.review_places)", "citeseer": "the CiteSeer index",
           "hepth": "the trained hep-th index"}  # what each set's --NAME-index option names
SETS = {name: DATASETS[name] for name in INDEXES}  # query files as bench.quality
WORK = SCRATCH / "incite-peer"
KEYS = ("ndcg@10", "mrr", "recall@10", "map", "recall@100", "recall@1000")


class RememberingEncoder:
    """An encoder that encodes each distinct text once: `evaluate` clears the engine's caches before every method
    (for honest timings), and on this 2-core machine re-encoding every query for every method costs more than the
    rest of the run. Rankings are unchanged; the timings then leave out query encoding."""

    def __init__(self, encoder):
        self.encoder, self.name, self.dim, self.known = encoder, encoder.name, encoder.dim, {}

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.known))
        if missing:
            self.known.update(zip(missing, self.encoder.encode(missing)))
        return np.stack([self.known[t] for t in texts]).astype(np.float32, copy=False)

    def prime(self, queries: list[EvalQuery]) -> None:
        """Encode every text the engine will ask for (passage and draft, or the draft) in one batched pass."""
        self.encode([t for q in queries for t in (q.query.main_text, q.query.global_text) if t])


def recommender_with(index: Index, encoder) -> Recommender:
    """The engine over `index` with its stored learned parts (as `Recommender.load`) and the given encoder."""
    return Recommender(index, head=load_head(index.root, index.dense.shape[1]), reranker=load_reranker(index.root),
                       local_reranker=load_reranker(index.root, local=True), encoder=encoder)


def query_sets(name: str, data: Path, index: Index, limit: int | None, seed: int) -> dict[str, list[EvalQuery]]:
    """The development queries of a data set; with `limit`, a seeded sample of that many of each set."""
    spec, folder = SETS[name], data / SETS[name]["dir"]
    if "split" in spec:
        file, _, split = spec["split"].rpartition(":")
        sets = {split: queries_from_split(f"{folder / file}:{split}", index)}
    else:
        ids = set(index.ids)
        sets = {label: queries_from_file(folder / file, ids) for label, file in spec["query_sets"].items()}
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


def peer_vectors(corpus: Path, folder: Path, encoder: InciteEncoder, chunk: int = 500) -> Path:
    """The papers' vectors under inCite's model, of inCite's own text of each paper (`Paper.to_embedding_text`:
    title, authors, year, venue, abstract) at its length, in corpus order. inCite's embedder pads every batch of 64
    to its longest text; `InciteEncoder` batches by length and gives the same vectors. Vectors are kept in `folder`
    by text, one file per chunk, so an interrupted run resumes and a smaller pool reuses a larger one's."""
    from incite.corpus.loader import load_corpus

    folder.mkdir(parents=True, exist_ok=True)
    texts = [paper.to_embedding_text() for paper in load_corpus(corpus)]
    known = {}
    for part in sorted(folder.glob("part-*.npz")):
        with np.load(part, allow_pickle=False) as saved:
            known.update(zip(saved["keys"].tolist(), saved["vectors"]))
    missing = list(dict.fromkeys(t for t in texts if text_key(t) not in known))
    for start in range(0, len(missing), chunk):
        batch = missing[start:start + chunk]
        vectors = encoder.encode(batch)
        keys = [text_key(t) for t in batch]
        np.savez(folder / f"part-{len(list(folder.glob('part-*.npz'))):05d}.npz", keys=np.array(keys), vectors=vectors)
        known.update(zip(keys, vectors))
        print(f"peer vectors: {min(start + chunk, len(missing))}/{len(missing)} new", file=sys.stderr, flush=True)
    path = corpus.with_name(corpus.stem + ".vectors.npy")
    np.save(path, np.stack([known[text_key(t)] for t in texts]).astype(np.float32))
    return path


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def acm_subpool(base: Index, data: Path, size: int, root: Path) -> Path:
    """A smaller ACM-CR pool: the first `size` papers of the pool index (the papers a query cites, then a seeded
    random sample, as `bench/review_places.py` built it) plus every paper a query cites that lies beyond them.
    Its MiniLM vectors come from the pool's embedding cache (copied), so building it embeds nothing."""
    try:
        files.current_version(root)
        return root
    except files.IndexDirectoryError:
        pass
    cited = set()
    for file in SETS["acm-cr"]["query_sets"].values():
        with gzip.open(data / SETS["acm-cr"]["dir"] / file, "rt", encoding="utf-8") as handle:
            for row in (json.loads(line) for line in handle if line.strip()):
                cited.update(row.get("relevant") or [])
    papers = base.all_papers()
    chosen = papers[:size] + [p for p in papers[size:] if p.id in cited]
    cache = files.embedding_cache_path(root)
    cache.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(files.embedding_cache_path(base.root), cache)
    build_index(chosen, root, max_tokens=base.manifest["max_tokens"], progress_bar=False,
                source={**base.manifest.get("source", {}), "pool_index": str(base.root), "prefix": size})
    return root
def peer_texts(queries: list[EvalQuery], with_draft: bool) -> dict[str, list[dict]]:
    """What a user of inCite types: the passage (local) or title and abstract (global); in local mode, when
    `with_draft`, also the draft's title and abstract before the passage."""
    local = any(q.query.is_local for q in queries)
    variants = {"incite": [{"qid": q.qid, "text": q.query.main_text} for q in queries]}
    if local and with_draft:
        variants["incite, draft + passage"] = [
            {"qid": q.qid, "text": f"{q.query.global_text}. {q.query.context_text}".strip(". ")} for q in queries]
    return variants


def run_peer(python: str, work: Path, label: str, rows: list[dict], corpus: Path, faiss: Path,
             vectors: Path | None) -> dict[str, list]:
    """inCite's ranked ids per query id, from the worker in the peer's environment (cached in `work`)."""
    slug = label.replace(" ", "_").replace(",", "").replace("+", "plus")
    queries, runs = work / f"{slug}.queries.jsonl", work / f"{slug}.runs.jsonl"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if not runs.is_file() or not queries.is_file() or queries.read_text(encoding="utf-8") != text:
        queries.write_text(text, encoding="utf-8")
        env = {**os.environ, "HOME": str(work), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        command = [python, "-m", "bench.incite_peer_worker", "--corpus", str(corpus), "--queries", str(queries),
                   "--faiss", str(faiss), "--out", str(runs) + ".part", "--k", str(DEPTH)]
        command += ["--vectors", str(vectors)] if vectors else []
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
    written), the dense field's vectors and clusters are new. Published once, then reused."""
    try:
        files.current_version(root)
        return Index.load(root)
    except files.IndexDirectoryError:
        pass
    dense = {"dense.npy", *clusters.file_names("dense")}
    with files.build_lock(root):
        staging = files.new_staging_dir(root)
        for name in base.manifest["files"]:
            if name not in dense:
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                (staging / name).symlink_to(base.version / name)
        np.save(staging / "dense.npy", vectors)
        clusters.build(staging, "dense")
        info = {k: v for k, v in base.manifest.items() if k not in ("files", "created")}
        info["clusters_trained_on"] = {**info["clusters_trained_on"], "dense": len(vectors)}
        files.publish(root, staging, {**info, "model": model, "source": {**info.get("source", {}),
                                                                         "vectors": "incite FAISS store"}})
    return Index.load(root)


def rows_table(rows: dict[str, dict]) -> str:
    head = "| method | " + " | ".join(KEYS) + " | p95 ms |\n| --- |" + " ---: |" * (len(KEYS) + 1)
    lines = [f"| {name} | " + " | ".join(f"{m[k]:.4f}" for k in KEYS) + f" | {m.get('ms_p95', 0):.0f} |"
             for name, m in rows.items()]
    return "\n".join([head, *lines])


def run_set(name: str, args, report: dict) -> None:
    root = index_option(args, name)
    work = args.work / name
    work.mkdir(parents=True, exist_ok=True)
    if name == "acm-cr" and args.acm_pool_size:
        root = acm_subpool(Index.load(root), args.data, args.acm_pool_size, work / f"pool-{args.acm_pool_size}")
        work = work / f"pool-{args.acm_pool_size}-runs"
        work.mkdir(parents=True, exist_ok=True)
    index = Index.load(root)
    ours_encoder = RememberingEncoder(english_encoder(index.manifest["model"]))  # the index's own encoder
    rec = recommender_with(index, ours_encoder)
    limit = args.hepth_limit if name == "hepth" else None
    sets = query_sets(name, args.data, index, limit, args.seed)
    corpus, faiss_dir = work / "corpus.jsonl", work / "faiss"
    peer_corpus(index, corpus)

    incite_encoder = InciteEncoder(PEER_MAX_TOKENS)
    encoder = RememberingEncoder(incite_encoder)
    ours_incite = None
    key = f"{name}-pool{args.acm_pool_size}" if name == "acm-cr" and args.acm_pool_size else name
    entry = report["sets"].setdefault(key, {"index": str(root), "papers": len(index),
                                             "index_version": index.version.name, "query_sets": {}})
    for label, queries in sets.items():
        if args.query_sets and label not in args.query_sets:
            continue
        started = time.time()
        rows = {}
        methods = {m: METHODS[m] for m in OURS}
        ours_encoder.prime(queries)
        for method, metrics in evaluate(rec, queries, methods, depth=DEPTH, progress=False).items():
            rows["full (default)" if method == "full" else method] = metrics
        for variant, texts in peer_texts(queries, label in args.draft_variant).items():
            vectors = None if (faiss_dir / "index.faiss").is_file() else \
                peer_vectors(corpus, args.work / name / "peer-vectors", incite_encoder)
            runs = run_peer(args.peer_python, work, f"{label} {variant}", texts, corpus, faiss_dir, vectors)
            rows[variant] = score_peer(index, queries, runs)
        if ours_incite is None:
            sibling = sibling_index(index, faiss_vectors(faiss_dir, index.ids), work / "ours-incite-encoder",
                                    encoder.name)
            ours_incite = recommender_with(sibling, encoder)
        encoder.prime(queries)
        for method, metrics in evaluate(ours_incite, queries, {m: METHODS[m] for m in WITH_INCITE_ENCODER},
                                        depth=DEPTH, progress=False).items():
            rows[f"{'full (default)' if method == 'full' else method}, inCite encoder"] = metrics
        seconds = time.time() - started
        entry["query_sets"][label] = {"queries": len(queries), "sample": bool(limit), "seconds": round(seconds, 1),
                                      "rows": {k: {m: round(v, 4) if isinstance(v, float) else v for m, v in r.items()}
                                               for k, r in rows.items()}}
        print(f"\n### {name} / {label} ({len(queries)} queries, {seconds:.0f} s)\n\n{rows_table(rows)}", flush=True)
        write_json(args.json, report, say=False)


def index_option(args, name: str) -> Path:
    return getattr(args, f"{name.replace('-', '_')}_index")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared benchmark data (default: %(default)s)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    for name, what in INDEXES.items():
        parser.add_argument(f"--{name}-index", type=Path, help=f"{what} (needed with --sets {name})")
    parser.add_argument("--acm-pool-size", type=int, help="ACM-CR on the first N papers of the pool index plus every "
                        "cited paper (embedding the whole pool with inCite's model takes hours on 2 busy cores)")
    parser.add_argument("--hepth-limit", type=int, help="a seeded sample of this many hep-th dev queries")
    parser.add_argument("--query-sets", nargs="+", help="only these query sets (e.g. paragraphs sentences)")
    parser.add_argument("--draft-variant", nargs="*", default=["paragraphs"],
                        help="local query sets on which inCite also gets the draft before the passage (4x its cost)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peer-python", default=os.environ.get("INCITE_PEER_PYTHON"),
                        help="the Python of the peer's environment (bench/requirements-peer.txt; "
                             "default: $INCITE_PEER_PYTHON)")
    parser.add_argument("--work", type=Path, default=WORK,
                        help="derived files, never tracked ones (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=RESULTS / "incite_peer.json")
    args = parser.parse_args()
    need(parser, args.peer_python, "--peer-python", "PY (the Python of the peer's environment: README, Benchmarks)")
    for name in args.sets:
        need(parser, args.data / SETS[name]["dir"], "--data", f"DIR (the shared benchmark data, with "
             f"{SETS[name]['dir']}/)")
        need(parser, index_option(args, name), f"--{name}-index", f"DIR ({INDEXES[name]})")
    report = json.loads(args.json.read_text(encoding="utf-8")) if args.json.is_file() else {}
    report.update({"date": time.strftime("%Y-%m-%d"), "machine": machine.line(),
                   "depth": DEPTH, "seed": args.seed})
    report.setdefault("sets", {})
    for name in args.sets:
        run_set(name, args, report)
    print(f"\nwrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
