"""The peer's side of `bench/incite_peer.py`: inCite's own retrieval, run as a user of inCite runs it.

    PEER_PYTHON -m bench.incite_peer_worker --corpus C.jsonl --queries Q.jsonl --faiss DIR --out RUNS.jsonl

Runs in the peer's environment (`bench/requirements-peer.txt`: `incite-app` needs `optimum-onnx`, which needs a
`transformers` older than the app's), so it imports nothing of `recommender`. The corpus is read by inCite's
loader; the paper vectors are built once by inCite's `build_index` (its ONNX citation-tuned MiniLM, embedder
`minilm-ft-onnx`, into its FAISS store; or from --vectors, the same model's vectors of the same texts computed
faster outside) and kept in --faiss; `InCiteAgent.from_corpus` then fuses that store with
its stemmed BM25 by reciprocal rank (`method="hybrid"`), and each query is answered by `InCiteAgent.recommend`
with its defaults (cursor weighting towards the last sentence, duplicate titles removed). Writes one line per
query: {"qid": ..., "ranked": [paper ids, best first]}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

EMBEDDER = "minilm-ft-onnx"  # the citation-tuned MiniLM shipped as ONNX in the package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True, help="inCite corpus JSONL (id, title, abstract, ...)")
    parser.add_argument("--queries", type=Path, required=True, help="JSONL: qid, text")
    parser.add_argument("--faiss", type=Path, required=True, help="inCite's FAISS store, built here when absent")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--vectors", type=Path, help="the papers' vectors under inCite's model, in corpus order "
                        "(.npy), handed to its build_index instead of embedding here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from incite.agent import InCiteAgent
    from incite.corpus.loader import load_corpus
    from incite.retrieval.factory import build_index

    if not (args.faiss / "index.faiss").is_file():
        started = time.time()
        papers = load_corpus(args.corpus)
        vectors = None
        if args.vectors:
            import numpy as np

            vectors = np.load(args.vectors)
            if vectors.shape[0] != len(papers):
                raise SystemExit(f"{args.vectors}: {vectors.shape[0]} vectors for {len(papers)} papers")
        build_index(papers, args.faiss, embedder_type=EMBEDDER, show_progress=False, embeddings=vectors)
        print(f"peer: embedded {len(papers)} papers in {time.time() - started:.0f} s", file=sys.stderr)
    agent = InCiteAgent.from_corpus(str(args.corpus), index_path=str(args.faiss), method="hybrid",
                                    embedder_type=EMBEDDER)
    queries = [json.loads(line) for line in args.queries.read_text(encoding="utf-8").splitlines() if line.strip()]
    started = time.time()
    seconds = []
    with args.out.open("w", encoding="utf-8") as out:
        for query in queries:
            begun = time.perf_counter()
            response = agent.recommend(query["text"], k=args.k)
            seconds.append(time.perf_counter() - begun)
            out.write(json.dumps({"qid": query["qid"], "ranked": [r.paper_id for r in response.recommendations],
                                  "seconds": round(seconds[-1], 4)}) + "\n")
    print(f"peer: {len(queries)} queries in {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
