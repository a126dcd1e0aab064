"""Embedding throughput of all-MiniLM-L6-v2 per runtime, where a build's embedding time goes, and what each
runtime does to ranking (issue 13 §2).

    python -m bench.embed_speed speed --index IDX/acm-pool --texts 5000 --rounds 3 --breakdown \\
        --json bench/results/embed_speed.json
    python -m bench.embed_speed quality --index IDX/acm-pool --data ../shared/data/acm-cr \\
        --out IDX/embed --json bench/results/embed_quality.json
    python -m bench.embed_speed first-answer --index IDX/acm-pool --out IDX/embed --rounds 5 \\
        --json bench/results/embed_first_answer.json

`speed` embeds the first N texts of an index (paper title + abstract, as a build embeds them) with every
variant in one process, in passes that interleave the variants chunk by chunk, so that a shared machine's load
falls on all of them alike; it reports each variant's median texts/s over the passes and the load average after
each pass. Variants: PyTorch (sentence-transformers) as builds ran before (chunks of 256 texts in corpus order,
batches of 32 sorted within the chunk), PyTorch on length-sorted chunks (--sorted-torch), and ONNX Runtime
with float32 and int8 weights on chunks as `embed_with_cache` now cuts them (longest texts first). The
breakdown (--breakdown; PyTorch as before): tokenisation, the model, the share of padded token slots in the
batches (work spent on padding) before and after length sorting, and the embedding cache's SQLite I/O.

`quality` builds the index's papers again with each ONNX runtime under --out (embeddings cached there, so a
second run re-embeds nothing) and compares nDCG@10 of `dense`, `hybrid` and the default pipeline with the
--index itself (PyTorch vectors) on the ACM-CR query files in --data (paragraphs, sentences, paper level), with
the paired difference per query and the cosine of each paper's vector to its PyTorch vector.

`first-answer` times a fresh process's first answer (imports, loading, one query) on the PyTorch index and on
the ONNX Runtime indexes `quality` built, alternating, and notes whether PyTorch was imported.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import machine
from bench.paths import need, write_json
from recommender.config import METHODS
from recommender.embedding.cache import CHUNK_SIZE, EmbeddingCache, text_key
from recommender.embedding.encoders import DEFAULT_MAX_TOKENS, encoder_name, get_encoder
from recommender.evaluation.metrics import ndcg_at
from recommender.evaluation.queries import queries_from_file
from recommender.pipeline.recommender import Recommender
from recommender.store.index import Index
from recommender.store.build import build_index

FILES = {"paragraphs (local)": "queries.jsonl.gz", "sentences (local)": "queries_sentences.jsonl.gz",
         "paper-level (global)": "queries_paper_level.jsonl.gz"}
QUALITY_METHODS = ("dense", "hybrid", "full")
ONNX_RUNTIMES = ("onnx-int8", "onnx-fp32")


def corpus_texts(index_dir: Path, limit: int = 0) -> list[str]:
    index = Index.load(index_dir, verify=False)
    try:
        texts = [p.text for p in index.all_papers()]
    finally:
        index.close()
    return texts[:limit] if limit else texts


# -- speed ---------------------------------------------------------------------------------------------------
def work_units(texts: list[str], length_sorted: bool) -> list[list[str]]:
    """The chunks of CHUNK_SIZE texts a build hands the encoder: in corpus order (before), or longest first
    (`embed_with_cache` now)."""
    ordered = sorted(texts, key=len, reverse=True) if length_sorted else texts
    return [ordered[i:i + CHUNK_SIZE] for i in range(0, len(ordered), CHUNK_SIZE)]


def variants(max_tokens: int, sorted_torch: bool, runtimes: list[str]) -> dict:
    """name -> (encoder, length-sorted chunks?)"""
    torch = get_encoder("sbert", max_tokens, "torch")
    out = {"torch, corpus order (before)": (torch, False)}
    if sorted_torch:
        out["torch, length-sorted"] = (torch, True)
    for runtime in runtimes:
        out[f"{runtime}, length-sorted"] = (get_encoder("sbert", max_tokens, runtime), True)
    return out


def padding_share(lengths: list[int], batch: int, chunk_sorted_by: list[int] | None) -> float:
    """Share of token slots that are padding when chunks of CHUNK_SIZE are cut into batches padded to their
    longest text. `chunk_sorted_by`: the order inside each chunk (sentence-transformers sorts by characters);
    None: the lengths are already in order."""
    real = padded = 0
    for start in range(0, len(lengths), CHUNK_SIZE):
        chunk = lengths[start:start + CHUNK_SIZE]
        if chunk_sorted_by is not None:
            keys = chunk_sorted_by[start:start + CHUNK_SIZE]
            chunk = [chunk[i] for i in sorted(range(len(chunk)), key=lambda i: -keys[i])]
        for b in range(0, len(chunk), batch):
            part = chunk[b:b + batch]
            real += sum(part)
            padded += max(part) * len(part)
    return 1.0 - real / padded


def breakdown(texts: list[str], max_tokens: int) -> dict:
    """Where PyTorch embedding time goes besides the model: tokenisation, padding, the cache's SQLite I/O; and
    ONNX Runtime's tokenisation. (`speed` adds PyTorch's total time once it is measured.)"""
    torch = get_encoder("sbert", max_tokens, "torch")
    started = time.perf_counter()
    token_counts = []
    for start in range(0, len(texts), CHUNK_SIZE):
        features = torch.model.tokenize(texts[start:start + CHUNK_SIZE])
        token_counts.extend(features["attention_mask"].sum(dim=1).tolist())
    tokenise = time.perf_counter() - started
    onnx = get_encoder("sbert", max_tokens, ONNX_RUNTIMES[0])
    started = time.perf_counter()
    for start in range(0, len(texts), CHUNK_SIZE):
        onnx.tokenizer.encode_batch(texts[start:start + CHUNK_SIZE])
    onnx_tokenise = time.perf_counter() - started
    vectors = np.random.default_rng(0).standard_normal((len(texts), torch.dim)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "cache.sqlite")
        keys = [text_key(torch.name, t) for t in texts]
        started = time.perf_counter()
        for start in range(0, len(texts), CHUNK_SIZE):
            cache.put_many(dict(zip(keys[start:start + CHUNK_SIZE], vectors[start:start + CHUNK_SIZE])))
        write = time.perf_counter() - started
        started = time.perf_counter()
        cache.get_many(keys)
        read = time.perf_counter() - started
        cache.close()
    by_length = sorted(token_counts, reverse=True)
    return {"texts": len(texts), "seconds_torch_tokenise": tokenise, "seconds_onnx_tokenise": onnx_tokenise,
            "seconds_cache_write": write, "seconds_cache_read": read,
            "mean_tokens": float(np.mean(token_counts)),
            "share_at_max_tokens": float(np.mean(np.asarray(token_counts) >= max_tokens)),
            "padding_share_before": padding_share(token_counts, 32, [len(t) for t in texts]),
            "padding_share_length_sorted": padding_share(by_length, 64, None)}


def speed(args) -> dict:
    """Each pass embeds all texts with every variant, chunk by chunk: chunk i of every variant runs before chunk
    i + 1 of any (in an order that rotates), so a shared machine's changing load falls on all variants alike.
    The report is written after every pass (a long run on a busy machine keeps what it measured)."""
    texts = corpus_texts(args.index, args.texts)
    runs = variants(args.max_tokens, args.sorted_torch, args.runtimes)
    units = {name: work_units(texts, ordered) for name, (_, ordered) in runs.items()}
    names = list(runs)
    sample = texts[:64]
    reference = runs[names[0]][0].encode(sample)
    report = {"texts": len(texts), "passes": 0, "load_average_after_each_pass": [], "variants": {}}
    for name, (encoder, _) in runs.items():  # warm-up (exports the ONNX models on first use) and agreement
        cosines = np.sum(encoder.encode(sample) * reference, axis=1)
        report["variants"][name] = {"cosine_to_torch_first_64": {"min": float(cosines.min()),
                                                                 "mean": float(cosines.mean())}, "texts_per_s": []}
    if args.breakdown:
        report["breakdown"] = breakdown(texts, args.max_tokens)
    for pass_no in range(args.rounds):
        seconds = dict.fromkeys(names, 0.0)
        for i in range(len(units[names[0]])):
            shift = (i + pass_no) % len(names)
            for name in names[shift:] + names[:shift]:
                started = time.perf_counter()
                runs[name][0].encode(units[name][i])
                seconds[name] += time.perf_counter() - started
        report["passes"] = pass_no + 1
        report["load_average_after_each_pass"].append(os.getloadavg())
        for name in names:
            report["variants"][name]["texts_per_s"].append(len(texts) / seconds[name])
        base = statistics.median(report["variants"][names[0]]["texts_per_s"])
        for name in names:
            rates = report["variants"][name]
            rates["texts_per_s_median"] = statistics.median(rates["texts_per_s"])
            rates["speedup"] = rates["texts_per_s_median"] / base
        if args.breakdown:
            report["breakdown"]["seconds_torch_total"] = len(texts) / base
            report["breakdown"]["seconds_torch_model_and_pooling"] = (
                len(texts) / base - report["breakdown"]["seconds_torch_tokenise"])
        print(f"pass {pass_no + 1} (load {os.getloadavg()[0]:.1f}): " +
              ", ".join(f"{name} {seconds[name]:.0f} s, {len(texts) / seconds[name]:.1f}/s" for name in names),
              flush=True)
        if args.json:
            args.json.write_text(json.dumps({**report, "part": "speed", "date": time.strftime("%Y-%m-%d")}, indent=1),
                                 encoding="utf-8")
    return report


# -- quality -------------------------------------------------------------------------------------------------
def variant_index(source: Path, out: Path, runtime: str, max_tokens: int) -> tuple[Path, float]:
    """The source index's papers indexed with `runtime` under out/runtime (reused when it exists)."""
    root = out / runtime
    index = Index.load(source, verify=False)
    try:
        papers = index.all_papers()
    finally:
        index.close()
    started = time.perf_counter()
    if not (root / "CURRENT").exists():
        build_index(papers, root, max_tokens=max_tokens, runtime=runtime, source={"copy_of": str(source)})
    return root, time.perf_counter() - started


def per_query_ndcg(recommender: Recommender, queries, method: str) -> np.ndarray:
    config = METHODS[method]
    out = []
    for item in queries:
        ranking = recommender.rank(item.query, config, k=10)
        out.append(ndcg_at([recommender.index.ids[p] for p in ranking.positions], item.relevant, 10))
    return np.asarray(out)


def quality(args) -> dict:
    roots = {"torch": (args.index, None)}
    for runtime in args.runtimes:
        roots[runtime] = variant_index(args.index, args.out, runtime, args.max_tokens)
    recommenders = {runtime: Recommender.load(root) for runtime, (root, _) in roots.items()}
    torch_vectors = np.asarray(recommenders["torch"].index.dense, dtype=np.float32)
    report = {"index": str(args.index), "papers": len(torch_vectors), "indexes": {}, "sets": {}}
    for runtime, (root, seconds) in roots.items():
        rec = recommenders[runtime]
        cosines = np.sum(np.asarray(rec.index.dense, dtype=np.float32) * torch_vectors, axis=1)
        report["indexes"][runtime] = {"root": str(root), "encoder": rec.index.manifest["model"],
                                      "build_seconds": seconds, "cosine_to_torch_min": float(cosines.min()),
                                      "cosine_to_torch_mean": float(cosines.mean())}
        print(f"{runtime}: {rec.index.manifest['model']}, cosine to torch vectors min {cosines.min():.4f} "
              f"mean {cosines.mean():.5f}", flush=True)
    ids = set(recommenders["torch"].index.ids)
    for set_name, file in FILES.items():
        if not (args.data / file).is_file():
            continue
        queries = queries_from_file(args.data / file, ids)
        rows = {}
        for method in QUALITY_METHODS:
            scores = {runtime: per_query_ndcg(rec, queries, method) for runtime, rec in recommenders.items()}
            rows[method] = {runtime: {"ndcg@10": float(s.mean()),
                                      "delta": float((s - scores["torch"]).mean()),
                                      "queries_changed": int(np.count_nonzero(np.abs(s - scores["torch"]) > 1e-9))}
                            for runtime, s in scores.items()}
            print(f"{set_name} ({len(queries)}), {method}: " + ", ".join(
                f"{r} {v['ndcg@10']:.4f} ({v['delta']:+.4f})" for r, v in rows[method].items()), flush=True)
        report["sets"][set_name] = {"queries": len(queries), "methods": rows}
    return report


# -- first answer --------------------------------------------------------------------------------------------
FIRST_ANSWER = """
import json, sys, time
started = float(sys.argv[1])
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
recommender = Recommender.load(sys.argv[2])
loaded = time.time()
answer = recommender.recommend(Query(title=sys.argv[3], abstract=sys.argv[4]))
assert answer.recommendations, "the first query found nothing"
print(json.dumps({"first_answer_s": time.time() - started, "load_s": loaded - started,
                  "torch_imported": "torch" in sys.modules, "encoder": recommender.encoder.name}))
"""


def first_answer(args) -> dict:
    """A fresh process's first answer (imports, `Recommender.load`, one global query), on the PyTorch index and
    on the ONNX Runtime ones under --out, alternating, as the app's first query after a start."""
    roots = {"torch": args.index, **{r: args.out / r for r in args.runtimes if (args.out / r / "CURRENT").exists()}}
    index = Index.load(args.index, verify=False)
    paper = index.papers([0])[0]
    index.close()
    times: dict[str, list[dict]] = {name: [] for name in roots}
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for round_no in range(args.rounds):
        for name in (list(roots) if round_no % 2 == 0 else list(reversed(roots))):
            command = [sys.executable, "-c", FIRST_ANSWER, repr(time.time()), str(roots[name]), paper.title,
                       paper.abstract]
            done = subprocess.run(command, cwd=Path(__file__).resolve().parents[1], env=env, capture_output=True,
                                  text=True, check=True)
            times[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"round {round_no + 1}: {name}: {times[name][-1]} (load {os.getloadavg()[0]:.1f})", flush=True)
    return {name: {"first_answer_s_median": statistics.median(t["first_answer_s"] for t in runs),
                   "load_s_median": statistics.median(t["load_s"] for t in runs),
                   "torch_imported": runs[0]["torch_imported"], "encoder": runs[0]["encoder"], "runs": runs}
            for name, runs in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("speed", "quality", "first-answer"))
    parser.add_argument("--index", type=Path, required=True, help="an index built with the PyTorch encoder")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    parser.add_argument("--texts", type=int, default=5000, help="speed: the first N texts of the index")
    parser.add_argument("--rounds", type=int, default=3, help="speed: passes over all texts; first-answer: rounds")
    parser.add_argument("--breakdown", action="store_true", help="speed: also where PyTorch's time goes")
    parser.add_argument("--sorted-torch", action="store_true", help="speed: also PyTorch on length-sorted chunks")
    parser.add_argument("--data", type=Path, help="quality: directory with the ACM-CR query files")
    parser.add_argument("--out", type=Path, help="quality: where the ONNX runtimes' indexes are built")
    parser.add_argument("--runtimes", nargs="+", choices=ONNX_RUNTIMES, default=list(ONNX_RUNTIMES),
                        help="the ONNX runtimes compared with PyTorch")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.part == "quality" and not (args.data and args.out):
        parser.error("quality needs --data and --out")
    if args.part == "first-answer" and not args.out:
        parser.error("first-answer needs --out (where `quality` built the ONNX Runtime indexes)")
    need(parser, args.index, "--index", "DIR (an index built with the PyTorch encoder)")
    if args.part == "quality":
        need(parser, args.data, "--data", "DIR (the ACM-CR folder of the shared data)")
    if args.part == "first-answer":
        need(parser, args.out, "--out", "DIR (where `quality` built the ONNX Runtime indexes)")
    index = Index.load(args.index, verify=False)
    built_with = index.manifest["model"]
    index.close()
    if built_with != encoder_name(args.max_tokens, "torch"):
        parser.error(f"{args.index} was built with {built_with}, not the PyTorch encoder")
    report = {"speed": speed, "quality": quality, "first-answer": first_answer}[args.part](args)
    report.update({"date": time.strftime("%Y-%m-%d"), "machine": machine.line(), "part": args.part})
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
