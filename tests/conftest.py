"""Shared fixtures: a small real index (real model, real files) built once per test session."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from recommender.store.index import build_index
from recommender.paper import Paper
from recommender.pipeline.recommender import Recommender

from small_corpus import small_corpus

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def corpus_records() -> list[dict]:
    return small_corpus()


@pytest.fixture(scope="session")
def corpus_file(tmp_path_factory, corpus_records) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "small.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in corpus_records) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def small_index(tmp_path_factory, corpus_records) -> Path:
    """Index directory of the small corpus, with the multilingual field; treat it as read-only."""
    root = tmp_path_factory.mktemp("index") / "small"
    build_index([Paper.from_dict(r) for r in corpus_records], root, multilingual=True, progress_bar=False)
    return root


@pytest.fixture(scope="session")
def small_recommender(small_index) -> Recommender:
    """A recommender over `small_index`, loaded once per session."""
    return Recommender.load(small_index)


@pytest.fixture
def index_copy(small_index, tmp_path) -> Path:
    """A private copy of the small index that a test may write into (a trained model, an addition)."""
    root = tmp_path / "idx"
    shutil.copytree(small_index, root)
    return root


@pytest.fixture
def app_env(small_index, tmp_path, monkeypatch) -> Path:
    """Point the web app at `small_index`, with imported corpora in a fresh folder (returned)."""
    corpora = tmp_path / "corpora"
    monkeypatch.setenv("CITREC_INDEX", str(small_index))
    monkeypatch.setenv("CITREC_CORPORA", str(corpora))
    return corpora


def shared_data(name: str) -> Path:
    """Path of a benchmark data set beside the checkout, or skip the test when it is absent."""
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(f"benchmark data {path} is not present on this machine")
    return path
