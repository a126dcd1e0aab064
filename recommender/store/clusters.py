"""Approximate nearest papers by clusters of vectors, kept in memory-mapped files (an inverted file, IVF).

The vectors of a dense field are grouped around √N centroids (k-means on a sample). Each cluster's members are
stored together as int8 codes (one scale per dimension), so a query reads the codes of the `PROBES` clusters
nearest to it, a contiguous slice each: about 64·√N codes of `dim` bytes, not the whole field. The nearest codes
are then scored exactly by the caller from the float32 vectors (`DenseRetriever`).

Files of a field `F` in a version: `F.centroids.npy` (lists x dim float32), `F.scale.npy` (dim float32),
`F.offsets.npy` (lists + 1 int64: where each cluster's members start), `F.members.npy` (N int32 positions, cluster
by cluster) and `F.codes.npy` (N x dim int8, in the members' order).
"""
from __future__ import annotations

import mmap
import warnings
from pathlib import Path
from typing import Iterator

import numpy as np

from recommender.store import versions as files

PROBES = 64  # clusters read per query: recall@200 0.964 on 108,857 ACM-CR papers (Annoy's 100 trees: 0.953)
TRAIN_PER_CLUSTER = 40  # k-means sample: this many vectors per cluster
KMEANS_ROUNDS = 10
CHUNK = 16_384  # vectors assigned or coded at a time
PARTS = ("centroids", "scale", "offsets", "members", "codes")


def map_vectors(path: Path) -> np.ndarray:
    """The (papers x dim) float32 vectors of a `.npy` file, memory-mapped read-only for reading rows at random: the
    kernel is told not to read ahead (MADV_RANDOM), so a query's few hundred rows bring a page each into memory,
    not the megabytes around each (measured at 3·10⁶ papers: 8,000 rows took 42 MiB, 483 MiB without)."""
    with open(path, "rb") as handle:
        version = np.lib.format.read_magic(handle)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(handle)
        offset = handle.tell()
        if dtype != np.float32 or fortran or len(shape) != 2:
            raise ValueError(f"{path.name}: not a matrix of float32 vectors")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mapped, "madvise"):
        mapped.madvise(mmap.MADV_RANDOM)
    return np.frombuffer(mapped, dtype=np.float32, count=shape[0] * shape[1], offset=offset).reshape(shape)


def cluster_count(papers: int) -> int:
    """How many clusters a field of `papers` vectors gets: √N, at least one."""
    return max(1, round(papers ** 0.5))


class Clusters:
    """A field's clusters, memory-mapped (`load`; `build` writes them)."""

    def __init__(self, centroids: np.ndarray, scale: np.ndarray, offsets: np.ndarray, members: np.ndarray,
                 codes: np.ndarray):
        self.centroids, self.scale, self.offsets, self.members, self.codes = centroids, scale, offsets, members, codes
        self.half_norms = half_norms(centroids)

    @classmethod
    def load(cls, version: Path, field: str, count: int) -> "Clusters":
        """The clusters of `field` in `version`, which has `count` papers; ValueError when the files disagree."""
        parts = {part: np.load(version / f"{field}.{part}.npy", mmap_mode="r") for part in PARTS}
        centroids, offsets = parts["centroids"], parts["offsets"]
        if (len(parts["members"]) != count or parts["codes"].shape != (count, centroids.shape[1])
                or len(offsets) != len(centroids) + 1 or offsets[0] != 0 or offsets[-1] != count):
            raise ValueError(f"{field}: clusters do not hold the version's {count} papers")
        return cls(np.asarray(centroids), np.asarray(parts["scale"]), np.asarray(offsets), parts["members"],
                   parts["codes"])

    @property
    def scan_share(self) -> float:
        """About which share of the field one search reads."""
        return min(1.0, PROBES / len(self.centroids))

    def nearest(self, vector: np.ndarray, n: int) -> np.ndarray:
        """About the n papers nearest to the unit `vector` (positions, best first by their codes)."""
        closeness = closeness_to(vector, self.centroids, self.half_norms)
        probed = np.argpartition(-closeness, min(PROBES, len(closeness)) - 1)[:PROBES]
        scaled = (vector * self.scale).astype(np.float32)
        spans = [(int(self.offsets[c]), int(self.offsets[c + 1])) for c in probed]
        scores = np.concatenate([self.codes[a:b].astype(np.float32) @ scaled for a, b in spans if b > a] or
                                [np.zeros(0, np.float32)])
        rows = np.concatenate([np.arange(a, b) for a, b in spans] or [np.zeros(0, np.int64)])
        if len(rows) > n:
            best = np.argpartition(-scores, n - 1)[:n]
            rows, scores = rows[best], scores[best]
        return np.asarray(self.members[rows[np.argsort(-scores, kind="stable")]], dtype=np.int64)

    def cluster_of(self) -> np.ndarray:
        """Each paper's cluster (int32, by position)."""
        found = np.empty(len(self.members), dtype=np.int32)
        found[np.asarray(self.members)] = np.repeat(np.arange(len(self.centroids), dtype=np.int32),
                                                    np.diff(self.offsets))
        return found


def half_norms(centroids: np.ndarray) -> np.ndarray:
    """Half the squared length of each centroid (`closeness_to` subtracts it)."""
    return 0.5 * np.einsum("ij,ij->i", centroids, centroids)


def closeness_to(vectors: np.ndarray, centroids: np.ndarray, halves: np.ndarray) -> np.ndarray:
    """How close each vector (or one) lies to each centroid: larger is nearer in Euclidean distance, as k-means
    assigns."""
    return vectors @ centroids.T - halves


def build(folder: Path, field: str) -> None:
    """Train and write the clusters of the field whose vectors are in `folder`/`field`.npy."""
    vectors = np.load(folder / f"{field}.npy", mmap_mode="r")
    centroids, scale = train(vectors)
    write(folder, field, vectors, centroids, scale, assign(vectors, centroids))


def train(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centroids (k-means on a fixed sample of the memory-mapped `vectors`) and the int8 scale per dimension."""
    lists = cluster_count(len(vectors))
    rng = np.random.default_rng(0)
    size = min(len(vectors), TRAIN_PER_CLUSTER * lists)
    sample = np.asarray(vectors[np.sort(rng.choice(len(vectors), size, replace=False))], dtype=np.float32)
    from sklearn.cluster import KMeans  # here: scikit-learn takes seconds to import, and only builds need it
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():  # repeated vectors (the same text twice) leave some clusters empty: harmless
        warnings.simplefilter("ignore", ConvergenceWarning)
        centroids = KMeans(lists, n_init=1, max_iter=KMEANS_ROUNDS, random_state=0).fit(sample).cluster_centers_
    scale = np.maximum(np.abs(sample).max(axis=0), 1e-6) / 127.0
    return centroids.astype(np.float32), scale.astype(np.float32)


def assign(vectors: np.ndarray, centroids: np.ndarray, start: int = 0) -> np.ndarray:
    """The cluster of each vector from position `start` on (int32), a chunk at a time."""
    halves = half_norms(centroids)
    found = [np.argmax(closeness_to(np.asarray(vectors[a:a + CHUNK], dtype=np.float32), centroids, halves), axis=1)
             for a in range(start, len(vectors), CHUNK)]
    return np.concatenate(found or [np.zeros(0, np.int64)]).astype(np.int32)


def write(staging: Path, field: str, vectors: np.ndarray, centroids: np.ndarray, scale: np.ndarray,
          of: np.ndarray) -> None:
    """Write the clusters of `vectors` (memory-mapped, N x dim), cluster `of[i]` holding vector i.

    The codes file is written through a memory map, so its disk space is set aside first (a full disk is then a
    `DiskFullError`, not a SIGBUS)."""
    count, dim = vectors.shape
    order = np.argsort(of, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(of, minlength=len(centroids)))]).astype(np.int64)
    slot = np.empty(count, dtype=np.int64)
    slot[order] = np.arange(count)
    for part, array in (("centroids", centroids), ("scale", scale), ("offsets", offsets),
                        ("members", order.astype(np.int32))):
        np.save(staging / f"{field}.{part}.npy", array)
    path = staging / f"{field}.codes.npy"
    codes = np.lib.format.open_memmap(path, mode="w+", dtype=np.int8, shape=(count, dim))
    files.reserve_space(path, path.stat().st_size, "the nearest-neighbour clusters")
    for a in range(0, count, CHUNK):
        codes[slot[a:a + CHUNK]] = quantize(np.asarray(vectors[a:a + CHUNK], dtype=np.float32), scale)
    codes.flush()
    del codes


def quantize(vectors: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """int8 codes of `vectors` under the per-dimension `scale` (values beyond it are clipped)."""
    return np.clip(np.rint(vectors / scale), -127, 127).astype(np.int8)


def file_names(field: str) -> Iterator[str]:
    """The names of a field's cluster files."""
    return (f"{field}.{part}.npy" for part in PARTS)
