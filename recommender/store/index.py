"""Load a persistent recommendation index (`build.py` writes it)."""
from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
from annoy import AnnoyIndex

from recommender.corpus.authors import author_key
from recommender.paper import Paper
from recommender.store import records, versions as files
from recommender.store.annoy_vectors import item_vectors
from recommender.store.columns import read_columns, read_meta_json
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
    """A loaded, read-only index version: columns, BM25 arrays and vectors memory-mapped, records in SQLite.

    Format 3 keeps the vectors only inside the Annoy files and the columns in `columns/`; a format-2 version
    (a separate `.npy` copy of the vectors, the columns in `meta.json`) loads and ranks as before. A version made
    by a small addition keeps the previous forest, which lacks the newest papers, and all vectors in a `.npy`
    copy (`DenseRetriever` searches the papers outside the forest exactly)."""

    def __init__(self, root: Path, version: Path, manifest: dict):
        self.root, self.version, self.manifest = root, version, manifest
        columns = read_meta_json(version) if manifest["format_version"] == 2 else read_columns(version)
        self.ids, self.titles, self.authors = columns.ids, columns.titles, columns.authors
        self.venues, self.dois, self.years, self.dates = columns.venues, columns.dois, columns.years, columns.dates
        self.flagged_retracted = columns.retracted
        self.lexical = LexicalIndex.load(version / "bm25")
        self.graph = CitationGraph.load(version / "graph.npz")
        self.annoy, self.dense = self._load_field("dense")
        self.multilingual = None
        self.multilingual_annoy = None
        if manifest.get("multilingual"):
            self.multilingual_annoy, self.multilingual = self._load_field("multilingual")
        self.glossary = Glossary.load(version) if self.multilingual is not None else None
        self._db = records.connect(version)
        self._lock = threading.Lock()

    def _load_field(self, prefix: str) -> tuple[AnnoyIndex, np.ndarray]:
        """A dense field's Annoy forest and its vectors, memory-mapped: the version's `.npy` copy where it has one
        (format 2, or a version whose newest papers are outside the forest: `build.add_to_index`), else the
        forest's own items."""
        copy_path = self.version / f"{prefix}.npy"
        copy = np.load(copy_path, mmap_mode="r") if copy_path.is_file() else None
        dim = copy.shape[1] if copy is not None else files.read_vector_dims(self.version)[prefix]
        annoy = AnnoyIndex(dim, "angular")
        annoy.load(str(self.version / f"{prefix}.ann"))
        if copy is None:
            return annoy, item_vectors(self.version / f"{prefix}.ann", dim, len(self), annoy)
        if len(copy) != len(self) or annoy.get_n_items() > len(self):
            raise ValueError(f"{prefix}: {len(copy)} vectors and {annoy.get_n_items()} forest items for {len(self)} papers")
        return annoy, copy

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
        except (OSError, ValueError, KeyError) as exc:
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
        self.annoy.unload()
        if self.multilingual_annoy is not None:
            self.multilingual_annoy.unload()
