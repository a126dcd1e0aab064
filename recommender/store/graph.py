"""The citation graph as compressed sparse rows over corpus positions (fast on the query path)."""
from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
from scipy import sparse


class CitationGraph:
    """`cites[i]` lists the positions paper i cites; `cited_by` is the transpose."""

    def __init__(self, cites: sparse.csr_matrix):
        self.cites = cites.tocsr()
        self.cited_by = self.cites.T.tocsr()
        self.in_degree = np.asarray(self.cited_by.getnnz(axis=1), dtype=np.int32)

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

    def save(self, path: Path) -> None:
        sparse.save_npz(path, self.cites, compressed=False)

    @classmethod
    def load(cls, path: Path) -> "CitationGraph":
        return cls(sparse.load_npz(path))

    def subgraph(self, positions: list[int]) -> nx.DiGraph:
        """The citation links among the given papers, as a networkx graph for layout and display."""
        keep = set(int(p) for p in positions)
        graph = nx.DiGraph()
        graph.add_nodes_from(keep)
        for pos in keep:
            graph.add_edges_from((pos, int(c)) for c in self.references_of(pos) if int(c) in keep)
        return graph
