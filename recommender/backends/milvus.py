"""Candidate retrieval on Milvus: BM25 as inner products with sparse vectors of the index's own BM25 weights, and
nearest neighbours in HNSW indexes, both filtered by Milvus on scalar fields; our own fusion combines them as for
the in-process engine.

`--backend milvus:./papers.db` opens the embedded milvus-lite (a directory ending in .db, one process at a time);
`--backend milvus://host:19530` a Milvus server (`milvus://user:password@host:19530` with authentication). Either
may end in `?collection=NAME` (default "papers"). `python -m recommender milvus-load` fills the collection.

One collection per index (NAME is an alias of the physical collection the last load wrote, so a reload switches
atomically and a failed one leaves the old in place):

    pos            INT64 primary key: the paper's position in the index, the engine's id for it
    year, date     INT32 year (0: unknown), INT64 YYYYMMDD (0: none)
    venue          INT32: the rank of the paper's venue name among the index's distinct venue names
    bm25           SPARSE_FLOAT_VECTOR, inner product: the paper's BM25 weight of each of its terms (the dimension is
                   the term's id in the index's BM25 vocabulary), read from the index's BM25 matrix: idf times the
                   term-frequency part, with the whole corpus's document frequencies and average length. A query's
                   vector holds the counts of its terms (`lexical.analyze`'s, as in process), so the inner product
                   is the in-process BM25 score however Milvus splits the collection into segments and shards.
                   (Milvus's own BM25 function, used by format 1, keeps its statistics per segment in milvus-lite,
                   which cuts 10^5 papers into three segments, and per shard on a server.)
    dense, multilingual, tuned   FLOAT_VECTOR, COSINE, HNSW: the index's vectors (tuned: through the trained head)

Paper records, the citation graph and the BM25 vocabulary and term statistics (query terms, explanations,
reranker features) stay in the index directory. The collection's properties record what it was built from; a
collection built from another index version or with other encoders is refused with a message that says so.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np

from recommender.backends.base import Backend, BackendError, Filters, Scores
from recommender.config import BM25_B, BM25_K1, BM25_STOPWORDS

DEFAULT_COLLECTION = "papers"
FORMAT = "2"
CONNECT_TIMEOUT = 10.0  # seconds to reach a server
CALL_TIMEOUT = 60.0     # seconds for one search or query
HNSW_BUILD = {"M": 16, "efConstruction": 200}
HNSW_MIN_EF = 256       # search breadth: at least this, and at least twice the neighbours asked for
MAX_LIMIT = 16384       # Milvus's largest top-k: longer id lists are asked in chunks
DENSE_FIELDS = ("dense", "multilingual", "tuned")
SPARSE_SEARCH = {"metric_type": "IP", "params": {"drop_ratio_search": 0.0}}  # every term of the query counts
EMPTY_TERMS = 2 ** 32 - 2  # the one dimension of a paper without BM25 terms (Milvus refuses an empty sparse row);
                           # no term id reaches it, so no query scores it
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")


# -- where: a milvus-lite directory or a server ----------------------------------------------------------
@dataclass(frozen=True)
class MilvusTarget:
    """A Milvus database and the collection (alias) holding one index. `uri` is what pymilvus connects to."""

    uri: str
    collection: str = DEFAULT_COLLECTION
    token: str = ""

    @property
    def embedded(self) -> bool:
        return not self.uri.startswith(("http://", "https://"))

    def __str__(self) -> str:
        where = f"milvus:{self.uri}" if self.embedded else "milvus://" + self.uri.split("://", 1)[1]
        return f"{where} (collection {self.collection!r})"


def parse_target(uri: str) -> MilvusTarget:
    """`milvus:PATH.db`, `milvus://[user:password@]host:port`, or the same without the `milvus` scheme (a path
    ending in .db, http(s)://host:port), each optionally ending in `?collection=NAME`."""
    text, _, params = uri.strip().partition("?")
    options = parse_qs(params)
    collection = options.pop("collection", [DEFAULT_COLLECTION])[-1]
    if options:
        raise ValueError(f"{uri!r}: unknown option(s) {sorted(options)}; only ?collection=NAME is understood")
    if not _NAME_RE.fullmatch(collection):
        raise ValueError(f"{collection!r} is not a Milvus collection name (letters, digits and _, not first a digit)")
    if text.startswith("milvus://") or text.startswith(("http://", "https://")):
        parts = urlsplit("http://" + text.split("://", 1)[1])
        if not parts.hostname:
            raise ValueError(f"{uri!r} names no host; write milvus://host:19530")
        scheme = "https" if text.startswith("https://") else "http"
        token = f"{parts.username or ''}:{parts.password or ''}" if parts.username else ""
        return MilvusTarget(f"{scheme}://{parts.hostname}:{parts.port or 19530}", collection, token)
    path = text[len("milvus:"):] if text.startswith("milvus:") else text
    if not path.endswith(".db"):
        raise ValueError(f"{uri!r}: a milvus-lite database is a path ending in .db (milvus:./papers.db), and a "
                         "server is milvus://host:port")
    return MilvusTarget(str(Path(path).expanduser().resolve()), collection)


def connect(target: MilvusTarget, create: bool = False):
    """A pymilvus client; a BackendError when pymilvus is missing, the database is absent (unless `create`) or
    the server does not answer."""
    try:
        from pymilvus import MilvusClient, MilvusException
    except ImportError as exc:
        raise BackendError("the Milvus backend needs pymilvus and milvus-lite (pip install -r requirements.txt)") from exc
    if target.embedded and not create and not Path(target.uri).is_dir():
        raise BackendError(f"no milvus-lite database at {target.uri}; fill one with "
                           f"`python -m recommender milvus-load --index DIR --uri milvus:{target.uri}`")
    try:
        return MilvusClient(uri=target.uri, token=target.token, timeout=CONNECT_TIMEOUT)
    except (MilvusException, OSError, RuntimeError) as exc:
        reason = getattr(exc, "message", "") or str(exc)
        if target.embedded:  # most often: another process holds it
            raise BackendError(f"cannot open the milvus-lite database {target.uri}: {reason}. milvus-lite serves one "
                               f"process at a time; to share it, run `milvus-lite server --data-dir {target.uri}` and "
                               "use milvus://127.0.0.1:19530") from exc
        raise BackendError(f"Milvus at {target} is unreachable: {reason}") from exc


# -- what a collection holds, and what it was built from ---------------------------------------------------
def query_vector(lexical, text: str) -> dict[int, float]:
    """A text's BM25 query as a sparse vector: how often it holds each of its terms (pymilvus takes floats)."""
    return {int(term): float(count) for term, count in lexical.term_counts(text).items()}


def head_fingerprint(head) -> str:
    """A short hash of a trained encoder head's weights ("" without one)."""
    if head is None:
        return ""
    digest = hashlib.sha256()
    for array in (head.w1, head.b1, head.w2, head.b2):
        digest.update(np.ascontiguousarray(array, dtype=np.float32).tobytes())
    return digest.hexdigest()[:16]


def analyzer_name() -> str:
    """Names our BM25 analyzer and parameters (a collection built with other ones is refused)."""
    stopwords = hashlib.sha256(" ".join(sorted(BM25_STOPWORDS)).encode()).hexdigest()[:8]
    return f"porter+stop:{stopwords};k1={BM25_K1};b={BM25_B}"


def dense_fields(index, head) -> dict[str, tuple[str, int]]:
    """The dense fields a collection of this index holds: field -> (encoder name, dimension)."""
    dim = int(index.dense.shape[1])
    fields = {"dense": (index.manifest["model"], dim)}
    if index.multilingual is not None:
        from recommender.embedding.encoders import MultilingualEncoder

        fields["multilingual"] = (MultilingualEncoder.name, int(index.multilingual.shape[1]))
    if head is not None:
        fields["tuned"] = (f"{index.manifest['model']}+head:{head_fingerprint(head)}", dim)
    return fields


def venue_names(index) -> list[str]:
    """The index's distinct venue names in order: a paper's `venue` field is the rank of its venue here."""
    return sorted(set(index.venues))


def properties(index, head) -> dict[str, str]:
    """The collection properties that record what it was built from."""
    props = {"citrec.format": FORMAT, "citrec.index_version": index.version.name, "citrec.papers": str(len(index)),
             "citrec.analyzer": analyzer_name()}
    for field, (encoder, dim) in dense_fields(index, head).items():
        props[f"citrec.{field}"] = f"{encoder}:{dim}"
    return props


def mismatch(found: dict[str, str], index, head, target: MilvusTarget) -> str:
    """Why a collection with properties `found` cannot serve this index and head ("" when it can)."""
    written = found.get("citrec.format")
    if written is None:
        return f"{target} was not written by `python -m recommender milvus-load`"
    if written != FORMAT:
        return f"{target} was written in format {written} by an earlier milvus-load; this version reads format {FORMAT}"
    for field, (encoder, dim) in dense_fields(index, head).items():
        have = found.get(f"citrec.{field}")
        if have is None:
            return f"{target} has no {field} vectors (the index has: {encoder}, dim {dim})"
        if have != f"{encoder}:{dim}":
            name, _, size = have.rpartition(":")
            return (f"{target} was built with another encoder for its {field} vectors: {name} (dim {size}), but "
                    f"queries are encoded with {encoder} (dim {dim})")
    if found.get("citrec.analyzer") != analyzer_name():
        return f"{target} was built with another BM25 analyzer ({found.get('citrec.analyzer')})"
    if found.get("citrec.index_version") != index.version.name or found.get("citrec.papers") != str(len(index)):
        return (f"{target} holds index version {found.get('citrec.index_version')} ({found.get('citrec.papers')} "
                f"papers), but {index.root} is at version {index.version.name} ({len(index)} papers)")
    return ""


def milvus_error(target: MilvusTarget, what: str, exc: Exception) -> BackendError:
    message = getattr(exc, "message", "") or str(exc)
    return BackendError(f"Milvus at {target}: {what} failed: {message}")


# -- the backend --------------------------------------------------------------------------------------------
class MilvusBackend(Backend):
    """Retrieval from a Milvus collection filled from `index` (with `head`, the index's trained encoder head, when
    the recommender uses one). Opening checks that the collection exists and was built from this index version
    with these encoders; any failure is a BackendError."""

    name = "milvus"

    def __init__(self, target: MilvusTarget, index, head=None):
        from pymilvus import MilvusException

        self.target, self.index, self.failure = target, index, MilvusException  # failure: what a call may raise
        self.venue_names = venue_names(index)
        self.client = connect(target)
        try:
            self.check(head)
        except BaseException:
            self.client.close()
            raise

    def check(self, head) -> None:
        """Refuse a missing collection, or one built from another index version or with other encoders; load it."""
        target, root = self.target, self.index.root
        try:
            if not self.client.has_collection(target.collection):
                raise BackendError(f"{target} does not exist; fill it with `python -m recommender milvus-load "
                                   f"--index {root} --uri ...`")
            found = self.client.describe_collection(target.collection).get("properties") or {}
            problem = mismatch(found, self.index, head, target)
            if problem:
                raise BackendError(f"{problem}; run `python -m recommender milvus-load --index {root}` again")
            self.client.load_collection(target.collection, timeout=CALL_TIMEOUT)
        except self.failure as exc:
            raise milvus_error(target, "opening the collection", exc) from exc

    def close(self) -> None:
        self.client.close()

    # -- filters -----------------------------------------------------------------------------------------
    def expression(self, filters: Filters) -> str:
        """The filters as a Milvus boolean expression ("" when nothing is filtered)."""
        parts = []
        if filters.year_min is not None:
            parts.append(f"year >= {int(filters.year_min)}")
        if filters.year_max is not None:
            parts.append(f"(year > 0 and year <= {int(filters.year_max)})")
        if filters.max_date is not None:
            limit = int(filters.max_date)
            parts.append(f"((date > 0 and date <= {limit}) or (date == 0 and (year == 0 or year <= {limit // 10000})))")
        if filters.venues:
            ids = [i for i, name in enumerate(self.venue_names) if any(w in name.lower() for w in filters.venues)]
            parts.append(f"venue in {ids}" if ids else "pos < 0")
        if filters.exclude:
            parts.append(f"pos not in {[int(p) for p in filters.exclude]}")
        return " and ".join(parts)

    # -- the two searches ----------------------------------------------------------------------------------
    def lexical(self, texts: list[tuple[str, float]], filters: Filters) -> Scores:
        return LexicalScores(self, [(query_vector(self.index.lexical, text), weight) for text, weight in texts], filters)

    def nearest(self, field: str, vector: np.ndarray, filters: Filters) -> Scores:
        if field not in DENSE_FIELDS:
            raise ValueError(f"unknown dense field {field!r}")
        return NearestScores(self, field, np.asarray(vector, dtype=np.float32), filters)

    def search(self, field: str, data: list, limit: int, expr: str, params: dict) -> list[dict[int, float]]:
        """One search of several queries: per query, position -> score (an inner product or a cosine)."""
        out = [{} for _ in data]
        if not data or limit <= 0:
            return out
        try:
            results = self.client.search(self.target.collection, data=data, anns_field=field, limit=limit,
                                         filter=expr, search_params=params, output_fields=["pos"],
                                         timeout=CALL_TIMEOUT)
        except self.failure as exc:
            raise milvus_error(self.target, f"{field} search", exc) from exc
        for found, hits in zip(out, results):
            for hit in hits:
                found[int(hit["pos"])] = float(hit["distance"])
        return out

    def vectors(self, field: str, positions: list[int]) -> dict[int, np.ndarray]:
        """The stored vectors of some papers in a dense field."""
        found = {}
        for start in range(0, len(positions), MAX_LIMIT):
            chunk = positions[start:start + MAX_LIMIT]
            try:
                rows = self.client.query(self.target.collection, filter=f"pos in {chunk}", output_fields=[field],
                                         timeout=CALL_TIMEOUT)
            except self.failure as exc:
                raise milvus_error(self.target, f"reading {field} vectors", exc) from exc
            found.update((int(row["pos"]), np.asarray(row[field], dtype=np.float32)) for row in rows)
        return found


class LexicalScores(Scores):
    """BM25 of weighted texts in Milvus. Each text's scale is its best score over the whole corpus (one search of
    every text's vector for its best paper); the inner product being linear, the sum of the texts' vectors, each
    times its weight over its scale, then scores every paper as the in-process engine combines the texts: one
    search of it gives the combined top n under the filters, another restricted to given papers their scores. (One
    text with no filter: its own search gives its top n and its scale at once.)"""

    def __init__(self, backend: MilvusBackend, texts: list[tuple[dict[int, float], float]], filters: Filters):
        self.backend, self.filters = backend, filters
        self.texts = [(terms, weight) for terms, weight in texts if terms]  # no known term: no score anywhere
        self.combined: dict[int, float] | None = None  # the query vector, once the scales are known
        self.known: dict[int, float] = {}
        self.ranked, self.depth = np.zeros(0, dtype=np.int64), 0

    def vector(self) -> dict[int, float]:
        if self.combined is None:
            best = self.backend.search("bm25", [terms for terms, _ in self.texts], 1, "", SPARSE_SEARCH)
            combined: dict[int, float] = {}
            for (terms, weight), found in zip(self.texts, best):
                scale = max(found.values(), default=0.0)
                if scale > 0 and weight != 0:
                    for term, count in terms.items():
                        combined[term] = combined.get(term, 0.0) + weight * count / scale
            self.combined = {term: value for term, value in combined.items() if value != 0}
        return self.combined

    def top(self, n: int) -> np.ndarray:
        if n <= self.depth or len(self.ranked) < self.depth:  # asked deeper before (or the list ran out)
            return self.ranked[:n]
        if not self.texts or n <= 0:
            return np.zeros(0, dtype=np.int64)
        if self.combined is None and len(self.texts) == 1 and not self.filters.restrictive:
            found = self.first_search(min(n, MAX_LIMIT))
        else:
            vector = self.vector()
            found = self.backend.search("bm25", [vector], min(n, MAX_LIMIT), self.backend.expression(self.filters),
                                        SPARSE_SEARCH)[0] if vector else {}
        self.known.update(found)
        ranked = sorted(found, key=lambda p: (-found[p], p))
        self.ranked, self.depth = np.asarray([p for p in ranked if found[p] > 0], dtype=np.int64), n
        return self.ranked

    def first_search(self, limit: int) -> dict[int, float]:
        """One text, every paper allowed: its best papers also give its scale (one search instead of two)."""
        (terms, weight), = self.texts
        found = self.backend.search("bm25", [terms], limit, "", SPARSE_SEARCH)[0]
        scale = max(found.values(), default=0.0)
        if scale <= 0 or weight == 0:
            self.combined = {}
            return {}
        self.combined = {term: weight * count / scale for term, count in terms.items()}
        return {pos: weight * score / scale for pos, score in found.items()}

    def of(self, positions: np.ndarray) -> np.ndarray:
        positions = [int(p) for p in positions]
        vector = self.vector() if self.texts else {}
        missing = [p for p in positions if p not in self.known] if vector else []
        for start in range(0, len(missing), MAX_LIMIT):  # 0 where a paper shares no term with the query
            chunk = missing[start:start + MAX_LIMIT]
            found = self.backend.search("bm25", [vector], len(chunk), f"pos in {chunk}", SPARSE_SEARCH)[0]
            self.known.update({p: found.get(p, 0.0) for p in chunk})
        return np.array([self.known.get(p, 0.0) for p in positions], dtype=np.float32)


class NearestScores(Scores):
    """Cosines with a query vector in one dense field of Milvus: the filtered HNSW search gives the best papers
    and their cosines; other papers' cosines come from their stored vectors."""

    def __init__(self, backend: MilvusBackend, field: str, vector: np.ndarray, filters: Filters):
        self.backend, self.field, self.vector, self.filters = backend, field, vector, filters
        self.known: dict[int, float] = {}
        self.ranked, self.depth = np.zeros(0, dtype=np.int64), 0

    def top(self, n: int) -> np.ndarray:
        if n <= self.depth or len(self.ranked) < self.depth:
            return self.ranked[:n]
        limit = min(n, MAX_LIMIT)
        params = {"metric_type": "COSINE", "params": {"ef": max(HNSW_MIN_EF, 2 * limit)}}
        found = self.backend.search(self.field, [self.vector.tolist()], limit, self.backend.expression(self.filters),
                                    params)[0]
        self.known.update(found)
        ranked = sorted(found, key=lambda p: (-found[p], p))
        self.ranked, self.depth = np.asarray([p for p in ranked if found[p] > 0], dtype=np.int64), n
        return self.ranked

    def of(self, positions: np.ndarray) -> np.ndarray:
        positions = [int(p) for p in positions]
        missing = [p for p in positions if p not in self.known]
        if missing:
            stored = self.backend.vectors(self.field, missing)
            self.known.update({p: float(v @ self.vector) for p, v in stored.items()})
        return np.array([self.known.get(p, 0.0) for p in positions], dtype=np.float32)
