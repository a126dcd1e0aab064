"""The built-in demo corpus: indexed on first use, reused afterwards."""
from __future__ import annotations

import json
import os
from pathlib import Path

from . import index_files
from .index import Progress, build_index
from .paper import Paper

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEMO_CORPUS = PROJECT_ROOT / "assets" / "demo_corpus.jsonl"


def demo_index_dir() -> Path:
    """Where the demo index lives: $CITREC_DEMO_INDEX, else .index/demo in the project."""
    return Path(os.environ.get("CITREC_DEMO_INDEX") or PROJECT_ROOT / ".index" / "demo")


def demo_papers() -> list[Paper]:
    with open(DEMO_CORPUS, encoding="utf-8") as handle:
        return [Paper.from_dict(json.loads(line)) for line in handle if line.strip()]


def ensure_demo_index(on_progress: Progress | None = None) -> Path:
    """Build the demo index unless a sound one for the current corpus file already exists."""
    root = demo_index_dir()
    checksum = index_files.sha256_of(DEMO_CORPUS)
    try:
        manifest = index_files.read_manifest(index_files.current_version(root), verify=True)
        if manifest.get("source", {}).get("sha256") == checksum:
            return root
    except index_files.IndexError_:
        pass
    build_index(demo_papers(), root, multilingual=True, on_progress=on_progress, progress_bar=False,
                source={"file": DEMO_CORPUS.name, "sha256": checksum})
    return root
