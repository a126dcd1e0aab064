"""inCite's citation-tuned MiniLM (the ONNX file shipped in the `incite-app` package) as a sentence encoder with
the interface of `recommender.embedding.encoders` (`name`, `dim`, `encode`), for benchmarks: it runs on ONNX Runtime and the
`tokenizers` library (no `optimum`), with the model's own mean pooling and unit-length output.

Only the benchmarks use it (`bench/incite_peer.py`); the package is not a dependency of the app.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from recommender.embedding.encoders import usable_cores

MODEL_DIR = ("models", "minilm-onnx")  # inside the installed `incite` package
BATCH = 32


def model_dir() -> Path:
    """The folder of the ONNX model and its tokenizer inside the installed `incite` package."""
    spec = importlib.util.find_spec("incite")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the inCite encoder needs the peer package: pip install -r bench/requirements-peer.txt")
    folder = Path(list(spec.submodule_search_locations)[0]).joinpath(*MODEL_DIR)
    if not (folder / "model.onnx").is_file() or not (folder / "tokenizer.json").is_file():
        raise SystemExit(f"{folder}: model.onnx or tokenizer.json missing; reinstall incite-app")
    return folder


class InciteEncoder:
    """Mean-pooled, L2-normalised last hidden states of inCite's MiniLM, texts cut at `max_tokens` tokens."""

    def __init__(self, max_tokens: int = 128, threads: int | None = None):
        import onnxruntime
        from tokenizers import Tokenizer

        folder = model_dir()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or usable_cores()
        self.session = onnxruntime.InferenceSession(str(folder / "model.onnx"), options,
                                                    providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.name = f"incite-minilm-citation-onnx@{max_tokens}"
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (batches of similar length, so little padding)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            rows = order[start:start + BATCH]
            out[rows] = self._encode_batch([texts[i] for i in rows])
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        feed = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}
        hidden = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
        mask = feed["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
