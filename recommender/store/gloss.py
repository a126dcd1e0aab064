"""Word-by-word English glosses of non-English queries, from the corpus's own vocabulary.

The multilingual sentence encoder also places single words of different languages near each other
("Verlust" next to "loss", "候选" next to "candidates"). A `Glossary` holds the corpus's most frequent
English words with their multilingual vectors; a German or Chinese query is read word by word and each
word is replaced by its nearest corpus words. The gloss ("early earlier work work's locals locales
recommendations recommends ... nonparametric probabilistic model") is no translation, but BM25 and the
English encoder get from it what they cannot get from the original text.

Words are cut by spaces, Chinese by jieba's segmenter (its single characters are mostly function words
and are dropped) and Japanese into runs of kanji and of katakana; the query language's stop words are
dropped. Some words stay as written: a word the vocabulary already holds (method names, "Abstract",
"Encoder"), any word with a digit, an acronym ("CF", "PLMs", "IVF-PQ"), and a Latin-script word inside a text
of another script (the English term in "协同过滤（CF）"). A hyphenated word the vocabulary lacks is read part by
part ("BERT-Reranking": "BERT" and the gloss of "Reranking").

German technical words are often Latin cognates of the English ones, and the encoder's nearest words miss
some of them ("Zitationen" lands near "phrased", "Latente" near "slanted"). A German word whose spelling,
with its ending dropped and a few regular correspondences applied (k/z -> c, -isch -> -ic, -ität -> -ity,
-ierung -> -ation, ...), is a corpus word is read as that word ("Zitationen" -> "citation citations").
"""
from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
from bm25s.stopwords import STOPWORDS_EN_PLUS

from recommender.pipeline.dictionary import readings
from recommender.pipeline.language import script_of, separate_scripts, stopwords, writes_in_latin

VOCABULARY_SIZE = 50_000   # most frequent corpus words (document frequency) that a gloss may use
NEIGHBOURS = 2             # corpus words per query word (a compound such as "Zitationsempfehlung" needs two)
MAX_COMPOUND = 64          # letters of the longest German word cut in two
MIN_PART = 4               # letters in each part of a German compound cut in two
REMEMBERED = 20_000        # glosses of encoded query words kept for the next texts (then forgotten at once)
MIN_SIMILARITY = 0.5       # cosine below which a neighbour is noise rather than a translation
WORDS_FILE, VECTORS_FILE = "gloss_words.json", "gloss.npy"

_CORPUS_WORD_RE = re.compile(r"[^\W\d_]+(?:[-'][^\W\d_]+)*")
_QUERY_WORD_RE = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
# German -> English spelling correspondences of Latin-derived words (suffix, English suffix), and the German
# inflection endings dropped before they apply
_COGNATE_SUFFIXES = (("isierung", "ization"), ("ierung", "ization"), ("ierung", "ation"), ("ität", "ity"),
                     ("isch", "ic"), ("isch", "ical"), ("ell", "al"), ("ik", "ics"), ("ik", "ic"), ("ie", "y"),
                     ("anz", "ance"), ("enz", "ence"), ("iv", "ive"), ("ieren", "e"), ("ieren", "ize"), ("ät", "ty"))
_GERMAN_ENDINGS = ("", "en", "er", "es", "em", "e", "n", "s")
_ENGLISH_STOPWORDS = frozenset(STOPWORDS_EN_PLUS)
_ACRONYM_RE = re.compile(r"[A-Z][A-Z\d]+(?:-[A-Z\d]+)*s?")
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
        self._read: dict[tuple[str, str], list[str]] = {}  # (word, language) -> gloss of a word that was encoded

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

    def stays(self, word: str, language: str) -> bool:
        """Whether a query word goes into the gloss as written (see the module's docstring)."""
        return (word.lower() in self.known or any(c.isdigit() for c in word) or bool(_ACRONYM_RE.fullmatch(word))
                or (not writes_in_latin(language) and script_of(word[0]) == "Latin"))

    def pieces(self, word: str, language: str) -> list[str]:
        """The word, or the parts of a hyphenated word that does not stay as written (parts under two letters go),
        a German compound among them cut in two (`compound_parts`)."""
        if self.stays(word, language):
            return [word]
        parts = [part for part in word.split("-") if len(part) > 1] if "-" in word else [word]
        return [piece for part in parts for piece in (self.compound_parts(part, language) or [part])]

    def compound_parts(self, word: str, language: str) -> list[str]:
        """A German compound the corpus cannot read whole, cut in two where its head (the last part), or better
        both parts, reads as a corpus word, as written (the head five letters or more) or as a cognate
        ("Zitations|graph", "Empfehlungs|system"); a first part alone reads only before a linking s
        ("Zitations|netzwerk"), which is dropped. The longest head wins a tie; the parts come in lower case, as the
        corpus words they read as. [] when no cut reads (or the word is longer than any compound, `MAX_COMPOUND`:
        each cut costs time in the word's length)."""
        if language != "de" or len(word) > MAX_COMPOUND or self.stays(word, language) or self.cognates(word, language):
            return []
        best, best_score = [], 0
        for cut in range(MIN_PART, len(word) - MIN_PART + 1):
            head, linked = word[cut:], word[cut - 1] == "s" and cut - 1 >= MIN_PART
            modifier = word[:cut - 1] if linked else word[:cut]
            head_reads = self._reads(head, language, MIN_PART + 1)
            modifier_reads = self._reads(modifier, language, MIN_PART)
            score = 2 * head_reads + modifier_reads if head_reads or linked else 0
            if score > best_score:
                best, best_score = [modifier.lower(), head.lower()], score
        return best

    def _reads(self, part: str, language: str, shortest: int) -> bool:
        """Whether a part of a compound is a corpus word (not an English stop word), or a cognate of one two
        letters longer than `shortest` (a cognate drops endings: "lungen" of "Empfeh|lungen" would read "lung")."""
        lower = part.lower()
        if len(lower) < shortest or lower in _ENGLISH_STOPWORDS:
            return False
        return lower in self.known or (len(lower) >= shortest + 2 and bool(self.cognates(part, language)))

    def cognates(self, word: str, language: str) -> list[str]:
        """Corpus words that a German word is a spelled-out cognate of, at most `NEIGHBOURS` (none for other
        languages; English stop words such as "such" for "Suche" are never one)."""
        if language != "de":
            return []
        lower, found = word.lower(), []
        for ending in _GERMAN_ENDINGS:
            stem = lower[: len(lower) - len(ending)]
            if not lower.endswith(ending) or len(stem) < 4:
                continue
            forms = {stem, stem.replace("k", "c"), stem.replace("z", "c"), stem.replace("k", "c").replace("z", "c")}
            forms |= {form[: len(form) - len(german)] + english for form in set(forms)
                      for german, english in _COGNATE_SUFFIXES if form.endswith(german)}
            for form in sorted(forms):
                for candidate in (form, form + "s"):
                    if candidate in self.known and candidate not in found and candidate not in _ENGLISH_STOPWORDS:
                        found.append(candidate)
        return found[:NEIGHBOURS]

    def translate(self, text: str, language: str, encode) -> str:
        """The English gloss of `text`; `encode(words) -> unit vectors` is the multilingual encoder."""
        words = [piece for word in query_words(text, language) for piece in self.pieces(word, language)]
        glosses = {w: self.cognates(w, language) for w in set(words) if not self.stays(w, language)}
        glosses = {w: found for w, found in glosses.items() if found}
        unknown = sorted({w for w in words if not self.stays(w, language) and w not in glosses})
        glosses.update({w: self._read[w, language] for w in unknown if (w, language) in self._read})
        unknown = [w for w in unknown if w not in glosses]  # a paragraph's sentences repeat its words: encoded once
        if unknown and len(self.words):
            similarity = np.asarray(encode(unknown), dtype=np.float32) @ np.asarray(self.vectors).T
            rows, columns = np.nonzero(similarity >= MIN_SIMILARITY)  # few: cheaper than sorting every row
            for i, word in enumerate(unknown):
                glosses[word] = self.senses(word, language, similarity[i])
                if not glosses[word]:
                    close = columns[rows == i]
                    best = close[np.argsort(-similarity[i, close], kind="stable")[:NEIGHBOURS]]
                    glosses[word] = [self.words[j] for j in best]
            if len(self._read) + len(unknown) > REMEMBERED:
                self._read.clear()
            self._read.update({(w, language): glosses[w] for w in unknown})
        return " ".join(g for w in words for g in glosses.get(w, [w]))

    def senses(self, word: str, language: str, similarity: np.ndarray) -> list[str]:
        """A Chinese word's dictionary senses that the corpus uses, those closest to the word first: the best
        `NEIGHBOURS` senses of a dictionary word, the best sense of each piece of a word spelled out from several;
        `similarity` holds the word's cosine to every glossary word. [] for other languages."""
        if language != "zh":
            return []
        parts = readings(word)
        keep = NEIGHBOURS if len(parts) == 1 else 1
        chosen: list[str] = []
        for part in parts:
            scored = []
            for sense in part:
                known = [self.known[w] for w in sense if w in self.known]
                if known:
                    scored.append((-max(similarity[j] for j in known), len(scored), known))
            for _, _, known in sorted(scored)[:keep]:
                chosen += [self.words[j] for j in known if self.words[j] not in chosen]
        return chosen
