"""Preparing a query: its language and route, its English gloss, and its vectors in each dense field."""
from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Callable

import numpy as np

from recommender.config import DEFAULT, PipelineConfig
from recommender.embedding.encoders import get_encoder
from recommender.pipeline.language import cross_language_terms, detect_language
from recommender.pipeline.passage import focus_sentences
from recommender.query import Query, Route

NO_MULTILINGUAL_FIELD = "corpus indexed without multilingual field"
MODES = ("auto", "off", "on")  # of `PipelineConfig.multilingual` and `PipelineConfig.tuned`
CACHED_TEXTS = 4096  # repeated texts: slider changes in the app, several methods in evaluate, a draft's passages


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


class QueryPreparer:
    """Prepares the queries of one index. `english` is the English sentence encoder (anything with
    `encode(texts) -> unit vectors`; training passes one that knows the stored vectors of corpus papers);
    `head` the index's citation-tuned encoder head (`learned.EncoderHead`), if any. Vectors and glosses are
    cached per text."""

    def __init__(self, index, english, head=None):
        self.index, self.english, self.head = index, english, head
        self.vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()  # (field, text) -> unit vector
        self.lock = threading.Lock()
        self.gloss = lru_cache(maxsize=CACHED_TEXTS)(self._gloss)

    def clear(self) -> None:
        """Forget encoded texts and glosses (benchmarks: every timed run pays for its own encoding)."""
        with self.lock:
            self.vectors.clear()
        self.gloss.cache_clear()

    def encode(self, field: str, texts: tuple[str, ...]) -> np.ndarray:
        """Unit vectors of the texts in a dense field ("dense", "tuned" or "multilingual"), one row per text.
        Texts not seen lately are encoded together in one batch (many at once cost little more than one)."""
        with self.lock:
            missing = [text for text in dict.fromkeys(texts) if (field, text) not in self.vectors]
        if missing:
            fresh = self._encode(field, missing)
            with self.lock:
                for text, vector in zip(missing, fresh):
                    self.vectors[(field, text)] = vector
        with self.lock:
            rows = []
            for text in texts:
                self.vectors.move_to_end((field, text))
                rows.append(self.vectors[(field, text)])
            while len(self.vectors) > CACHED_TEXTS:
                self.vectors.popitem(last=False)
        return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    def _encode(self, field: str, texts: list[str]) -> np.ndarray:
        if field == "tuned":
            return self.head.apply(self.encode("dense", tuple(texts)))
        encoder = get_encoder("multilingual") if field == "multilingual" else self.english
        return encoder.encode(texts)

    def prime(self, queries: list[Query], config: PipelineConfig = DEFAULT) -> None:
        """Encode the texts of many English queries in one batch, ahead of answering them one by one."""
        by_field: dict[str, list[str]] = {}
        for query in queries:
            route = self.route(query, config)
            if not route.multilingual:
                texts = [query.main_text] + ([query.global_text] if query.is_local and query.global_text else [])
                texts += focus_sentences(query) if config.citing_sentences else []
                by_field.setdefault(route.field, []).extend(texts)
        for field, texts in by_field.items():
            self.encode(field, tuple(texts))

    def _gloss(self, text: str, language: str) -> str:
        """The English gloss of a non-English text from the index's glossary (`gloss.py`)."""
        return self.index.glossary.translate(text, language, lambda words: self.encode("multilingual", tuple(words)))

    # -- route -------------------------------------------------------------------------------------------
    def route(self, query: Query, config: PipelineConfig = DEFAULT) -> Route:
        """Which pipeline answers the query. `config.multilingual`: "auto" sends non-English queries to the
        multilingual field when the index has one; "off" always uses the English pipeline; "on" sends every
        query to the multilingual field. `config.tuned` does the same for the citation-tuned encoder, which
        serves English queries ("on" routes them to the "tuned" field even when the index has no head: the
        caller refuses that). The language is that of the passage in local mode, else of the draft."""
        for name in ("multilingual", "tuned"):
            if getattr(config, name) not in MODES:
                raise ValueError(f"{name} must be 'auto', 'off' or 'on', not {getattr(config, name)!r}")
        language = detect_language(query.main_text)
        wanted = config.multilingual == "on" or (config.multilingual == "auto" and not language.is_english)
        if not wanted:
            return Route(language, self._english_field(config))
        if self.index.multilingual is None:
            return Route(language, self._english_field(config), NO_MULTILINGUAL_FIELD)
        glossed = self.index.glossary is not None and not language.is_english
        return Route(language, "multilingual", gloss=self.gloss(query.main_text, language.code) if glossed else "")

    def _english_field(self, config: PipelineConfig) -> str:
        return "dense" if config.tuned == "off" or (config.tuned == "auto" and self.head is None) else "tuned"

    # -- what the retrievers see -------------------------------------------------------------------------
    def lexical_text(self, text: str, route: Route) -> str:
        """What BM25 sees of a query text. English pipeline: the text itself. A non-English query on the
        multilingual field: its English gloss when the index has a glossary, else only the terms an English index
        can share with it ("基于BERT的引文推荐" -> "基于 BERT 的引文推荐"; the language's stop words dropped)."""
        if not route.multilingual or route.language.is_english:
            return text
        if self.index.glossary is not None:
            return self.gloss(text, route.language.code)
        return cross_language_terms(text, route.language.code)

    def vector(self, query: Query, config: PipelineConfig, field: str,
               prepare: Callable[[str], str] | None = None) -> np.ndarray:
        """The query's unit vector in a field (the passage plus the weighted draft in local mode); `prepare`
        rewrites each text first."""
        texts = [query.main_text] + ([query.global_text] if query.is_local and query.global_text else [])
        # one text at a time: a draft's title and abstract, shared by all its passages, is encoded once
        vectors = [self.encode(field, (prepare(text) if prepare else text,))[0] for text in texts]
        vector = vectors[0] + (config.global_weight * vectors[1] if len(vectors) > 1 else 0.0)
        return unit(vector)

    def gloss_vector(self, query: Query, config: PipelineConfig, route: Route) -> np.ndarray | None:
        """The English encoder's vector of the query's gloss (None unless the route has one and it is weighted)."""
        if not (route.gloss and config.dense and config.w_gloss > 0):
            return None
        return self.vector(query, config, "dense", lambda text: self.lexical_text(text, route))
