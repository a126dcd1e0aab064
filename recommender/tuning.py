"""A citation-tuned encoder: a residual head on top of all-MiniLM-L6-v2, trained on the index's citation graph.

The head maps a MiniLM vector x to unit(x + W2 relu(W1 x + b1) + b2). It is trained Citeomatic-style on
(citing paper, cited paper) pairs of the training papers: each pair's cited paper must beat, under a softmax
over cosines, the other cited papers of the batch and one hard negative per pair, a paper cited by the cited
paper but not by the citing one (distance 2 in the graph). The transformer stays frozen, so the tuned vector of
every corpus paper is its stored MiniLM vector passed through the head: re-embedding the corpus takes a
matrix product instead of an encoder pass, and a query costs one extra small product.

Storage: `<index root>/learned/encoder_head.npz` (weights plus a JSON header of training facts), written to a
temporary file and renamed into place.
"""
from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from .reranker import LEARNED_DIR, LearnedModelError

HEAD_FILE = "encoder_head.npz"
HIDDEN = 1024
EPOCHS = 1  # on hep-th dev a second epoch raised dense R@100 further but cost MRR
BATCH = 256
LEARNING_RATE = 1e-3
MIN_PAIRS = 20
SCALE = 20.0  # softmax temperature over cosines (as sentence-transformers' MultipleNegativesRankingLoss)


def head_path(root: Path | str) -> Path:
    return Path(root) / LEARNED_DIR / HEAD_FILE


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


def save_head(root: Path | str, head: EncoderHead) -> Path:
    path = head_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex[:6]}.tmp.npz")
    try:
        np.savez(tmp, w1=head.w1, b1=head.b1, w2=head.w2, b2=head.b2, info=np.array(json.dumps(head.info)))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
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
        raise LearnedModelError(f"{path}: unreadable encoder head ({exc}); retrain it with "
                                f"`python -m recommender train --index {root}`.") from exc
    if head.w1.shape[0] != dim or head.w2.shape[1] != dim:
        raise LearnedModelError(f"{path}: the head expects {head.w1.shape[0]}-dimensional vectors, the index has "
                                f"{dim}; retrain it with `python -m recommender train --index {root}`.")
    return head


def citation_pairs(graph, positions: list[int]) -> np.ndarray:
    """(citing, cited) rows for every in-corpus reference of the given papers."""
    rows = [(q, int(c)) for q in positions for c in graph.references_of(q) if c != q]
    return np.asarray(rows, dtype=np.int64).reshape(-1, 2)


def _hard_negatives(graph, pairs: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Per pair: a paper the cited paper cites but the citing one does not (else a random paper)."""
    out = rng.integers(0, n, size=len(pairs))
    for i, (q, c) in enumerate(pairs):
        refs = graph.references_of(int(c))
        if len(refs):
            pick = int(refs[rng.integers(len(refs))])
            if pick != q and not graph.cites[q, pick]:
                out[i] = pick
    return out


def train_head(vectors: np.ndarray, graph, positions: list[int], *, epochs: int = EPOCHS, hidden: int = HIDDEN,
               batch: int = BATCH, lr: float = LEARNING_RATE, seed: int = 0, progress: bool = True) -> EncoderHead:
    """Fit the head on the citations of the papers at `positions` (their stored MiniLM `vectors`)."""
    import torch

    started = time.time()
    pairs = citation_pairs(graph, positions)
    if len(pairs) < MIN_PAIRS:
        raise ValueError(f"only {len(pairs)} citation pairs among the training papers: too few to tune the encoder")
    batch = min(batch, len(pairs))
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    base = torch.from_numpy(np.array(vectors, dtype=np.float32))
    dim = base.shape[1]
    up, down = torch.nn.Linear(dim, hidden), torch.nn.Linear(hidden, dim)
    torch.nn.init.zeros_(down.weight)  # starts as the identity: the untuned encoder
    torch.nn.init.zeros_(down.bias)
    optimizer = torch.optim.Adam([*up.parameters(), *down.parameters()], lr=lr)

    def tuned(rows):
        x = base[rows]
        return torch.nn.functional.normalize(x + down(torch.relu(up(x))), dim=1)

    steps = epochs * ((len(pairs) + batch - 1) // batch)
    loss_value = float("nan")
    with tqdm(total=steps, desc="tuning the encoder", disable=not progress) as bar:
        for _ in range(epochs):
            order = rng.permutation(len(pairs))
            for start in range(0, len(order), batch):
                chunk = pairs[order[start:start + batch]]
                negatives = _hard_negatives(graph, chunk, len(base), rng)
                query = tuned(torch.from_numpy(chunk[:, 0]))
                targets = tuned(torch.from_numpy(np.concatenate([chunk[:, 1], negatives])))
                loss = torch.nn.functional.cross_entropy(SCALE * query @ targets.T, torch.arange(len(chunk)))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                loss_value = loss.item()
                bar.update(1)
                bar.set_postfix(loss=f"{loss_value:.3f}")
    weights = [p.detach().numpy().astype(np.float32) for p in (up.weight, up.bias, down.weight, down.bias)]
    info = {"pairs": int(len(pairs)), "papers": len(positions), "epochs": epochs, "hidden": hidden, "batch": batch,
            "learning_rate": lr, "final_loss": round(loss_value, 4), "seed": seed,
            "seconds": round(time.time() - started, 1)}
    return EncoderHead(weights[0].T.copy(), weights[1], weights[2].T.copy(), weights[3], info)
