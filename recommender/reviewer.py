"""Reviewer check: papers a submission probably should cite, each tied to the sentence it relates to."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .encoders import get_encoder
from .paper import Paper
from .query import Query, Recommendation
from .recommender import Recommender
from .references import ReferenceIndex, ReferenceItem, parse_reference_list

MAX_REFERENCE_CHARS = 500_000
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


def parse_references(text: str) -> list[ReferenceItem]:
    """Reference items from pasted or uploaded text (BibTeX or one reference per line); never a file path."""
    return parse_reference_list(text[:MAX_REFERENCE_CHARS])


def submission_sentences(title: str, abstract: str) -> list[tuple[int, str]]:
    """(number, sentence) pairs: the abstract's sentences, or the title alone when there is no abstract."""
    sentences = [s.strip() for s in _SENTENCE_RE.split(" ".join(abstract.split())) if s.strip()]
    if sentences:
        return list(enumerate(sentences, start=1))
    return [(0, " ".join(title.split()))] if title.strip() else []


class Reviewer:
    """Matches reference lists against one index and recommends what they lack."""

    def __init__(self, recommender: Recommender):
        self.recommender = recommender
        index = recommender.index
        self.references = ReferenceIndex(Paper(id=pid, title=title, extra={"doi": doi})
                                         for pid, title, doi in zip(index.ids, index.titles, index.dois))

    def review(self, title: str, abstract: str, references: list[ReferenceItem], k: int = 10,
               diversity: float = 0.0) -> ReviewReport:
        """Recommend for the submission with already-cited papers excluded; relate each to a sentence."""
        matches = [self.references.match_item(item) for item in references]
        cited = set().union(*matches) if matches else set()
        query = Query(title=title, abstract=abstract, k=k, exclude=cited, diversity=diversity)
        recommendations = self.recommender.recommend(query)
        multilingual = self.recommender.route(query).field == "multilingual"
        return ReviewReport(references, matches, self._relate(recommendations, title, abstract, multilingual))

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
