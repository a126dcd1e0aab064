"""Synthetic corpora of any size shaped like real ones, for scale benchmarks (`bench/scale.py`).

Every synthetic paper grows from a real "base" paper: its words are drawn from the base's title and abstract
and from the word frequencies of all real abstracts, its vector is the base's real all-MiniLM-L6-v2 vector
plus Gaussian noise (renormalised), its year lies near the base's. Bases are the ACM-CR pool index when one
is given (real vectors and texts) and the demo corpus (its shipped vectors); word frequencies also come from
the ACM-CR corpus file when present. Citations: papers in year order, each citing earlier papers of its own
base (a topic), earlier papers in proportion to their citations so far (preferential attachment) and
uniformly random earlier papers. Authors are invented names, grouped per topic, a few of them prolific.

Only statistics are used; the corpus is written outside the repository at benchmark time and never committed.
The vectors go straight into the index's embedding cache (as the demo index seeds its cache from
assets/demo_embeddings.npz), so `build_index` finds every vector there and embeds nothing.
"""
from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from recommender.corpus.loaders import load_corpus
from recommender.embedding.cache import EmbeddingCache, text_key
from recommender.embedding.encoders import DEFAULT_MAX_TOKENS, DEFAULT_RUNTIME, encoder_name
from recommender.paper import Paper
from recommender.store import versions
from recommender.store.index import Index

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = PROJECT_ROOT / "assets" / "demo_corpus.jsonl"
DEMO_EMBEDDINGS = PROJECT_ROOT / "assets" / "demo_embeddings.npz"
ENCODER_NAME = encoder_name(DEFAULT_MAX_TOKENS, DEFAULT_RUNTIME)  # the cache key of a new index's encoder
BASE_ENCODER = ENCODER_NAME  # the cache key of the demo's shipped vectors (workspace.demo.RUNTIME)

WORD_RE = re.compile(r"[A-Za-z][A-Za-z-]*[A-Za-z]|[A-Za-z]|\d+")
CHUNK = 20_000          # papers generated and written at a time
CITATION_BLOCK = 1_000  # papers cite only papers of earlier blocks (positions in year order)
FROM_BASE = 0.6         # share of a text's words drawn from its base paper (the rest: corpus frequencies)
NOISE = 0.6             # norm of the Gaussian noise added to a base vector: cosine to the base about 0.86
SENTENCE_WORDS = 18     # mean words per sentence of a synthetic abstract
MEAN_REFERENCES = 12    # mean in-corpus references per paper
REFERENCE_KINDS = (0.5, 0.3, 0.2)  # same topic, preferential attachment, uniform
AUTHORS_PER_TOPIC = 40  # authors who write most of a topic's papers
YEAR_SPREAD = 3         # a paper's year: its base's year plus or minus this many years


@dataclass
class Bases:
    """Real papers that synthetic ones grow from, as word ids, plus the corpus's word statistics."""

    vectors: np.ndarray          # (B, dim) unit float32
    title_words: list[np.ndarray]
    abstract_words: list[np.ndarray]
    years: np.ndarray            # 0 when unknown
    venues: list[str]
    author_counts: np.ndarray    # authors per base paper (1 when unknown)
    vocab: np.ndarray            # object array of word strings; id 0 is "."
    title_cdf: np.ndarray        # cumulative word frequencies in titles
    abstract_cdf: np.ndarray     # ... and in abstracts

    def __len__(self) -> int:
        return len(self.vectors)


class Vocabulary:
    """Word ids and counts, filled text by text."""

    def __init__(self):
        self.ids: dict[str, int] = {".": 0}
        self.title_counts: list[int] = [0]
        self.abstract_counts: list[int] = [0]

    def encode(self, text: str, counts: list[int] | None = None) -> np.ndarray:
        found = []
        for word in WORD_RE.findall(text):
            wid = self.ids.setdefault(word, len(self.ids))
            if wid == len(self.title_counts):
                self.title_counts.append(0)
                self.abstract_counts.append(0)
            if counts is not None:
                counts[wid] += 1
            found.append(wid)
        return np.asarray(found, dtype=np.int32)

    def count(self, text: str, counts: list[int]) -> None:
        self.encode(text, counts)

    def words(self) -> np.ndarray:
        vocab = np.empty(len(self.ids), dtype=object)
        for word, wid in self.ids.items():
            vocab[wid] = word
        return vocab


def _cdf(counts: list[int]) -> np.ndarray:
    values = np.asarray(counts, dtype=np.float64)
    values[0] = 0.0  # sentence ends are placed apart
    return np.cumsum(values) / values.sum()


def _base_papers(pool_index: Path | None) -> tuple[list[Paper], np.ndarray]:
    """The demo corpus with its shipped vectors, plus the papers and vectors of an index (if given)."""
    papers = [Paper.from_dict(json.loads(line)) for line in DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
              if line.strip()]
    stored = np.load(DEMO_EMBEDDINGS)
    by_key = dict(zip(stored["sbert_keys"].tolist(), stored["sbert_vectors"].astype(np.float32)))
    kept = [p for p in papers if text_key(BASE_ENCODER, p.text) in by_key]
    vectors = [np.stack([by_key[text_key(BASE_ENCODER, p.text)] for p in kept])]
    if pool_index is not None:
        index = Index.load(pool_index, verify=False)
        try:
            kept += index.all_papers()
            vectors.append(np.asarray(index.dense, dtype=np.float32))
        finally:
            index.close()
    matrix = np.concatenate(vectors)
    return kept, matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def load_bases(pool_index: Path | None = None, frequency_corpus: Path | None = None) -> Bases:
    """Bases and word statistics from the demo corpus, an optional index of real papers with their vectors,
    and an optional corpus file whose titles and abstracts only add to the word frequencies."""
    papers, vectors = _base_papers(pool_index)
    vocab = Vocabulary()
    titles = [vocab.encode(p.title, vocab.title_counts) for p in papers]
    abstracts = [vocab.encode(p.abstract, vocab.abstract_counts) for p in papers]
    if frequency_corpus is not None and frequency_corpus.is_file():
        for paper in load_corpus(frequency_corpus).papers:
            vocab.count(paper.title, vocab.title_counts)
            vocab.count(paper.abstract, vocab.abstract_counts)
    years = np.asarray([p.year if isinstance(p.year, int) else 0 for p in papers], dtype=np.int32)
    return Bases(vectors=vectors.astype(np.float32), title_words=titles, abstract_words=abstracts, years=years,
                 venues=[p.venue for p in papers],
                 author_counts=np.asarray([max(len(p.authors), 1) for p in papers], dtype=np.int32),
                 vocab=vocab.words(), title_cdf=_cdf(vocab.title_counts),
                 abstract_cdf=_cdf(vocab.abstract_counts))


class WordSampler:
    """Texts of a given length from a base's words and the corpus frequencies."""

    def __init__(self, per_base: list[np.ndarray], cdf: np.ndarray, vocab: np.ndarray):
        self.lengths = np.asarray([len(w) for w in per_base], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])
        self.words = np.concatenate(per_base) if per_base else np.zeros(0, dtype=np.int32)
        self.cdf, self.vocab = cdf, vocab

    def sample(self, rng: np.random.Generator, bases: np.ndarray, lengths: np.ndarray,
               sentence_words: int = 0) -> list[str]:
        """One text per (base, length); with `sentence_words`, a full stop about every that many words."""
        owner = np.repeat(np.arange(len(bases)), lengths)
        base = bases[owner]
        own = (rng.random(len(owner)) < FROM_BASE) & (self.lengths[base] > 0)
        ids = np.searchsorted(self.cdf, rng.random(len(owner)), side="right").astype(np.int32)
        ids = np.minimum(ids, len(self.vocab) - 1)
        picks = self.offsets[base[own]] + (rng.random(int(own.sum())) * self.lengths[base[own]]).astype(np.int64)
        ids[own] = self.words[picks]
        ids[ids == 0] = 1  # a "." is placed below, never sampled
        if sentence_words:
            ids[rng.random(len(ids)) < 1.0 / sentence_words] = 0
        ends = np.cumsum(lengths)
        texts = []
        for start, end in zip(ends - lengths, ends):
            text = " ".join(self.vocab[ids[start:end]]).replace(" .", ".").replace("..", ".")
            texts.append(text.strip(". ") + ("." if sentence_words else ""))
        return texts


@lru_cache(maxsize=1 << 16)
def _author_name(number: int) -> str:
    """A pronounceable invented name for author `number` (unique per number)."""
    syllables = ("ka", "lo", "mi", "ren", "sa", "to", "vel", "an", "dor", "is", "ne", "bru", "cha", "el", "fi", "gu")
    first = "ABCDEFGHIJKLMNOPRSTVWYZ"[number % 23]
    rest, parts = number // 23, []
    while True:
        parts.append(syllables[rest % len(syllables)])
        rest //= len(syllables)
        if rest == 0:
            break
    return f"{first}. {''.join(parts).capitalize()}"


class CitationSampler:
    """References of papers in year order: each cites only papers of earlier blocks."""

    def __init__(self, base_of: np.ndarray, n_bases: int):
        self.n = len(base_of)
        keys = base_of.astype(np.int64) * self.n + np.arange(self.n)
        order = np.argsort(keys, kind="stable")
        self.sorted_keys, self.sorted_positions = keys[order], order
        self.topic_start = np.searchsorted(self.sorted_keys, np.arange(n_bases, dtype=np.int64) * self.n)
        self.base_of = base_of
        self.targets = np.zeros(max(self.n * (MEAN_REFERENCES + 1), 1), dtype=np.int64)
        self.filled = 0

    def references(self, rng: np.random.Generator, start: int, end: int) -> list[np.ndarray]:
        """Sorted distinct earlier positions cited by each paper in positions [start, end), block by block."""
        found = []
        for block in range(start, end, CITATION_BLOCK):
            found += self._block(rng, block, min(end, block + CITATION_BLOCK))
        return found

    def _block(self, rng: np.random.Generator, start: int, end: int) -> list[np.ndarray]:
        """References of papers [start, end), all to positions before start."""
        if start == 0:
            return [np.zeros(0, dtype=np.int64) for _ in range(end - start)]
        counts = np.minimum(rng.geometric(1.0 / (MEAN_REFERENCES + 1), end - start) - 1, 200)
        citing = np.repeat(np.arange(start, end), counts)
        kind = rng.choice(3, size=len(citing), p=REFERENCE_KINDS)
        cited = rng.integers(0, start, len(citing))  # uniform (kind 2) and the fallback of the others
        if self.filled:
            popular = kind == 1
            cited[popular] = self.targets[rng.integers(0, self.filled, int(popular.sum()))]
        topic = kind == 0
        base = self.base_of[citing[topic]].astype(np.int64)
        earlier = np.searchsorted(self.sorted_keys, base * self.n + start) - self.topic_start[base]
        chosen = (rng.random(len(base)) * earlier).astype(np.int64)
        same = np.where(earlier > 0, self.sorted_positions[self.topic_start[base] + chosen], cited[topic])
        cited[topic] = same
        pairs = np.unique((citing - start) * self.n + cited)
        citing_local, cited = pairs // self.n, pairs % self.n
        self._remember(cited)
        bounds = np.searchsorted(citing_local, np.arange(end - start + 1))
        return [cited[bounds[i]:bounds[i + 1]] for i in range(end - start)]

    def _remember(self, cited: np.ndarray) -> None:
        if self.filled + len(cited) > len(self.targets):
            self.targets = np.concatenate([self.targets, np.zeros(len(self.targets), dtype=np.int64)])
        self.targets[self.filled:self.filled + len(cited)] = cited
        self.filled += len(cited)


def paper_id(position: int) -> str:
    return f"S{position:08d}"


def write_corpus(bases: Bases, n: int, corpus_path: Path, index_root: Path, seed: int = 0,
                 on_chunk=None) -> dict:
    """Write n synthetic papers to corpus_path (JSONL, gzip) and their vectors into index_root's embedding
    cache. Returns counts (papers, references)."""
    rng = np.random.default_rng(seed)
    base_of = rng.integers(0, len(bases), n)
    base_years = bases.years[base_of]
    years = np.where(base_years > 0, base_years + rng.integers(-YEAR_SPREAD, YEAR_SPREAD + 1, n),
                     rng.choice(bases.years[bases.years > 0], n) if (bases.years > 0).any() else 2000)
    order = np.lexsort((rng.random(n), years))  # positions in year order: papers cite earlier positions
    base_of, years = base_of[order], years[order]
    titles = WordSampler(bases.title_words, bases.title_cdf, bases.vocab)
    abstracts = WordSampler(bases.abstract_words, bases.abstract_cdf, bases.vocab)
    title_lengths = np.maximum(titles.lengths, 3)
    abstract_lengths = abstracts.lengths[abstracts.lengths > 20] if (abstracts.lengths > 20).any() else np.array([150])
    citations = CitationSampler(base_of, len(bases))
    topic_authors = rng.integers(0, max(n // 3, AUTHORS_PER_TOPIC), len(bases))
    cache = EmbeddingCache(versions.embedding_cache_path(index_root))
    references = 0
    try:
        with gzip.open(corpus_path, "wt", encoding="utf-8", compresslevel=1) as out:
            for start in range(0, n, CHUNK):
                end = min(n, start + CHUNK)
                chunk_bases = base_of[start:end]
                chunk_titles = titles.sample(rng, chunk_bases, title_lengths[chunk_bases])
                chunk_abstracts = abstracts.sample(rng, chunk_bases, rng.choice(abstract_lengths, end - start),
                                                   SENTENCE_WORDS)
                refs = citations.references(rng, start, end)
                noise = rng.standard_normal((end - start, bases.vectors.shape[1])).astype(np.float32)
                noise *= NOISE / np.linalg.norm(noise, axis=1, keepdims=True)
                vectors = bases.vectors[chunk_bases] + noise
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                fresh = {}
                for i in range(end - start):
                    pos, base = start + i, int(chunk_bases[i])
                    n_authors = int(min(bases.author_counts[base] + rng.integers(-1, 2), 12)) or 1
                    # most authors from the topic's group (a geometric rank: a few write many papers)
                    ranks = np.minimum(rng.geometric(0.15, n_authors) - 1, AUTHORS_PER_TOPIC - 1)
                    authors = [_author_name(int(topic_authors[base]) + int(r)) for r in ranks]
                    venue = bases.venues[base] if rng.random() < 0.7 else bases.venues[rng.integers(len(bases))]
                    record = {"id": paper_id(pos), "title": chunk_titles[i], "abstract": chunk_abstracts[i],
                              "authors": list(dict.fromkeys(authors)), "venue": venue, "year": int(years[pos]),
                              "references": [paper_id(int(c)) for c in refs[i]], "doi": f"10.99999/syn.{pos}"}
                    references += len(refs[i])
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    text = Paper(id=record["id"], title=record["title"], abstract=record["abstract"]).text
                    fresh[text_key(ENCODER_NAME, text)] = vectors[i]
                cache.put_many(fresh)
                if on_chunk:
                    on_chunk(end, n)
    finally:
        cache.close()
    return {"papers": n, "references": references}


def write_queries(bases: Bases, count: int, path: Path, seed: int = 1) -> None:
    """`count` global queries (a draft's title and abstract) and `count` local ones (a passage with [CIT] and
    the draft's title and abstract), grown from random bases like the papers, as JSON."""
    rng = np.random.default_rng(seed)
    titles = WordSampler(bases.title_words, bases.title_cdf, bases.vocab)
    abstracts = WordSampler(bases.abstract_words, bases.abstract_cdf, bases.vocab)
    chosen = rng.integers(0, len(bases), count)
    draft_titles = titles.sample(rng, chosen, np.maximum(titles.lengths[chosen], 3))
    draft_abstracts = abstracts.sample(rng, chosen, rng.integers(80, 220, count), SENTENCE_WORDS)
    passages = abstracts.sample(rng, chosen, rng.integers(25, 70, count), SENTENCE_WORDS)
    local = []
    for passage, title, abstract in zip(passages, draft_titles, draft_abstracts):
        words = passage.split(" ")
        at = int(rng.integers(3, len(words)))
        local.append({"context": " ".join(words[:at] + ["[CIT]"] + words[at:]), "title": title,
                      "abstract": abstract})
    queries = {"global": [{"title": t, "abstract": a} for t, a in zip(draft_titles, draft_abstracts)],
               "local": local}
    path.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
