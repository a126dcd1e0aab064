"""Embeddings keyed by model and text in SQLite, so that rebuilds and resumed builds re-embed only what is new."""
from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from tqdm.auto import tqdm

CHUNK_SIZE = 256


def text_key(model_name: str, text: str) -> str:
    return hashlib.sha1(f"{model_name}\x00{text}".encode("utf-8")).hexdigest()


class EmbeddingCache:
    """A table of (key, float32 vector). Each chunk is committed on its own, so an interrupted run keeps its work."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        keys = list(keys)
        for start in range(0, len(keys), 900):
            batch = keys[start:start + 900]
            marks = ",".join("?" * len(batch))
            for key, blob in self.db.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", batch):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def missing(self, keys: set[str]) -> set[str]:
        """The keys that have no vector yet."""
        found: set[str] = set()
        keys = list(keys)
        for start in range(0, len(keys), 900):
            batch = keys[start:start + 900]
            found.update(key for (key,) in self.db.execute(
                f"SELECT key FROM emb WHERE key IN ({','.join('?' * len(batch))})", batch))
        return set(keys) - found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)",
                                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()])

    def close(self) -> None:
        self.db.close()


def embed_with_cache(texts: list[str], encoder, cache: EmbeddingCache, *, desc: str = "embedding",
                     progress: bool = True, on_chunk: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Embed `texts`, reading cached vectors and saving each new chunk as soon as it is done.

    `on_chunk(done, total)` is called after every chunk (for UI progress bars). Texts are embedded longest
    first, so that each batch holds texts of about one length and pads little.
    """
    keys = [text_key(encoder.name, t) for t in texts]
    vectors = cache.get_many(set(keys))
    missing = sorted({k: i for i, k in enumerate(keys) if k not in vectors}.values(), key=lambda i: -len(texts[i]))
    total = len(missing)
    with tqdm(total=total, desc=desc, unit="doc", disable=not progress or total == 0) as bar:
        for start in range(0, total, CHUNK_SIZE):
            idx = missing[start:start + CHUNK_SIZE]
            encoded = encoder.encode([texts[i] for i in idx])
            fresh = {keys[i]: vec for i, vec in zip(idx, encoded)}
            cache.put_many(fresh)
            vectors.update(fresh)
            bar.update(len(idx))
            if on_chunk:
                on_chunk(start + len(idx), total)
    if not texts:
        return np.zeros((0, encoder.dim), dtype=np.float32)
    return np.stack([vectors[k] for k in keys]).astype(np.float32)
