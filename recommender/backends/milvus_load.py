"""Push an index into Milvus (`python -m recommender milvus-load --index DIR --uri milvus:./papers.db`).

The papers go into a new physical collection named after the index version and the time of the load; only when
it is complete (rows flushed, indexes built, loaded) does the collection name (an alias) switch to it and the
collection it replaces get dropped. An interrupted load leaves the previous collection serving; the next load
drops what it left behind. One load at a time per collection name.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from tqdm.auto import tqdm

from recommender.backends.base import BackendError
from recommender.backends.milvus import (CALL_TIMEOUT, EMPTY_TERMS, HNSW_BUILD, MilvusTarget, connect, dense_fields,
                                         milvus_error, properties, venue_names)

BATCH = 1000          # rows per insert call


@dataclass
class LoadReport:
    collection: str
    papers: int
    seconds: float


def physical_name(target: MilvusTarget, index) -> str:
    """The collection a load of one index version writes (the alias `target.collection` points to it when done)."""
    return f"{target.collection}__{index.version.name.replace('-', '_')}__{time.strftime('%Y%m%d_%H%M%S')}"


def schema(client, index, head):
    """The collection's fields and the index parameters of the searched fields."""
    from pymilvus import DataType

    fields = client.create_schema(auto_id=False, enable_dynamic_field=False)
    fields.add_field("pos", DataType.INT64, is_primary=True)
    fields.add_field("year", DataType.INT32)
    fields.add_field("date", DataType.INT64)
    fields.add_field("venue", DataType.INT32)
    fields.add_field("bm25", DataType.SPARSE_FLOAT_VECTOR)
    indexes = client.prepare_index_params()
    indexes.add_index(field_name="bm25", index_type="SPARSE_INVERTED_INDEX", metric_type="IP", params=build_params({}))
    for field, (_, dim) in dense_fields(index, head).items():
        fields.add_field(field, DataType.FLOAT_VECTOR, dim=dim)
        indexes.add_index(field_name=field, index_type="HNSW", metric_type="COSINE", params=build_params(HNSW_BUILD))
    return fields, indexes


def build_params(values: dict) -> dict:
    """Index build parameters in both forms servers read: pymilvus sends each key on its own, which Milvus
    servers read, while milvus-lite reads only a JSON-encoded "params" key (which servers also accept)."""
    return {**values, "params": dict(values)}


class TermWeights:
    """Each paper's BM25 weights (term id -> weight) from the index's BM25 matrix (`lexical`, its LexicalIndex),
    which holds them term by term (bm25s's CSC arrays: per term, its papers and weights): a block of papers at a
    time, about PAIRS_PER_BLOCK (paper, term) pairs, each block one pass over the matrix."""

    PAIRS_PER_BLOCK = 1 << 23

    def __init__(self, lexical):
        self.data, self.indices, self.indptr = lexical.postings()
        self.papers = lexical.documents
        self.block = max(1, int(self.PAIRS_PER_BLOCK * self.papers / max(len(self.indices), 1)))
        self.start, self.end = 0, 0
        self.terms, self.weights, self.bounds = np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(1, np.int64)

    def of(self, pos: int) -> dict[int, float]:
        """The weights of the paper at `pos` ({EMPTY_TERMS: 1.0} for a paper without terms)."""
        if not self.start <= pos < self.end:
            self._read(pos)
        first, last = self.bounds[pos - self.start], self.bounds[pos - self.start + 1]
        row = dict(zip(self.terms[first:last].tolist(), self.weights[first:last].tolist()))
        return row or {EMPTY_TERMS: 1.0}

    def _read(self, start: int) -> None:
        end = min(start + self.block, self.papers)
        at = np.flatnonzero((self.indices >= start) & (self.indices < end))
        papers = np.asarray(self.indices[at], dtype=np.int64)
        terms = np.searchsorted(self.indptr, at, side="right") - 1  # the column each pair lies in
        order = np.lexsort((terms, papers))
        papers, self.terms, self.weights = papers[order], terms[order], np.asarray(self.data[at], np.float32)[order]
        self.bounds = np.searchsorted(papers, np.arange(start, end + 1))
        self.start, self.end = start, end


def rows(index, head, venue_rank: dict[str, int], weights: TermWeights, start: int, end: int) -> list[dict]:
    """The collection rows of positions start..end-1."""
    tuned = head.apply(index.dense[start:end]) if head is not None else None
    out = []
    for pos in range(start, end):
        row = {"pos": pos, "year": int(index.years[pos]), "date": int(index.dates[pos]),
               "venue": venue_rank[index.venues[pos]], "bm25": weights.of(pos),
               "dense": np.asarray(index.dense[pos], dtype=np.float32)}
        if index.multilingual is not None:
            row["multilingual"] = np.asarray(index.multilingual[pos], dtype=np.float32)
        if tuned is not None:
            row["tuned"] = tuned[pos - start]
        out.append(row)
    return out


def load_index(index, target: MilvusTarget, head=None, *, batch: int = BATCH, segment_rows: int = 0,
               progress: bool = True, on_batch: Callable[[int, int], None] | None = None) -> LoadReport:
    """Write every paper of `index` (with `head`'s tuned vectors when given) to Milvus and point the collection
    name at it. `segment_rows` > 0 flushes after that many rows (several segments, for tests and benchmarks: the
    BM25 weights are the whole index's whatever the segments); 0 flushes once at the end (milvus-lite also flushes
    by itself, every 128 MiB of rows)."""
    from pymilvus import MilvusException

    started = time.perf_counter()
    client = connect(target, create=True)
    name = physical_name(target, index)
    try:
        if client.has_collection(target.collection) and not is_alias(client, target.collection):
            raise BackendError(f"{target} is a collection, not an alias written by milvus-load; drop it or choose "
                               "another name with ?collection=NAME")
        drop_leftovers(client, target.collection)
        fields, indexes = schema(client, index, head)
        client.create_collection(name, schema=fields, index_params=indexes, properties=properties(index, head),
                                 timeout=CALL_TIMEOUT)
        since_flush = 0
        venue_rank = {venue: i for i, venue in enumerate(venue_names(index))}
        weights = TermWeights(index.lexical)
        with tqdm(total=len(index), desc=f"loading {name}", unit="paper", disable=not progress) as bar:
            for start in range(0, len(index), batch):
                end = min(start + batch, len(index))
                chunk = rows(index, head, venue_rank, weights, start, end)
                client.insert(name, chunk, timeout=CALL_TIMEOUT)
                since_flush += len(chunk)
                if segment_rows and since_flush >= segment_rows:
                    client.flush(name)
                    since_flush = 0
                bar.update(len(chunk))
                if on_batch:
                    on_batch(end, len(index))
        client.flush(name)
        client.load_collection(name, timeout=CALL_TIMEOUT)
        switch_alias(client, target.collection, name)
    except MilvusException as exc:
        raise milvus_error(target, f"loading {index.root}", exc) from exc
    finally:
        client.close()
    return LoadReport(name, len(index), time.perf_counter() - started)


def alias_target(client, alias: str) -> str:
    """The collection an alias points to ("" when there is no such alias)."""
    if alias not in client.list_aliases().get("aliases", []):
        return ""
    return client.describe_alias(alias).get("collection_name", "") or ""


def is_alias(client, name: str) -> bool:
    return alias_target(client, name) not in ("", name)


def drop_leftovers(client, alias: str) -> None:
    """Drop the collections of earlier loads under this name that the alias does not point to (interrupted ones)."""
    live = alias_target(client, alias)
    for name in client.list_collections():
        if name.startswith(f"{alias}__") and name != live:
            client.drop_collection(name)


def switch_alias(client, alias: str, collection: str) -> None:
    """Point `alias` at `collection` and drop the collection it pointed to before (if another)."""
    previous = alias_target(client, alias)
    if previous:
        client.alter_alias(collection, alias)
    else:
        client.create_alias(collection, alias)
    if previous and previous != collection:
        client.drop_collection(previous)
