"""Load a persistent recommendation index (`build.py` writes it)."""
from __future__ import annotations

import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from recommender.corpus.authors import author_key
from recommender.paper import Paper
from recommender.store import records, versions as files
from recommender.store.clusters import Clusters, map_vectors
from recommender.store.columns import read_columns
from recommender.store.gloss import Glossary
from recommender.store.graph import CitationGraph
from recommender.store.lexical import LexicalIndex, unmet_settings


class AuthorPositions(Mapping):
    """`author_key` -> positions (int64 array) of that author's papers. The table is built on the first lookup,
    not before: it takes seconds on a million papers, and most queries name no author."""

    def __init__(self, authors: list[list[str]]):
        self.authors = authors

    @cached_property
    def table(self) -> dict[str, np.ndarray]:
        keys = {name: author_key(name) for names in self.authors for name in names}  # once per distinct name
        found = defaultdict(list)
        for pos, names in enumerate(self.authors):
            for key in {keys[name] for name in names} - {""}:
                found[key].append(pos)
        return {key: np.asarray(positions, dtype=np.int64) for key, positions in found.items()}

    def __getitem__(self, key: str) -> np.ndarray:
        return self.table[key]

    def __iter__(self):
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


class Index:
    """A loaded, read-only index version: columns, BM25 arrays, the citation graph, vectors and their clusters
    memory-mapped, records in SQLite."""

    def __init__(self, root: Path, version: Path, manifest: dict):
        self.root, self.version, self.manifest = root, version, manifest
        columns = read_columns(version)
        self.ids, self.titles, self.authors = columns.ids, columns.titles, columns.authors
        self.venues, self.dois, self.years, self.dates = columns.venues, columns.dois, columns.years, columns.dates
        self.flagged_retracted = columns.retracted
        self.lexical = LexicalIndex.load(version / "bm25")
        self.graph = CitationGraph.load(version)
        self.clusters, self.dense = self._load_field("dense")
        self.multilingual = None
        self.multilingual_clusters = None
        if manifest.get("multilingual"):
            self.multilingual_clusters, self.multilingual = self._load_field("multilingual")
        self.glossary = Glossary.load(version) if self.multilingual is not None else None
        self._db = records.connect(version)
        self._lock = threading.Lock()

    def _load_field(self, prefix: str) -> tuple[Clusters, np.ndarray]:
        """A dense field's clusters and its vectors, memory-mapped."""
        vectors = map_vectors(self.version / f"{prefix}.npy")
        if len(vectors) != len(self):
            raise ValueError(f"{prefix}: {len(vectors)} vectors for {len(self)} papers")
        return Clusters.load(self.version, prefix, len(self)), vectors

    @classmethod
    def load(cls, root: Path | str, verify: bool = True) -> "Index":
        """Open the live version of an index directory; a damaged one fails with a clear message."""
        root = Path(root)
        version = files.current_version(root)
        manifest = files.read_manifest(version, verify=verify)
        unmet = unmet_settings(manifest.get("bm25") or {})
        if unmet:
            raise files.IndexDirectoryError(f"{root}: built with BM25 settings this version cannot honour "
                                            f"({'; '.join(unmet)}); rebuild it with `python -m recommender index`.")
        try:
            return cls(root, version, manifest)
        except (OSError, ValueError, KeyError, sqlite3.Error) as exc:
            raise files.IndexDirectoryError(f"{version}: cannot be loaded ({exc}); rebuild the index.") from exc

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def position(self) -> dict[str, int]:
        """Paper id -> position (built on the first lookup: half a second on a million papers)."""
        return {pid: i for i, pid in enumerate(self.ids)}

    @cached_property
    def by_author(self) -> "AuthorPositions":
        """Positions of each author's papers, keyed by `author_key` (built on the first lookup)."""
        return AuthorPositions(self.authors)

    def papers(self, positions: Iterable[int]) -> list[Paper]:
        """Full records for the given positions, in that order."""
        positions = [int(p) for p in positions]
        if not positions:
            return []
        marks = ",".join("?" * len(positions))
        with self._lock:
            rows = dict(self._db.execute(f"SELECT pos, record FROM papers WHERE pos IN ({marks})", positions))
        return [Paper.from_dict(json.loads(rows[p])) for p in positions]

    def record_fields(self, *names: str) -> list[tuple]:
        """The named top-level fields of every record, one tuple per paper in position order (None where absent)."""
        if not names or not all(name.isidentifier() for name in names):
            raise ValueError(f"record fields must be plain names: {names}")
        fields = ", ".join(f"json_extract(record, '$.{name}')" for name in names)
        with self._lock:
            return self._db.execute(f"SELECT {fields} FROM papers ORDER BY pos").fetchall()

    def iter_papers(self) -> Iterator[Paper]:
        """Every paper in position order, read a chunk at a time."""
        for chunk in records.chunks(self._db, self._lock):
            yield from chunk

    def all_papers(self) -> list[Paper]:
        return list(self.iter_papers())

    def close(self) -> None:
        self._db.close()
