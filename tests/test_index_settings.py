"""An index answers with the BM25 settings its manifest records, or refuses with a clear message when this
version cannot honour them (the analyzer runs again on every query)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from recommender.store import versions
from recommender.store.index import Index


def rewrite_manifest(root, change) -> None:
    """Edit the live version's manifest in place (its own checksum is not on record)."""
    path = versions.current_version(root) / versions.MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest["bm25"])
    path.write_text(json.dumps(manifest), encoding="utf-8")


def test_other_stop_words_are_refused_with_the_remedy(index_copy):
    rewrite_manifest(index_copy, lambda bm25: bm25["stopwords"].remove("the"))
    remedy = "stop words differ.*rebuild it with `python -m recommender index`"
    with pytest.raises(versions.IndexDirectoryError, match=remedy):
        Index.load(index_copy)


def test_another_stemmer_is_refused(index_copy):
    rewrite_manifest(index_copy, lambda bm25: bm25.update(stemmer="lovins"))
    with pytest.raises(versions.IndexDirectoryError, match="stemmer is 'lovins'"):
        Index.load(index_copy)


def test_k1_and_b_on_record_are_the_stored_scores(index_copy, small_recommender):
    """k1, b and the variant are baked into the stored scores: an index built with other values loads and
    ranks exactly as its files say (here: the same files, other values on record)."""
    rewrite_manifest(index_copy, lambda bm25: bm25.update(k1=1.5, b=0.75))
    index = Index.load(index_copy)
    text = "citation recommendation with BM25 and neural encoders"
    assert np.array_equal(index.lexical.scores(text), small_recommender.index.lexical.scores(text))
    assert index.manifest["bm25"]["k1"] == 1.5
