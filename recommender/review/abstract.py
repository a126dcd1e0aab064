"""Reviewer check from a title, abstract and reference list: papers a submission probably should cite, each tied
to the sentence it relates to (a whole document: `review.document`)."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from recommender.embedding.encoders import get_encoder
from recommender.query import Query, Recommendation
from recommender.pipeline.recommender import Recommender
from recommender.references.match import ReferenceIndex
from recommender.references.parse import ReferenceItem, parse_reference_list

MAX_REFERENCE_CHARS = 500_000
# When the list was probably read wrong: share of references that look like pieces of one ...
FRAGMENT_SHARE, MIN_FRAGMENTS, FRAGMENT_WORDS = 0.25, 3, 6
# ... or share of references found in the corpus (checked from this many references on).
LOW_MATCH_SHARE, MIN_REFERENCES_CHECKED = 0.2, 5
MERGED_CHARS = 1_000  # longer than any single reference
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")


@dataclass
class MissingCitation:
    """A recommended paper absent from the reference list, and the submission sentence closest to it."""

    recommendation: Recommendation
    sentence: str
    sentence_number: int  # 1-based, in the abstract (0: the title)
    similarity: float


@dataclass
class ReviewReport:
    references: list[ReferenceItem]
    matches: list[set[str]]  # corpus ids each reference matched, parallel to `references`
    missing: list[MissingCitation]

    @property
    def cited(self) -> set[str]:
        return set().union(*self.matches) if self.matches else set()

    @property
    def unmatched(self) -> list[ReferenceItem]:
        return [item for item, ids in zip(self.references, self.matches) if not ids]

    @property
    def warnings(self) -> list[str]:
        return parse_warnings(self.references, self.matches)


def parse_references(text: str) -> list[ReferenceItem]:
    """Reference items from pasted or uploaded text (BibTeX, LaTeX or copied from a PDF); never a file path.

    Raises ValueError with a message for the user when the text is too long or not text at all.
    """
    if len(text) > MAX_REFERENCE_CHARS:
        raise ValueError(f"The reference list has {len(text):,} characters; at most {MAX_REFERENCE_CHARS:,} are "
                         "read. Give only the submission's reference list.")
    return parse_reference_list(text)


def parse_warnings(references: list[ReferenceItem], matches: list[set[str]]) -> list[str]:
    """What suggests that a reference list was read wrong (so cited papers may be suggested as missing)."""
    warnings = []
    plain = [item for item in references if item.kind == "text"]
    fragments = sum(1 for item in plain if is_fragment(item))
    if fragments >= MIN_FRAGMENTS and fragments >= FRAGMENT_SHARE * len(plain):
        warnings.append(f"{fragments} of {len(plain)} references are only a few words or have no year: the list "
                        "was probably split in the wrong places, so papers it cites may be suggested as missing. "
                        "Paste it as BibTeX, or with each reference starting on a new line.")
    merged = sum(1 for item in plain if len(item.raw) > MERGED_CHARS)
    if merged:
        warnings.append(f"{merged} references are longer than {MERGED_CHARS:,} characters, so several were "
                        "probably read as one. Start each reference on a new line, or paste BibTeX.")
    found = sum(1 for ids in matches if ids)
    if len(references) >= MIN_REFERENCES_CHECKED and found < LOW_MATCH_SHARE * len(references):
        warnings.append(f"Only {found} of {len(references)} references were found in the corpus. If the "
                        "submission cites more of its papers, the list was not read correctly and some "
                        "suggestions below are papers it already cites: check “References not in the corpus”.")
    return warnings


def is_fragment(item: ReferenceItem) -> bool:
    """A plain-text reference too short, or without a year or identifier, to be a whole reference."""
    return len(item.raw.split()) < FRAGMENT_WORDS or not (item.year or item.doi or item.arxiv)


def submission_sentences(title: str, abstract: str) -> list[tuple[int, str]]:
    """(number, sentence) pairs: the abstract's sentences, or the title alone when there is no abstract."""
    sentences = [s.strip() for s in _SENTENCE_RE.split(" ".join(abstract.split())) if s.strip()]
    if sentences:
        return list(enumerate(sentences, start=1))
    return [(0, " ".join(title.split()))] if title.strip() else []


class AbstractReviewer:
    """Reviews a submission given as its title, abstract and reference list (the Reviewer check's quick mode): the
    reference list matched against one index, and what it lacks, each tied to the sentence it relates to."""

    def __init__(self, recommender: Recommender):
        self.recommender = recommender
        index = recommender.index
        self.references = ReferenceIndex(index.all_papers())

    def review(self, title: str, abstract: str, references: list[ReferenceItem], k: int = 10,
               diversity: float = 0.0) -> ReviewReport:
        """Recommend for the submission with already-cited papers excluded; relate each to a sentence."""
        matches = [self.references.match_item(item) for item in references]
        cited = set().union(*matches) if matches else set()
        query = Query(title=title, abstract=abstract, k=k, exclude=cited, diversity=diversity)
        result = self.recommender.recommend(query)
        multilingual = result.route.multilingual
        return ReviewReport(references, matches, self._relate(result.recommendations, title, abstract, multilingual))

    def _relate(self, recommendations: list[Recommendation], title: str, abstract: str,
                multilingual: bool) -> list[MissingCitation]:
        """Each recommendation with the sentence whose embedding is closest to the paper's."""
        sentences = submission_sentences(title, abstract)
        if not recommendations or not sentences:
            return []
        index = self.recommender.index
        encoder = get_encoder("multilingual") if multilingual else self.recommender.encoder
        matrix = index.multilingual if multilingual else index.dense
        vectors = encoder.encode([text for _, text in sentences])
        papers = np.asarray(matrix[[index.position[r.paper_id] for r in recommendations]])
        similarity = papers @ vectors.T
        best = similarity.argmax(axis=1)
        return [MissingCitation(rec, sentences[j][1], sentences[j][0], float(similarity[i, j]))
                for i, (rec, j) in enumerate(zip(recommendations, best))]
