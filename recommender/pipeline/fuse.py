"""Score components of candidate papers, and their fusion into one score."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from recommender.backends.base import Scores
from recommender.config import PipelineConfig
from recommender.pipeline.retrieve import scaled

RANKED = ("lexical", "dense", "gloss", "sentence_lexical", "sentence_dense")  # ranked by reciprocal rank fusion
SCALED = ("lexical", "sentence_lexical")  # BM25 components, scaled to the pool's best before mixing


@dataclass
class Evidence:
    """What one query's signals say about any paper (None or empty: the signal is off).

    lexical: BM25 scores. dense: cosines with the query's vector in the field that served it. gloss: English-encoder
    cosines with a non-English query's gloss. own: share of the query's authors on each paper they wrote.
    sentences_lexical / sentences_dense: BM25 and cosine of each of a paragraph's citing `sentences`, of which each
    paper keeps its best.
    """

    lexical: Scores | None = None
    dense: Scores | None = None
    gloss: Scores | None = None
    own: dict[int, float] = field(default_factory=dict)
    sentences: list[str] = field(default_factory=list)
    sentences_lexical: list[Scores] = field(default_factory=list)
    sentences_dense: list[Scores] = field(default_factory=list)

    def components(self, candidates: np.ndarray) -> dict[str, np.ndarray]:
        """One value per candidate for each signal that is on."""
        comps = {}
        if self.own:
            comps["own"] = np.array([self.own.get(int(c), 0.0) for c in candidates], dtype=np.float32)
        if self.lexical is not None:
            comps["lexical"] = self.lexical.of(candidates)
        if self.dense is not None:  # cosine in the field that served the query
            comps["dense"] = self.dense.of(candidates)
        if self.gloss is not None:  # English-encoder cosine of a non-English query's gloss
            comps["gloss"] = self.gloss.of(candidates)
        for name, sentences in (("sentence_lexical", self.sentences_lexical), ("sentence_dense", self.sentences_dense)):
            if sentences:
                comps[name] = np.max([scores.of(candidates) for scores in sentences], axis=0)
        return comps

    def best_sentences(self, candidates: np.ndarray, config: PipelineConfig) -> dict[int, str]:
        """The citing sentence each candidate fits best (by the sentences' own weighted BM25 and cosine), when the
        paragraph has several; else nothing."""
        if len(self.sentences) < 2 or len(candidates) == 0:
            return {}
        fit = np.zeros((len(self.sentences), len(candidates)), dtype=np.float32)
        if self.sentences_lexical:
            lexical = np.array([scores.of(candidates) for scores in self.sentences_lexical])
            fit += config.w_sentence_lexical * lexical / max(float(lexical.max()), 1e-9)
        if self.sentences_dense:
            fit += config.w_sentence_dense * np.array([scores.of(candidates) for scores in self.sentences_dense])
        best = fit.argmax(axis=0)
        return {int(c): self.sentences[j] for c, j in zip(candidates.tolist(), best.tolist())}


def fuse(components: dict[str, np.ndarray], config: PipelineConfig) -> np.ndarray:
    """"mix": the weighted sum of the components (BM25 scaled to the pool's best); "rrf": reciprocal rank fusion
    of the retrievers' components plus the other components, weighted and scaled down alike."""
    n = len(next(iter(components.values()))) if components else 0
    weights = config.weights()
    total = np.zeros(n, dtype=np.float32)
    for name, values in components.items():
        if config.fusion == "rrf" and name in RANKED:
            ranks = np.empty(n)
            ranks[np.argsort(-values, kind="stable")] = np.arange(1, n + 1)
            total += 1.0 / (config.rrf_k + ranks)
        elif config.fusion == "rrf":
            total += weights[name] * values / (config.rrf_k + 1)
        else:
            total += weights[name] * (scaled(values) if name in SCALED else values)
    return total
