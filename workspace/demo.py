"""The built-in demo corpus: indexed on first use, reused afterwards.

Its embeddings ship in assets/demo_embeddings.npz and seed the index's embedding cache, so the
first start only loads the models and builds the small indexes. `python -m workspace.demo`
rebuilds the demo index and rewrites that file after the corpus changes.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np

from recommender.embedding.cache import EmbeddingCache, text_key
from recommender.embedding.encoders import DEFAULT_MAX_TOKENS, DEFAULT_RUNTIME, encoder_name, get_encoder
from recommender.paper import Paper
from recommender.store import versions
from recommender.store.gloss import WORDS_FILE as GLOSSARY
from recommender.store.build import Progress, build_index
from workspace import PROJECT_ROOT

DEMO_CORPUS = PROJECT_ROOT / "assets" / "demo_corpus.jsonl"
DEMO_EMBEDDINGS = PROJECT_ROOT / "assets" / "demo_embeddings.npz"
ENCODERS = ("sbert", "multilingual")
RUNTIME = DEFAULT_RUNTIME  # the English encoder of the shipped vectors (ONNX int8: queries need no PyTorch)


def demo_index_dir() -> Path:
    """Where the demo index lives: $CITREC_DEMO_INDEX, else .index/demo in the project."""
    return Path(os.environ.get("CITREC_DEMO_INDEX") or PROJECT_ROOT / ".index" / "demo")


def demo_papers() -> list[Paper]:
    with open(DEMO_CORPUS, encoding="utf-8") as handle:
        return [Paper.from_dict(json.loads(line)) for line in handle if line.strip()]


def _cache(root: Path) -> EmbeddingCache:
    return EmbeddingCache(versions.embedding_cache_path(root))


def _seed_cache(root: Path) -> None:
    if not DEMO_EMBEDDINGS.is_file():
        return
    stored = np.load(DEMO_EMBEDDINGS)
    cache = _cache(root)
    try:
        for kind in ENCODERS:
            cache.put_many(dict(zip(stored[f"{kind}_keys"].tolist(), stored[f"{kind}_vectors"])))
    finally:
        cache.close()


def ensure_demo_index(on_progress: Progress | None = None) -> Path:
    """Build the demo index unless a sound one for the current corpus file already exists."""
    root = demo_index_dir()
    checksum = versions.sha256_of(DEMO_CORPUS)
    try:
        version = versions.current_version(root)
        manifest = versions.read_manifest(version, verify=True)
        if manifest.get("source", {}).get("sha256") == checksum and (version / GLOSSARY).is_file() and \
                manifest.get("model") == encoder_name(DEFAULT_MAX_TOKENS, RUNTIME):
            return root  # (an index built before glossaries, or with another encoder, is rebuilt)
    except versions.IndexDirectoryError:
        pass
    _seed_cache(root)
    build_index(demo_papers(), root, multilingual=True, on_progress=on_progress, progress_bar=False,
                source={"file": DEMO_CORPUS.name, "sha256": checksum}, runtime=RUNTIME)
    return root


class DemoIndex:
    """The demo index of a server process: checked (and built if needed) once, by the first session.

    The build runs outside any cached function, so the progress bar it draws belongs to the session that
    triggered it; sessions arriving meanwhile wait on the lock and then reuse the directory.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.directory: str | None = None

    def ensure(self, on_progress: Progress | None) -> str:
        with self.lock:
            if self.directory is None:
                self.directory = str(ensure_demo_index(on_progress))
            return self.directory


def write_demo_embeddings() -> None:
    """Store the demo papers' vectors (both encoders) from the demo index's cache in the assets."""
    root = ensure_demo_index()
    texts = [p.text for p in demo_papers()]
    cache = _cache(root)
    arrays = {}
    try:
        for kind in ENCODERS:
            encoder = get_encoder(kind, DEFAULT_MAX_TOKENS, RUNTIME) if kind == "sbert" else get_encoder(kind)
            keys = sorted({text_key(encoder.name, t) for t in texts})
            found = cache.get_many(keys)
            arrays[f"{kind}_keys"] = np.array(keys)
            arrays[f"{kind}_vectors"] = np.stack([found[k] for k in keys]).astype(np.float16)
    finally:
        cache.close()
    np.savez_compressed(DEMO_EMBEDDINGS, **arrays)


if __name__ == "__main__":
    write_demo_embeddings()
    print(f"wrote {DEMO_EMBEDDINGS}")
