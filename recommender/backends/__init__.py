"""Where candidates come from: the in-process engine (default) or Milvus, chosen by a URI (`open_backend`)."""
from __future__ import annotations

from recommender.backends.base import Backend, BackendError, Filters, Scores

IN_PROCESS = ("", "in-process", "inprocess")


def open_backend(uri: str | None, index, dense: dict, head=None) -> Backend:
    """The backend a URI names over an open index: None or "in-process" for the index's own BM25 and `dense`
    retrievers (`retrieve.dense_retrievers`), `milvus:PATH.db` or `milvus://host:port` for Milvus (`milvus.py`;
    `head`: the trained encoder head the recommender uses, if any). A bad URI is a ValueError; a Milvus that
    cannot serve the index a BackendError."""
    if uri is None or uri.strip() in IN_PROCESS:
        from recommender.backends.inprocess import InProcessBackend

        return InProcessBackend(index, dense)
    if uri.strip().startswith("milvus:"):
        from recommender.backends.milvus import MilvusBackend, parse_target

        return MilvusBackend(parse_target(uri), index, head)
    raise ValueError(f"unknown backend {uri!r}: use in-process, milvus:PATH.db or milvus://host:port")


__all__ = ["Backend", "BackendError", "Filters", "Scores", "open_backend"]
