"""BM25 over title, abstract and keywords (bm25s), with a Lucene-like English analyzer."""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from array import array
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import bm25s
import numpy as np
import Stemmer

from recommender.config import BM25_B, BM25_K1, BM25_METHOD, BM25_STOPWORDS
from recommender.paper import Paper
from recommender.store.versions import reserve_space

_TOKEN_RE = re.compile(r"\w+(?:'\w+)?", re.UNICODE)
STEMMER = "porter"


def settings() -> dict:
    """The BM25 settings an index is built with, as its manifest records them."""
    return {"k1": BM25_K1, "b": BM25_B, "method": BM25_METHOD, "stopwords": sorted(BM25_STOPWORDS),
            "stemmer": STEMMER}


def unmet_settings(recorded: dict) -> list[str]:
    """What of an index's recorded BM25 settings this version cannot honour. k1, b and the variant are baked
    into the stored scores, so any values are honoured; the analyzer (stop words, stemmer) runs again on every
    query and must be the one the index was built with."""
    unmet = []
    if "stopwords" in recorded and sorted(recorded["stopwords"]) != sorted(BM25_STOPWORDS):
        unmet.append("its stop words differ from this version's")
    if recorded.get("stemmer", STEMMER) != STEMMER:
        unmet.append(f"its stemmer is {recorded['stemmer']!r}, this version's {STEMMER!r}")
    return unmet


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer(STEMMER)


class TermMemo(dict):
    """Word -> its term ("" for a stop word), computed once per word: a corpus repeats a few hundred thousand
    words millions of times. Emptied when it holds `LIMIT` words, so odd tokens never fill the memory."""

    LIMIT = 1 << 20

    def __missing__(self, word: str) -> str:
        if len(self) >= self.LIMIT:
            self.clear()
        bare = word[:-2] if word.endswith("'s") else word
        term = "" if bare in BM25_STOPWORDS else _stemmer().stemWord(bare)
        self[word] = term
        return term


_TERMS = TermMemo()


def analyze(text: str) -> list[str]:
    """Lower-case word tokens, possessives and stop words removed, Porter-stemmed."""
    return [term for term in map(_TERMS.__getitem__, _TOKEN_RE.findall(text.lower())) if term]


def lexical_text(paper: Paper) -> str:
    """Title, abstract and author keywords: the fields BM25 indexes."""
    keywords = paper.extra.get("keywords") or []
    if isinstance(keywords, str):
        keywords = [keywords]
    return " ".join([paper.title, paper.abstract, *map(str, keywords)])


class LexicalIndex:
    """A bm25s index whose scores come back as one dense vector over the whole corpus."""

    def __init__(self, model: bm25s.BM25):
        self.model = model

    @classmethod
    def build(cls, texts: Iterable[str]) -> "LexicalIndex":
        """An index of the texts held in memory (any iterable; built on disk by `LexicalWriter`, then read)."""
        with tempfile.TemporaryDirectory(prefix="bm25-") as folder:
            writer = LexicalWriter(Path(folder))
            for text in texts:
                writer.add(text)
            writer.close()
            return cls(bm25s.BM25.load(folder, mmap=False))

    def save(self, directory: Path) -> None:
        self.model.save(str(directory))

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        """The saved index with its score arrays memory-mapped (versions are never modified once published)."""
        return cls(bm25s.BM25.load(str(directory), mmap=True))

    def scores(self, text: str) -> np.ndarray:
        """BM25 score of every document for the query text (zeros when no term is known): the sum over the text's
        terms of the term's weight in the document times how often the text holds the term. Each term's postings
        are read once, however often the text repeats it (a title and abstract repeat a third of their postings'
        worth), in term id order."""
        weights, documents, indptr = self.postings()
        found = np.zeros(self.documents, dtype=np.float32)
        for term, count in self.term_counts(text).items():
            start, end = indptr[term], indptr[term + 1]
            np.add.at(found, documents[start:end], weights[start:end] * np.float32(count) if count > 1
                      else weights[start:end])
        return found

    def term_counts(self, text: str) -> dict[int, int]:
        """How often the text holds each of its known terms, by term id (in id order): the query's sparse vector,
        whose product with a document's weights is its BM25 score."""
        return dict(sorted(Counter(self.model.get_tokens_ids(analyze(text))).items()))

    def postings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The score matrix term by term (compressed sparse columns): `weights[indptr[t]:indptr[t + 1]]` are term
        t's BM25 weights in the documents `documents[indptr[t]:indptr[t + 1]]`."""
        matrix = self.model.scores
        return matrix["data"], matrix["indices"], np.asarray(matrix["indptr"])

    def documents_with(self, term: str) -> np.ndarray:
        """The documents that hold an analysed term (none when the index does not know it)."""
        column = self.model.vocab_dict.get(term)
        _, documents, indptr = self.postings()
        if column is None or column + 1 >= len(indptr):
            return np.zeros(0, dtype=np.int64)
        return np.asarray(documents[indptr[column]:indptr[column + 1]])

    def term_weights(self, text: str) -> dict[str, float]:
        """IDF of each known query term (in term order, so that sums over them never depend on hashing)."""
        n = self.documents
        return {term: float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
                for term, df in self.document_frequencies(text).items()}

    @property
    def documents(self) -> int:
        """How many documents the index holds."""
        return int(self.model.scores["num_docs"])

    def document_frequencies(self, text: str) -> dict[str, int]:
        """How many documents hold each known term of the text (in term order)."""
        vocab = self.model.vocab_dict
        indptr = self.model.scores["indptr"]
        return {term: int(indptr[vocab[term] + 1] - indptr[vocab[term]])
                for term in sorted(set(analyze(text))) if term in vocab}


SCRATCH = "terms.scratch"  # the term ids of every document, in order, while the index is written
TERMS = "document_terms.i32"  # the same, kept in the version (raw int32) for additions (`LexicalWriter.extending`)
LENGTHS = "document_lengths.npy"  # how many term ids each document has in TERMS


class LexicalWriter:
    """Writes a BM25 index (bm25s's files, Lucene variant) into `directory` from texts added one at a time. Its
    memory is the vocabulary, a few numbers per document and term, and the (document, term) pairs of one step
    (`PAIRS_PER_STEP`), never all pairs of the corpus.

    While texts come, their term ids go to a scratch file, and each term's document count is kept. `close` then
    reads the scratch file a step of whole documents at a time, scores each (document, term) pair and writes it
    into its term's column of the on-disk CSC arrays. The scores equal bm25s's own build: a float32 idf times
    a float64 term-frequency part, stored as float32. Term ids follow the order of first appearance. The scratch
    file stays in the index (`TERMS`, with `LENGTHS`), so that an addition starts from it instead of analysing
    every text again."""

    PAIRS_PER_STEP = 1 << 22  # terms of whole documents taken at a time

    def __init__(self, directory: Path):
        if BM25_METHOD != "lucene":
            raise ValueError(f"the on-disk BM25 build writes the Lucene variant only, not {BM25_METHOD!r}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.vocabulary: dict[str, int] = {}
        self.lengths = array("q")
        self.document_counts = np.zeros(0, dtype=np.int64)
        self.pending, self.pending_documents = array("i"), 0
        self.scratch = open(self.directory / SCRATCH, "wb")

    @classmethod
    def extending(cls, directory: Path, base: Path) -> "LexicalWriter":
        """A writer into `directory` that holds the documents of the index in `base` (a version's `bm25/`, which
        has `TERMS`; see `can_extend`) and adds texts after them: its files equal a build from all the texts."""
        writer = cls(directory)
        vocabulary = json.loads((base / "vocab.index.json").read_text(encoding="utf-8"))
        vocabulary.pop("", None)  # bm25s's empty token, written last
        writer.vocabulary = vocabulary
        writer.lengths = array("q", np.load(base / LENGTHS).astype(np.int64).tobytes())
        writer.document_counts = np.diff(np.load(base / "indptr.csc.index.npy")).astype(np.int64)
        with open(base / TERMS, "rb") as terms:
            shutil.copyfileobj(terms, writer.scratch, 1 << 24)
        return writer

    @staticmethod
    def can_extend(base: Path) -> bool:
        """Whether the index in `base` keeps its documents' terms (versions built before it was kept do not)."""
        return (base / TERMS).is_file() and (base / LENGTHS).is_file()

    def add(self, text: str) -> None:
        found = analyze(text)
        vocabulary = self.vocabulary
        self.pending.extend([vocabulary.setdefault(term, len(vocabulary)) for term in found])
        self.lengths.append(len(found))
        self.pending_documents += 1
        if len(self.pending) >= self.PAIRS_PER_STEP:
            self._flush()

    def _flush(self) -> None:
        """Count the pending documents' distinct terms and append their term ids to the scratch file."""
        terms = np.array(self.pending, dtype=np.int32)
        lengths = np.array(self.lengths[len(self.lengths) - self.pending_documents:], dtype=np.int64)
        distinct, _, _ = distinct_pairs(terms, lengths, len(self.vocabulary))
        counts = np.bincount(distinct, minlength=len(self.vocabulary))
        counts[:len(self.document_counts)] += self.document_counts
        self.document_counts = counts
        self.scratch.write(terms.tobytes())
        self.pending, self.pending_documents = array("i"), 0

    def close(self) -> int:
        """Write the index files; the number of documents."""
        try:
            self._flush()
            self.scratch.close()
            n_docs, n_terms = len(self.lengths), len(self.vocabulary)
            lengths = np.frombuffer(self.lengths, dtype=np.int64)
            df = self.document_counts.astype(np.float64)
            idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
            average = lengths.mean() if n_docs else 0.0
            index_type = np.int32 if max(int(self.document_counts.sum()), n_docs) < 2 ** 31 else np.int64
            indptr = np.zeros(n_terms + 1, dtype=index_type)
            np.cumsum(self.document_counts, out=indptr[1:])
            np.save(self.directory / "indptr.csc.index.npy", indptr)
            columns = _ColumnFiles(self.directory, int(indptr[-1]), index_type)
            filled = indptr[:-1].astype(np.int64)
            for first, last, terms, counts, per_doc in _steps(self.directory / SCRATCH, lengths, n_terms, self.PAIRS_PER_STEP):
                docs = np.repeat(np.arange(first, last, dtype=np.int64), per_doc)
                tf = counts.astype(np.float64)
                tfc = tf / (BM25_K1 * ((1 - BM25_B) + BM25_B * lengths[docs] / average) + tf)
                scores = (idf[terms].astype(np.float64) * tfc).astype(np.float32)
                columns.put(terms, docs, scores, filled)
            self._write_params(n_docs)
            np.save(self.directory / LENGTHS, lengths.astype(np.int32))
            os.replace(self.directory / SCRATCH, self.directory / TERMS)
        finally:
            self.abort()
        return n_docs

    def abort(self) -> None:
        """Close and remove the scratch file (when a build stops before `close`; after it, it is `TERMS`)."""
        self.scratch.close()
        (self.directory / SCRATCH).unlink(missing_ok=True)

    def _write_params(self, n_docs: int) -> None:
        """bm25s's vocabulary and parameter files, as `bm25s.BM25.save` writes them."""
        model = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
        vocabulary = {**self.vocabulary, "": len(self.vocabulary)}  # bm25s's empty token: in the file, no column
        (self.directory / "vocab.index.json").write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
        params = dict(k1=model.k1, b=model.b, delta=model.delta, method=model.method, idf_method=model.idf_method,
                      dtype=model.dtype, int_dtype=model.int_dtype, num_docs=n_docs, version=bm25s.__version__,
                      backend=model.backend)
        (self.directory / "params.index.json").write_text(json.dumps(params, indent=4), encoding="utf-8")


class _ColumnFiles:
    """The CSC score and document arrays as files, mapped again for every step so that the pages written stay
    the kernel's to write back rather than the build's memory. Their disk space is allocated first: a full disk
    while writing through a map would kill the process (SIGBUS) instead of raising an error."""

    def __init__(self, directory: Path, size: int, index_type):
        self.data_path = directory / "data.csc.index.npy"
        self.indices_path = directory / "indices.csc.index.npy"
        for path, dtype in ((self.data_path, np.float32), (self.indices_path, index_type)):
            np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=(size,)).flush()
            reserve_space(path, path.stat().st_size, "BM25's scores")

    def put(self, terms: np.ndarray, docs: np.ndarray, scores: np.ndarray, filled: np.ndarray) -> None:
        """Write pairs given in document order after the pairs already in each term's column (`filled`: where
        each column's next pair goes, advanced here)."""
        order = np.argsort(terms, kind="stable")  # by term, then document
        by_term = terms[order]
        slots = filled[by_term] + (np.arange(len(order)) - np.searchsorted(by_term, by_term, side="left"))
        for path, values in ((self.data_path, scores), (self.indices_path, docs)):
            mapped = np.load(path, mmap_mode="r+")
            mapped[slots] = values[order]
            mapped.flush()
            del mapped
        filled += np.bincount(terms, minlength=len(filled))


def _steps(scratch: Path, lengths: np.ndarray, n_terms: int, step: int):
    """(first, last document, then `distinct_pairs` of documents first..last-1) for whole documents, about `step`
    terms at a time, read from the scratch file of term ids (each step's read, not mapped: the file's pages
    never pile up in the build's resident memory)."""
    ends = np.cumsum(lengths)
    starts = ends - lengths
    first = 0
    while first < len(lengths):
        last = max(first + 1, int(np.searchsorted(ends, starts[first] + step, side="right")))
        begin, end = int(starts[first]), int(ends[last - 1])
        terms = np.fromfile(scratch, dtype=np.int32, count=end - begin, offset=begin * 4)
        yield (first, last, *distinct_pairs(terms, lengths[first:last], n_terms))
        first = last


def distinct_pairs(terms: np.ndarray, lengths: np.ndarray, n_terms: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of consecutive documents (`lengths` terms each, `terms` their term ids in order): each document's distinct
    terms (ascending), document after document, their counts (float32), and how many each document has."""
    doc = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    keys, found = np.unique(doc * max(n_terms, 1) + terms, return_counts=True)
    return ((keys % max(n_terms, 1)).astype(np.int32), found.astype(np.float32),
            np.bincount(keys // max(n_terms, 1), minlength=len(lengths)))
