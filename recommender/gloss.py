"""Word-by-word English glosses of non-English queries, from the corpus's own vocabulary.

The multilingual sentence encoder also places single words of different languages near each other
("Verlust" next to "loss", "候选" next to "candidates"). A `Glossary` holds the corpus's most frequent
English words with their multilingual vectors; a German or Chinese query is read word by word and each
word is replaced by its nearest corpus words. The gloss ("early earlier work work's locals locales
recommendations recommends ... nonparametric probabilistic model") is no translation, but BM25 and the
English encoder get from it what they cannot get from the original text.

Words are cut by spaces, Chinese by jieba's segmenter (its single characters are mostly function words
and are dropped) and Japanese into runs of kanji and of katakana; the query language's stop words are
dropped. A word the vocabulary already holds (method names, acronyms, "Abstract", "Encoder") and any word
with a digit stay as written.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np

from .language import script_of, separate_scripts, stopwords

VOCABULARY_SIZE = 50_000   # most frequent corpus words (document frequency) that a gloss may use
NEIGHBOURS = 2             # corpus words per query word (a compound such as "Zitationsempfehlung" needs two)
MIN_SIMILARITY = 0.5       # cosine below which a neighbour is noise rather than a translation
WORDS_FILE, VECTORS_FILE = "gloss_words.json", "gloss.npy"

_CORPUS_WORD_RE = re.compile(r"[^\W\d_]+(?:[-'][^\W\d_]+)*")
_QUERY_WORD_RE = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_JAPANESE_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]+")


def vocabulary(texts, size: int = VOCABULARY_SIZE) -> list[str]:
    """The `size` lower-case words (three letters or more) found in most texts, most frequent first."""
    counts: Counter = Counter()
    for text in texts:
        counts.update({w for w in _CORPUS_WORD_RE.findall(text.lower()) if len(w) > 2})
    return [word for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:size]]


def query_words(text: str, language: str) -> list[str]:
    """The content words of a query text: cut by spaces (Chinese: by jieba), stop words and [CIT] removed."""
    words = _QUERY_WORD_RE.findall(separate_scripts(text.replace("[CIT]", " ")))
    if language in ("zh", "ja"):
        cut = _segment_chinese if language == "zh" else _segment_japanese
        words = [piece for word in words for piece in cut(word)]
    drop = stopwords(language)
    return [w for w in words if w.lower() not in drop]


def _segment_chinese(word: str) -> list[str]:
    if script_of(word[0]) != "Han":
        return [word]
    return [piece for piece in _jieba().lcut(word) if len(piece) > 1]


def _segment_japanese(word: str) -> list[str]:
    """Runs of kanji and runs of katakana (loan words such as ニューラル); hiragana, mostly particles and
    endings, is dropped."""
    if script_of(word[0]) == "Latin" or word.isdigit():
        return [word]
    return [run for run in _JAPANESE_RUN_RE.findall(word) if len(run) > 1]


@lru_cache(maxsize=1)
def _jieba():
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


class Glossary:
    """Corpus words and their unit vectors under the multilingual encoder."""

    def __init__(self, words: list[str], vectors: np.ndarray):
        if len(words) != len(vectors):
            raise ValueError(f"{len(words)} words but {len(vectors)} vectors")
        self.words = words
        self.vectors = vectors
        self.known = {word: i for i, word in enumerate(words)}

    @classmethod
    def build(cls, texts, encoder, embed=None) -> "Glossary":
        """The vocabulary of `texts` embedded by `encoder`; `embed(words)` may replace `encoder.encode` (a cache)."""
        words = vocabulary(texts)
        vectors = (embed or encoder.encode)(words) if words else np.zeros((0, encoder.dim), dtype=np.float32)
        return cls(words, np.asarray(vectors, dtype=np.float32))

    def save(self, directory: Path) -> None:
        (directory / WORDS_FILE).write_text(json.dumps(self.words, ensure_ascii=False), encoding="utf-8")
        np.save(directory / VECTORS_FILE, self.vectors)

    @classmethod
    def load(cls, directory: Path) -> "Glossary | None":
        """The glossary stored in an index version, None when it has none (built before glossaries)."""
        if not (directory / WORDS_FILE).is_file():
            return None
        words = json.loads((directory / WORDS_FILE).read_text(encoding="utf-8"))
        return cls(words, np.load(directory / VECTORS_FILE, mmap_mode="r"))

    def translate(self, text: str, language: str, encode) -> str:
        """The English gloss of `text`; `encode(words) -> unit vectors` is the multilingual encoder."""
        words = query_words(text, language)
        unknown = sorted({w for w in words if w.lower() not in self.known and not any(c.isdigit() for c in w)})
        glosses: dict[str, list[str]] = {}
        if unknown and len(self.words):
            similarity = np.asarray(encode(unknown), dtype=np.float32) @ np.asarray(self.vectors).T
            rows, columns = np.nonzero(similarity >= MIN_SIMILARITY)  # few: cheaper than sorting every row
            for i, word in enumerate(unknown):
                close = columns[rows == i]
                best = close[np.argsort(-similarity[i, close], kind="stable")[:NEIGHBOURS]]
                glosses[word] = [self.words[j] for j in best]
        return " ".join(g for w in words for g in glosses.get(w, [w]))
