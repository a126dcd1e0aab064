"""Shared fixtures, one per resource: the small corpus, its real index (real model, real files) and a recommender
over it, each built once per test session; private copies for tests that write. Helpers that are not fixtures
live in `tests/support`."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from recommender.paper import Paper
from recommender.pipeline.recommender import Recommender
from recommender.store.build import build_index

from support.small_corpus import small_corpus


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
    """A recommender over `small_index`, loaded once per session and shared by every test that only queries it.

    A test that changes its recommender or index (trains, adds papers, sets an attribute) loads its own, from
    `index_copy` when it writes files.
    """
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

