"""What an index learned from its own citations (`python -m recommender train`), as used at query time.

- `EncoderHead`: a residual head on all-MiniLM-L6-v2 that maps a vector x to unit(x + W2 relu(W1 x + b1) + b2),
  trained so that citing and cited papers lie close (`training/encoder.py`). The transformer stays frozen, so the
  tuned vector of a corpus paper is its stored vector through the head.
- `Reranker`: a model over `features.FEATURES` that reorders a candidate pool (`training/reranker.py`).
- The local reranker: a `Reranker` over `local_features.LOCAL_FEATURES` (no citation graph needed), trained on
  citation contexts (`training/local.py`), that reorders the pools of local (passage) queries.

All live in `<index root>/learned/`, beside the index versions, so they survive new versions (the features are
computed from whichever version is live). Each file is replaced atomically, so an interrupted training leaves
the old one (or none). The reranker file is one JSON header line (format, feature names, training facts,
SHA-256 and size of the payload) followed by the pickled model (LightGBM or scikit-learn). Like the rest of
an index directory, these files are trusted: load models only from indexes you built.
"""
from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recommender.pipeline.features import DESCRIPTIONS, FEATURES
from recommender.pipeline.local_features import LOCAL_DESCRIPTIONS, LOCAL_FEATURES
from recommender.store.versions import IndexDirectoryError, write_atomic

LEARNED_DIR = "learned"
MODEL_FILE = "reranker.model"
LOCAL_MODEL_FILE = "local_reranker.model"
HEAD_FILE = "encoder_head.npz"
FORMAT = 1


class LearnedModelError(IndexDirectoryError):
    """A learned model that is missing, damaged, or made for other features."""


def model_path(root: Path | str, local: bool = False) -> Path:
    """The reranker file of an index: the graph-trained one, or the `local` one (trained on citation contexts)."""
    return Path(root) / LEARNED_DIR / (LOCAL_MODEL_FILE if local else MODEL_FILE)


def head_path(root: Path | str) -> Path:
    return Path(root) / LEARNED_DIR / HEAD_FILE


def not_trained(root: Path | str, what: str) -> LearnedModelError:
    """The error for a method that needs a learned part (`what`) the index does not have."""
    return LearnedModelError(f"{root} has no {what}; train one with `python -m recommender train --index {root}`.")


def _retrain(root: Path | str, local: bool = False) -> str:
    return f"retrain it with `python -m recommender train --index {root}{' --contexts FILE' if local else ''}`"


@dataclass
class EncoderHead:
    """The trained residual head; `apply` turns MiniLM vectors into tuned unit vectors."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    info: dict = field(default_factory=dict)

    def apply(self, vectors: np.ndarray, chunk: int = 65536) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        out = np.empty_like(vectors)
        for start in range(0, len(vectors), chunk):
            x = vectors[start:start + chunk]
            y = x + np.maximum(x @ self.w1 + self.b1, 0.0) @ self.w2 + self.b2
            out[start:start + chunk] = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
        return out


@dataclass
class Reranker:
    """A fitted model, the feature names it expects, and facts about its training."""

    model: object
    features: tuple[str, ...] = FEATURES
    info: dict = field(default_factory=dict)
    layout: tuple[str, ...] | None = None  # the columns of the matrices it is given (None: its `features`); a model
                                           # trained before features were added reads its own columns of the new ones

    def columns(self, matrix: np.ndarray) -> np.ndarray:
        """The model's `features` columns of a `layout` matrix (or row)."""
        if self.layout is None or tuple(self.layout) == tuple(self.features):
            return matrix
        return matrix[..., [self.layout.index(name) for name in self.features]]

    def score(self, matrix: np.ndarray) -> np.ndarray:
        """One score in [0, 1] per row of a `layout` matrix: a classifier's probability of being cited, or a
        ranker's score through a logistic squash (same order; not a probability)."""
        matrix = self.columns(matrix)
        if hasattr(self.model, "predict_proba"):
            return self.model.predict_proba(matrix)[:, 1].astype(np.float32)
        return (1.0 / (1.0 + np.exp(-self.model.predict(matrix)))).astype(np.float32)

    def drivers(self, row: np.ndarray, top: int = 2) -> list[str]:
        """Readable names of the evidence that lifted one candidate most, for explanations: a simple
        attribution that ranks features by (value - training mean) / spread, signed by whether cited papers
        have higher values than non-cited ones and weighted by how far the two classes lie apart."""
        means = np.asarray(self.info.get("feature_means") or np.zeros(len(self.features)), dtype=np.float64)
        scales = np.asarray(self.info.get("feature_scales") or np.ones(len(self.features)), dtype=np.float64)
        signs = np.asarray(self.info.get("feature_signs") or np.ones(len(self.features)), dtype=np.float64)
        weights = np.asarray(self.info.get("feature_importance") or np.ones(len(self.features)), dtype=np.float64)
        row = self.columns(row)
        with np.errstate(invalid="ignore"):
            lift = np.nan_to_num(signs * weights * (row - means) / np.where(scales > 0, scales, 1.0))
        names = []
        for i in np.argsort(-lift):
            text = DESCRIPTIONS.get(self.features[i]) or LOCAL_DESCRIPTIONS[self.features[i]]
            if lift[i] > 0 and text not in names:
                names.append(text)
            if len(names) == top:
                break
        return names


# -- the encoder head -------------------------------------------------------------------------------------
def save_head(root: Path | str, head: EncoderHead) -> Path:
    """Write the head atomically under `<root>/learned/` and return its path."""
    path = head_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda handle: np.savez(handle, w1=head.w1, b1=head.b1, w2=head.w2, b2=head.b2,
                                                 info=np.array(json.dumps(head.info))))
    return path


def load_head(root: Path | str, dim: int) -> EncoderHead | None:
    """The index's tuned head, or None when none was trained; a damaged or mismatched file is an error."""
    path = head_path(root)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            head = EncoderHead(data["w1"], data["b1"], data["w2"], data["b2"], json.loads(str(data["info"])))
    except (OSError, ValueError, KeyError) as exc:
        raise LearnedModelError(f"{path}: unreadable encoder head ({exc}); {_retrain(root)}.") from exc
    if head.w1.shape[0] != dim or head.w2.shape[1] != dim:
        raise LearnedModelError(f"{path}: the head expects {head.w1.shape[0]}-dimensional vectors, the index has "
                                f"{dim}; {_retrain(root)}.")
    return head


# -- the reranker -----------------------------------------------------------------------------------------
def save_reranker(root: Path | str, reranker: Reranker, local: bool = False) -> Path:
    """Write the model (the `local` one: trained on citation contexts) atomically under `<root>/learned/` and
    return its path."""
    path = model_path(root, local)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = pickle.dumps(reranker.model, protocol=pickle.HIGHEST_PROTOCOL)
    header = {"format": FORMAT, "features": list(reranker.features), "info": reranker.info,
              "sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload)}
    write_atomic(path, json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n" + payload)
    return path


def _read_model_file(path: Path) -> tuple[dict, bytes]:
    """The JSON header line and the payload of a model file (ValueError when the header is not JSON)."""
    head, _, payload = path.read_bytes().partition(b"\n")
    return json.loads(head.decode("utf-8")), payload


def load_reranker(root: Path | str, local: bool = False) -> Reranker | None:
    """The learned model of an index (the `local` one: trained on citation contexts), or None when none was
    trained; LearnedModelError with the remedy when it is damaged or made for other features."""
    path, features, retrain = model_path(root, local), LOCAL_FEATURES if local else FEATURES, _retrain(root, local)
    if not path.is_file():
        return None
    try:
        header, payload = _read_model_file(path)
    except (OSError, ValueError) as exc:
        raise LearnedModelError(f"{path}: unreadable model header ({exc}); {retrain}.") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise LearnedModelError(f"{path}: model format {header.get('format') if isinstance(header, dict) else '?'} "
                                f"is not {FORMAT}; {retrain}.")
    if len(payload) != header.get("bytes") or hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise LearnedModelError(f"{path}: model file is damaged (checksum mismatch); {retrain}.")
    names = tuple(header.get("features") or ())
    if not names or not set(names) <= set(features):
        raise LearnedModelError(f"{path}: the model was trained on other features than this version computes; "
                                f"{retrain}.")
    try:
        model = pickle.loads(payload)
    except Exception as exc:  # a model pickled by an incompatible scikit-learn
        raise LearnedModelError(f"{path}: the model cannot be loaded ({exc}); {retrain}.") from exc
    return Reranker(model, names, header.get("info") or {}, layout=features)


def describe_learned(root: Path | str) -> str:
    """One line for people: what the index has learned from its citations, or how to train it."""
    parts = []
    if head_path(root).is_file():
        parts.append("a citation-tuned encoder")
    path = model_path(root)
    if path.is_file():
        try:
            info = _read_model_file(path)[0].get("info") or {}
            parts.append(f"a {info.get('model', '?')} reranker trained on {info.get('queries_used', '?')} queries "
                         f"({str(info.get('trained', '?'))[:10]})")
        except (OSError, ValueError, AttributeError):  # damaged header: loading it will say how to retrain
            parts.append("a reranker whose file cannot be read")
    local = model_path(root, local=True)
    if local.is_file():
        try:
            info = _read_model_file(local)[0].get("info") or {}
            parts.append(f"a passage reranker trained on {info.get('contexts', '?')} citation contexts "
                         f"({str(info.get('trained', '?'))[:10]})")
        except (OSError, ValueError, AttributeError):
            parts.append("a passage reranker whose file cannot be read")
    if not parts:
        return ("Ranking uses the untrained signals; `python -m recommender train --index DIR` learns an encoder "
                "and a reranker from this corpus's citation graph (`--contexts FILE`: a passage reranker from "
                "citation contexts).")
    return "Learned from this corpus's citations: " + " and ".join(parts) + "."
