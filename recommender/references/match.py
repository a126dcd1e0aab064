"""Match parsed references to the papers of a corpus.

Matching order for one reference: DOI, then arXiv id, then title. A title is looked for among the
reference's "spans" (runs of words that start after punctuation and end at a sentence end, so a corpus
title never matches inside a longer title), first exactly (ignoring case, accents, spaces and hyphens),
then within a few character edits (rapidfuzz's optimal string alignment distance). A short title or an approximate one must also agree with
the reference on an author name or the year (within one), so that the matching stays precise.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from rapidfuzz.distance import OSA

from recommender.corpus.identifiers import fold, normalize_arxiv, normalize_doi, normalize_title
from recommender.paper import Paper
from recommender.references.parse import QUOTED_RE, ReferenceItem

SHORT_TITLE_WORDS = 3  # titles of at most this many words need an author and year check even when exact
MIN_FUZZY_CHARS = 16  # shorter titles only match exactly
FUZZY_CHARS_PER_EDIT = 25  # one character edit allowed per this many characters of title, plus one
_KEY_CHARS = 8  # fuzzy candidates share their first or last characters with the span

_WORD_SPLIT_RE = re.compile(r"([0-9a-z]+)")
_STRONG_BREAK = set(".?!\"“”«»")
_WEAK_BREAK = set(":;,()[]{}/–—")
_NOT_NAMES = {"al", "et", "de", "da", "di", "du", "la", "le", "van", "von", "der", "den", "del", "jr", "sr", "ii",
              "iii", "and"}


@dataclass(frozen=True)
class _Facts:
    """What the title check compares: an author's name words and the year of one corpus paper."""

    names: frozenset[str]
    year: int | None
    words: int  # words in the title


class ReferenceIndex:
    """Look-up tables of a corpus by DOI, arXiv id and title, built once, matched many times."""

    def __init__(self, papers: Iterable[Paper]):
        self.by_doi: dict[str, set[str]] = {}
        self.by_arxiv: dict[str, set[str]] = {}
        self.by_title: dict[str, set[str]] = {}  # compact title (no spaces) -> ids
        self.by_start: dict[str, set[str]] = {}  # first characters of a compact title -> compact titles
        self.by_end: dict[str, set[str]] = {}
        self.facts: dict[str, _Facts] = {}
        self.longest_title = 0
        for paper in papers:
            self._add(paper)

    def _add(self, paper: Paper) -> None:
        for doi in {normalize_doi(paper.doi), normalize_doi(paper.id)}:
            if doi.startswith("10."):
                self.by_doi.setdefault(doi, set()).add(paper.id)
        for value in (paper.extra.get("arxiv"), paper.extra.get("eprint"), paper.extra.get("url"), paper.id):
            arxiv = normalize_arxiv(str(value)) if value and (value != paper.id or "." in value) else ""
            if arxiv:
                self.by_arxiv.setdefault(arxiv, set()).add(paper.id)
        words = normalize_title(paper.title).split()
        if not words:
            return
        compact = "".join(words)
        self.by_title.setdefault(compact, set()).add(paper.id)
        self.by_start.setdefault(compact[:_KEY_CHARS], set()).add(compact)
        self.by_end.setdefault(compact[-_KEY_CHARS:], set()).add(compact)
        names = {w for author in paper.authors for w in normalize_title(str(author)).split()
                 if len(w) > 1 and w not in _NOT_NAMES}
        year = paper.year if isinstance(paper.year, int) and paper.year > 0 else None
        self.facts[paper.id] = _Facts(frozenset(names), year, len(words))
        self.longest_title = max(self.longest_title, len(words))

    def match_item(self, item: ReferenceItem) -> set[str]:
        """Corpus ids for one reference: by DOI, else arXiv id, else title (checked against authors and year).

        An entry that holds two references (a list split in the wrong place) can match one paper per
        reference: after the best title, other titles elsewhere in the entry count when an author agrees.
        """
        if item.doi and item.doi in self.by_doi:
            return set(self.by_doi[item.doi])
        if item.arxiv and item.arxiv in self.by_arxiv:
            return set(self.by_arxiv[item.arxiv])
        words, spans = self._spans(item)
        counts = Counter(words)
        years = [w for w in counts if len(w) == 4 and w.isdigit() and 1500 <= int(w) <= 2099]
        found = []  # (edits, -title length, span start, span end, title, an author agrees)
        for start, end, compact in spans:
            for title, edits in self._titles_near(compact):
                outside = _Outside(counts, Counter(words[start:end]), years)
                confirmed, author_ok = self._confirmed(title, edits, outside, item.kind == "bibtex")
                if confirmed:
                    found.append((edits, -len(title), start, end, title, author_ok))
        matched: set[str] = set()
        titles: set[str] = set()
        taken: list[tuple[int, int]] = []
        for edits, _, start, end, title, author_ok in sorted(found):
            if title not in titles and (not taken or (author_ok and all(end <= a or start >= b for a, b in taken))):
                matched |= self.by_title[title]
                titles.add(title)
                taken.append((start, end))
        return matched

    def titled_in(self, item: ReferenceItem) -> set[str]:
        """Ids of papers whose title (within a few edits) stands anywhere a title could in the reference,
        unconfirmed by authors or year."""
        return {pid for _, _, compact in self._spans(item)[1] for title, _ in self._titles_near(compact)
                for pid in self.by_title[title]}

    def match(self, items: Iterable[ReferenceItem]) -> set[str]:
        matched: set[str] = set()
        for item in items:
            matched |= self.match_item(item)
        return matched

    def _spans(self, item: ReferenceItem) -> tuple[list[str], list[tuple[int, int, str]]]:
        """The reference's words, and (first word, last word + 1, compact text) of each place where a corpus
        title could stand: after punctuation, up to a sentence end, sharing its first or last characters."""
        if item.kind == "bibtex":
            title_words = normalize_title(item.title).split()
            others = [w for w in normalize_title(item.raw).split() if w not in set(title_words)]
            return title_words + others, [(0, len(title_words), "".join(title_words))]
        folded = fold(item.raw)
        pieces = _WORD_SPLIT_RE.split(folded)
        words, gaps = pieces[1::2], pieces[0::2]
        in_quotes = _quoted_words(folded, pieces)
        ends = {j for j in range(1, len(words) + 1) if j == len(words) or (
            (_break(gaps[j]) == "strong" or "," in gaps[j])  # not inside a quoted title: that ends at its quote
            and not (in_quotes[j - 1] and in_quotes[j]))}
        spans = []
        for i in range(len(words)):
            if i and _break(gaps[i]) is None:
                continue
            known_start = "".join(words[i:i + _KEY_CHARS])[:_KEY_CHARS] in self.by_start
            compact = ""
            for j in range(i + 1, min(i + self.longest_title + 1, len(words)) + 1):
                compact += words[j - 1]
                if j in ends and (known_start or len(compact) < _KEY_CHARS or compact[-_KEY_CHARS:] in self.by_end):
                    spans.append((i, j, compact))
        return words, spans

    def _titles_near(self, compact: str) -> Iterable[tuple[str, int]]:
        """(corpus compact title, edit distance) for titles equal to the span or a few edits away."""
        if compact in self.by_title:
            yield compact, 0
        if len(compact) < MIN_FUZZY_CHARS:
            return
        for title in self.by_start.get(compact[:_KEY_CHARS], set()) | self.by_end.get(compact[-_KEY_CHARS:], set()):
            allowed = 1 + len(title) // FUZZY_CHARS_PER_EDIT
            if title != compact and len(title) >= MIN_FUZZY_CHARS and abs(len(title) - len(compact)) <= allowed:
                edits = OSA.distance(compact, title, score_cutoff=allowed)
                if edits <= allowed:
                    yield title, edits

    def _confirmed(self, title: str, edits: int, outside: "_Outside", bibtex: bool) -> tuple[bool, bool]:
        """(the reference's other words agree with a paper of this title, an author name agrees)."""
        if edits == 0 and bibtex:
            return True, True
        years = outside.years()
        confirmed = author_agrees = False
        for pid in self.by_title[title]:  # several when the corpus holds duplicates
            facts = self.facts[pid]
            author_ok = any(outside.has(name) for name in facts.names)
            year_ok = facts.year is not None and any(abs(facts.year - year) <= 1 for year in years)
            year_unknown = facts.year is None or not years
            if edits == 0 and facts.words > SHORT_TITLE_WORDS:  # nothing may contradict a long exact title
                confirmed |= author_ok or year_ok or not years or (not facts.names and facts.year is None)
            else:
                confirmed |= author_ok and (year_ok or year_unknown)
            author_agrees |= author_ok
        return confirmed, author_agrees


class _Outside:
    """The words of a reference outside one span (where a title was found): what the checks read."""

    def __init__(self, counts: Counter, span: Counter, year_words: list[str]):
        self.counts, self.span, self.year_words = counts, span, year_words

    def has(self, word: str) -> bool:
        return self.counts[word] > self.span[word]

    def years(self) -> set[int]:
        return {int(word) for word in self.year_words if self.has(word)}


def match_references(items: Iterable[ReferenceItem], papers: Iterable[Paper]) -> set[str]:
    """Corpus ids matched by the items, by DOI, arXiv id or title."""
    return ReferenceIndex(papers).match(items)


def _quoted_words(folded: str, pieces: list[str]) -> list[bool]:
    """For each word (and one past the last), whether it lies inside a quoted passage of two or more words."""
    quoted = [m.span(1) for m in QUOTED_RE.finditer(folded) if len(m.group(1).split()) >= 2]
    inside, offset, region = [], 0, 0
    for k, piece in enumerate(pieces):
        if k % 2:
            while region < len(quoted) and quoted[region][1] <= offset:
                region += 1
            inside.append(region < len(quoted) and quoted[region][0] <= offset)
        offset += len(piece)
    return inside + [False]


def _break(gap: str) -> str | None:
    """How strongly the characters between two words separate them: "strong", "weak" or None."""
    if not gap or not (any(ch.isspace() for ch in gap) or any(ch in "\"“”«»" for ch in gap)):
        return None
    if any(ch in _STRONG_BREAK for ch in gap):
        return "strong"
    return "weak" if any(ch in _WEAK_BREAK for ch in gap) else None
