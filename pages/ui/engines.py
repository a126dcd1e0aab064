"""The engine objects of a corpus (index, recommender, reviewers), loaded once per corpus version and shared by
every session of the server process (st.cache_resource); `workspace.engine_caches.release` frees them."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from pages.ui.active_index import active_index_dir, demo_index
from recommender.backends import BackendError
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.review.abstract import AbstractReviewer
from recommender.review.document import DocumentReviewer
from recommender.store.index import Index
from workspace import engine_caches


def version_of(directory: str) -> str:
    return (Path(directory) / "CURRENT").read_text(encoding="utf-8").strip()


@st.cache_resource(show_spinner=False, max_entries=8)
def _index(directory: str, version: str) -> Index:
    return Index.load(directory)


def backend_of(directory: str) -> str | None:
    """$CITREC_BACKEND (milvus:PATH.db, milvus://host:port) for the default corpus ($CITREC_INDEX, else the demo);
    None (search in process) for the corpora imported here."""
    backend = os.environ.get("CITREC_BACKEND")
    if not backend:
        return None
    default = os.environ.get("CITREC_INDEX") or demo_index().directory
    return backend if default and Path(directory).resolve() == Path(default).resolve() else None


@st.cache_resource(show_spinner="Loading the language model (first start only)…", max_entries=8)
def _recommender(directory: str, version: str) -> Recommender:
    recommender = Recommender.from_index(_index(directory, version), backend_of(directory))
    recommender.recommend(Query(title="warm-up"))  # first calls of the models are slow: pay them now
    if recommender.index.multilingual is not None:  # the multilingual encoder and the Chinese word segmenter
        recommender.recommend(Query(context="基于深度学习的引文推荐 [CIT]"))
    return recommender


@st.cache_resource(show_spinner=False, max_entries=8)
def _reviewer(directory: str, version: str) -> AbstractReviewer:
    return AbstractReviewer(_recommender(directory, version))


@st.cache_resource(show_spinner=False, max_entries=8)
def _document_reviewer(directory: str, version: str) -> DocumentReviewer:
    return DocumentReviewer(_recommender(directory, version), references=_reviewer(directory, version).references)


def _forget(directory: str | Path) -> None:
    """Forget the cached engine objects of every version of a corpus on disk."""
    versions = Path(directory) / "versions"
    for version in (versions.iterdir() if versions.is_dir() else []):
        for cached in (_document_reviewer, _reviewer, _recommender, _index):
            cached.clear(str(directory), version.name)


engine_caches.register(_forget)


def index(directory: str | None = None) -> Index:
    directory = directory or active_index_dir()
    return _index(directory, version_of(directory))


def show_backend_fault(exc: BackendError) -> None:
    """What the page says when the search backend ($CITREC_BACKEND) is down, missing or built for another index."""
    st.error(f"The search backend cannot answer: {exc}", icon=":material/cloud_off:")


def _engine(make, directory: str | None):
    """An engine object of the corpus; when its search backend cannot serve it, the page says why and stops."""
    directory = directory or active_index_dir()
    try:
        return make(directory, version_of(directory))
    except BackendError as exc:
        show_backend_fault(exc)
        st.stop()


def recommender(directory: str | None = None) -> Recommender:
    return _engine(_recommender, directory)


def reviewer(directory: str | None = None) -> AbstractReviewer:
    return _engine(_reviewer, directory)


def document_reviewer(directory: str | None = None) -> DocumentReviewer:
    return _engine(_document_reviewer, directory)
