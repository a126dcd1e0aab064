"""The citation graph as compressed sparse rows over corpus positions (fast on the query path), stored in both
directions so that loading maps files instead of transposing the graph."""
from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
from scipy import sparse


DIRECTIONS = ("cites", "cited_by")
PARTS = ("indptr", "indices")  # each direction's row offsets and the positions in its rows


def file_name(direction: str, part: str) -> str:
    return f"graph.{direction}.{part}.npy"


FILES = tuple(file_name(direction, part) for direction in DIRECTIONS for part in PARTS)
LEGACY_FILE = "graph.npz"  # the graph of format-4 versions written before both directions were stored


class CitationGraph:
    """`cites[i]` lists the positions paper i cites; `cited_by` is the transpose."""

    def __init__(self, cites: sparse.csr_matrix, cited_by: sparse.csr_matrix | None = None):
        self.cites = cites.tocsr()
        self.cited_by = self.cites.T.tocsr() if cited_by is None else cited_by
        self.in_degree = np.diff(self.cited_by.indptr).astype(np.int32)

    @classmethod
    def from_edges(cls, rows: np.ndarray, cols: np.ndarray, n: int) -> "CitationGraph":
        """Paper rows[k] cites paper cols[k] (a link given twice counts once)."""
        data = np.ones(len(rows), dtype=np.float32)
        matrix = sparse.csr_matrix((data, (rows, cols)), shape=(n, n))
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        return cls(matrix)

    @property
    def edge_count(self) -> int:
        return int(self.cites.nnz)

    def references_of(self, pos: int) -> np.ndarray:
        return self.cites.indices[self.cites.indptr[pos]:self.cites.indptr[pos + 1]]

    def citers_of(self, pos: int) -> np.ndarray:
        return self.cited_by.indices[self.cited_by.indptr[pos]:self.cited_by.indptr[pos + 1]]

    def times_cited_by(self, positions: list[int]) -> np.ndarray:
        """For every paper, how many of the given papers cite it (their common prior works)."""
        return np.asarray(self.cites[np.asarray(positions, dtype=np.int64)].sum(axis=0)).ravel().astype(np.int32)

    def times_citing(self, positions: list[int]) -> np.ndarray:
        """For every paper, how many of the given papers it cites (their common derivative works)."""
        return np.asarray(self.cited_by[np.asarray(positions, dtype=np.int64)].sum(axis=0)).ravel().astype(np.int32)

    def save(self, version: Path) -> None:
        """Both directions' row offsets and column positions as `.npy` files (`FILES`)."""
        offsets = np.int32 if self.edge_count < np.iinfo(np.int32).max else np.int64
        for direction in DIRECTIONS:
            matrix = getattr(self, direction)
            np.save(version / file_name(direction, "indptr"), matrix.indptr.astype(offsets))
            np.save(version / file_name(direction, "indices"), matrix.indices.astype(np.int32))

    @classmethod
    def load(cls, version: Path) -> "CitationGraph":
        """The graph of a version, memory-mapped; a version written before both directions were stored (a single
        `graph.npz`) is read whole and transposed."""
        if (version / LEGACY_FILE).exists():
            return cls(sparse.load_npz(version / LEGACY_FILE))
        parts = {(direction, part): np.load(version / file_name(direction, part), mmap_mode="r")
                 for direction in DIRECTIONS for part in PARTS}
        count, links = len(parts["cites", "indptr"]) - 1, len(parts["cites", "indices"])
        if len(parts["cited_by", "indptr"]) != count + 1 or len(parts["cited_by", "indices"]) != links:
            raise ValueError("the graph's two directions disagree")
        ones = np.ones(links, dtype=np.float32)  # every link weighs 1 (shared by both directions)
        cites, cited_by = (sparse.csr_matrix((ones, parts[direction, "indices"], parts[direction, "indptr"]),
                                             shape=(count, count), copy=False) for direction in DIRECTIONS)
        return cls(cites, cited_by)

    def subgraph(self, positions: list[int]) -> nx.DiGraph:
        """The citation links among the given papers, as a networkx graph for layout and display."""
        keep = set(int(p) for p in positions)
        graph = nx.DiGraph()
        graph.add_nodes_from(keep)
        for pos in keep:
            graph.add_edges_from((pos, int(c)) for c in self.references_of(pos) if int(c) in keep)
        return graph
