"""Every setting of the engine: the index's fixed search settings, the pipeline's signals and weights
(`PipelineConfig`), and the named method variants that `evaluate` compares (`METHODS`)."""
from __future__ import annotations

from dataclasses import dataclass, replace

# -- the index: fixed when it is built (an index records them in its manifest) --------------------------
BM25_K1 = 0.9
BM25_B = 0.4
BM25_METHOD = "lucene"  # bm25s's scoring variant: Lucene's idf, no (k1 + 1) factor
# Lucene's English stop words (the analyzer the ACM-CR baselines used).
BM25_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then "
    "there these they this to was will with".split()
)

# -- dense search: the clusters of the field (`store/clusters.py`), or exact cosine where that is as cheap ----
DENSE_OVERFETCH = 2  # the clusters are asked for this many times the wanted neighbours; the query's filters drop some
# Exact cosine over the whole field when the clusters would read this share of it anyway (fields of up to about
# 65,000 papers): one matrix product over all vectors then costs no more.
EXACT_SEARCH_SHARE = 0.25

# The author diversity of a request unless it says otherwise (`Query.diversity`, the app's slider, the CLI's
# --diversity): none, in both modes. Measured per mode on ACM-CR dev (`bench/diversity.py`, docs/benchmarks.md,
# lists of 10): every weight cost nDCG@10, on passages (weight 0.1: -0.8% paragraphs, -1.1% sentences, p < 0.01)
# and on drafts (-1.9%); keeping the top 3 or 5 in score order roughly halved the cost but did not remove it.
DEFAULT_DIVERSITY = 0.0
# The seed method's weight (SBERT+SubRef's QAIv2 selection; the `sbert+subref` method), still on the app's slider.
SUBREF_DIVERSITY = 0.1


@dataclass(frozen=True)
class PipelineConfig:
    """Which signals run and how they are mixed."""

    lexical: bool = True          # BM25 candidates and score
    dense: bool = True            # SBERT candidates (nearest by cosine) and cosine score
    graph: bool = True            # add references of the top neighbours, score by who cites them
    fusion: str = "mix"           # "mix": weighted sum of normalised scores; "rrf": reciprocal rank fusion
    w_lexical: float = 0.4
    w_dense: float = 0.6
    w_graph: float = 0.5          # tuned on the hep-th and CiteSeer dev splits (bench/tune.py)
    w_popularity: float = 0.0     # log in-citation count among the allowed papers
    pool: int = 200               # candidates taken from each retriever
    expand_from: int = 10         # top papers whose references join the pool
    global_weight: float = 0.5    # local mode: weight of the draft's title/abstract next to the passage (tuned on ACM-CR dev)
    citing_sentences: bool = True  # local mode, a passage of several sentences: also score papers by the citing
                                   # sentence they match best (`passage.focus_sentences`)
    w_sentence_lexical: float = 0.2  # its BM25, and its cosine (chosen on ACM-CR dev paragraphs, issue 17)
    w_sentence_dense: float = 0.3
    diversity: float | None = None  # None: the query's own setting (`Query.diversity`); the methods fix theirs
    diverse_pool: int = 5         # diverse selection considers the best k * diverse_pool candidates
    diverse_keep: int = 0         # the first diverse_keep results keep their order; diversity picks the rest
    rrf_k: int = 60
    multilingual: str = "auto"    # "auto": non-English queries use the multilingual field; "off": never; "on": always
    w_lexical_multilingual: float = 0.2  # w_lexical for a non-English query on the multilingual field
    w_gloss: float = 0.2          # the English encoder on a non-English query's gloss (`gloss.py`)
    tuned: str = "auto"           # the citation-tuned encoder (`train`) for English queries: "auto" when the
                                  # index has one, "on": required, "off": the base encoder
    own_work: bool = True         # papers by the query's authors join the candidates, scored by shared authors
    w_own: float = 0.3
    rerank: bool = False          # final rerank of the pool by the index's learned model (`python -m recommender train`)

    def with_(self, **changes) -> "PipelineConfig":
        return replace(self, **changes)

    def weights(self) -> dict[str, float]:
        """The weight of each score component in the fused score."""
        return {"lexical": self.w_lexical, "dense": self.w_dense, "gloss": self.w_gloss, "graph": self.w_graph,
                "popularity": self.w_popularity, "own": self.w_own, "sentence_lexical": self.w_sentence_lexical,
                "sentence_dense": self.w_sentence_dense}


DEFAULT = PipelineConfig()

BASE = DEFAULT.with_(own_work=False, tuned="off")  # untrained signals, the query's authors ignored
WHOLE = BASE.with_(citing_sentences=False)  # the same with every passage read as a whole (the ablations' base)

METHODS: dict[str, PipelineConfig] = {
    # the ACM-CR protocol: BM25 over the passage alone (no draft title/abstract)
    "bm25": WHOLE.with_(dense=False, graph=False, w_lexical=1.0, global_weight=0.0, diversity=0.0),
    "dense": WHOLE.with_(lexical=False, graph=False, w_dense=1.0, diversity=0.0),
    "hybrid": WHOLE.with_(graph=False, diversity=0.0),
    # + each paper's best-matching citing sentence of a paragraph (`passage.focus_sentences`)
    "hybrid+sentences": BASE.with_(graph=False, diversity=0.0),
    "hybrid+graph": WHOLE.with_(diversity=0.0),
    # the same with the citation-tuned encoder (needs `train` first)
    "tuned": WHOLE.with_(tuned="on", diversity=0.0),
    # + the query's authors: their earlier papers join the pool and score by shared authors
    "hybrid+graph+own": WHOLE.with_(own_work=True, diversity=0.0),
    # everything untrained: hybrid+sentences+graph+own
    "full": DEFAULT.with_(diversity=DEFAULT_DIVERSITY),
    # the hybrid+graph+own pool (tuned encoder when trained) reranked by the learned model stored with the index (needs `train` first)
    "learned": DEFAULT.with_(rerank=True, diversity=0.0),
    # seed-method baselines: Citeomatic NNSelect (dense neighbours + their references, cosine only) and
    # BM25 + navigation (top BM25 papers expanded by their references, fused score)
    "nnselect": WHOLE.with_(lexical=False, w_dense=1.0, w_graph=0.0, diversity=0.0),
    "bm25+nav": WHOLE.with_(dense=False, w_lexical=1.0, diversity=0.0),
    # SBERT+SubRef: neighbours under the citation-tuned encoder, then author-diverse (QAIv2) selection
    "sbert+subref": WHOLE.with_(tuned="on", lexical=False, graph=False, w_dense=1.0, diversity=SUBREF_DIVERSITY),
}
