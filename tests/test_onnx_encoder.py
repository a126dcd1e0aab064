"""all-MiniLM-L6-v2 on ONNX Runtime: the real exported model against the PyTorch one, indexes that record
their encoder, queries with the index's own encoder, old indexes unchanged, a damaged export replaced."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recommender.embedding import onnx_export
from recommender.embedding.cache import EmbeddingCache, embed_with_cache
from recommender.embedding.encoders import SbertEncoder, english_encoder, get_encoder, parse_encoder_name
from recommender.embedding.onnx_encoder import OnnxEncoder
from recommender.paper import Paper
from recommender.pipeline.recommender import Recommender
from recommender.query import Query
from recommender.store.index import Index
from recommender.store.build import add_to_index, build_index

PROJECT = Path(__file__).resolve().parents[1]

# what users paste or import: PDF text with wrapped lines and hyphenation, LaTeX, other scripts, nothing, a lot
TEXTS = [
    "Dense passage retrieval for open-domain question an-\nswering outperforms BM25 by 9%\non top-20 accuracy.",
    r"We minimise $\mathcal{L} = -\sum_i \log p(y_i \mid x_i)$ as in \cite{vaswani2017attention}, see Eq.~(3).",
    "Zitationsempfehlung mit neuronalen Netzen 基于引文上下文的推荐",
    "",
    "   ",
    "retrieval " * 600,
    "A short title.",
]


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return get_encoder("sbert", 128, "torch").encode(TEXTS)


def test_fp32_vectors_agree_with_pytorch(torch_vectors):
    onnx = get_encoder("sbert", 128, "onnx-fp32")
    cosines = np.sum(onnx.encode(TEXTS) * torch_vectors, axis=1)
    assert cosines.min() >= 0.999
    assert onnx.name == "all-MiniLM-L6-v2@128+onnx-fp32" and onnx.dim == 384


def test_int8_vectors_stay_close_to_pytorch(torch_vectors):
    """Per-channel int8 weights keep vectors near float32 (one scale per matrix: 0.91 at worst, 0.95 on average)."""
    int8 = get_encoder("sbert", 128, "onnx-int8")
    vectors = int8.encode(TEXTS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(vectors * torch_vectors, axis=1)
    assert cosines.min() >= 0.95 and cosines.mean() >= 0.98  # the empty text is the farthest: 0.967


def test_a_batch_gives_each_text_its_own_vector_in_order():
    """Texts are sorted by length inside `encode` and by `embed_with_cache`: rows must come back in input order."""
    onnx = get_encoder("sbert", 128, "onnx-fp32")
    alone = np.stack([onnx.encode([t])[0] for t in TEXTS])
    assert np.allclose(onnx.encode(TEXTS), alone, atol=1e-4)


def test_embedding_cache_embeds_longest_first_and_keeps_input_order(tmp_path):
    onnx = get_encoder("sbert", 128, "onnx-fp32")
    seen = []

    class Watched:  # the real encoder, remembering what it was given
        name, dim = onnx.name, onnx.dim

        def encode(self, texts):
            seen.extend(texts)
            return onnx.encode(texts)

    texts = [f"{'a long text about retrieval ' * (i % 5)}paper {i}" for i in range(300)]
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    vectors = embed_with_cache(texts, Watched(), cache, progress=False)
    cache.close()
    assert [len(t) for t in seen] == sorted((len(t) for t in texts), reverse=True)
    assert np.allclose(vectors[[7, 123, 299]], onnx.encode([texts[7], texts[123], texts[299]]), atol=1e-4)


def test_encoder_names_round_trip_and_unknown_ones_are_refused():
    assert parse_encoder_name("all-MiniLM-L6-v2@128") == (128, "torch")  # indexes built before ONNX Runtime
    assert parse_encoder_name("all-MiniLM-L6-v2@256+onnx-int8") == (256, "onnx-int8")
    for name in ("all-MiniLM-L6-v2@128+onnx-int4", "e5-large@128", "all-MiniLM-L6-v2"):
        with pytest.raises(ValueError, match="unknown English encoder"):
            parse_encoder_name(name)
    with pytest.raises(ValueError, match="unknown encoder runtime"):
        get_encoder("sbert", 128, "tensorrt")


def papers(n: int, start: int = 0) -> list[Paper]:
    topics = ["citation recommendation", "sparse retrieval with BM25", "protein structure", "speech recognition"]
    return [Paper(id=f"p{i}", title=f"On {topics[i % 4]}, part {i}",
                  abstract=f"We study {topics[i % 4]} with method {i * 7 % 13} on data set {i % 5}.",
                  authors=[f"Author {i % 6}"], year=2000 + i % 20) for i in range(start, start + n)]


def test_an_int8_index_is_queried_with_its_own_encoder(tmp_path):
    root = tmp_path / "int8"
    build_index(papers(24), root, progress_bar=False, runtime="onnx-int8")
    recommender = Recommender.load(root)
    assert recommender.index.manifest["model"] == "all-MiniLM-L6-v2@128+onnx-int8"
    assert recommender.encoder.name == "all-MiniLM-L6-v2@128+onnx-int8"
    paper = recommender.index.papers([5])[0]
    query_vector = recommender.encode([paper.text])[0]
    # the build's vector, up to int8 activations being scaled per batch (the build ran 24 texts at once)
    assert float(query_vector @ recommender.index.dense[5]) >= 0.99
    top = recommender.recommend(Query(title=paper.title, abstract=paper.abstract))
    assert top.recommendations[0].paper_id == "p5"


def test_an_index_built_with_pytorch_keeps_pytorch_for_queries_and_additions(tmp_path):
    """An index of before ONNX Runtime (manifest "model" without a runtime) loads, answers and grows unchanged."""
    root = tmp_path / "torch"
    build_index(papers(20), root, progress_bar=False, runtime="torch")
    index = Index.load(root)
    assert index.manifest["model"] == "all-MiniLM-L6-v2@128"
    stored = np.asarray(index.dense[3])
    index.close()
    recommender = Recommender.load(root)
    assert isinstance(recommender.encoder, SbertEncoder)
    assert float(recommender.encode([recommender.index.papers([3])[0].text])[0] @ stored) >= 0.9999
    _, added = add_to_index(papers(4, start=20), root, progress_bar=False)  # the default runtime is not used
    grown = Index.load(root)
    assert added == 4 and grown.manifest["model"] == "all-MiniLM-L6-v2@128"
    new_text = grown.papers([22])[0].text
    assert float(get_encoder("sbert", 128, "torch").encode([new_text])[0] @ grown.dense[22]) >= 0.9999
    assert np.allclose(grown.dense[3], stored)


def test_queries_of_an_onnx_index_never_import_torch(tmp_path):
    root = tmp_path / "int8"
    build_index(papers(12), root, progress_bar=False, runtime="onnx-int8")
    script = ("import sys, json; from recommender.pipeline.recommender import Recommender; from recommender.query import Query;"
              f"r = Recommender.load({str(root)!r}); out = r.recommend(Query(title='citation recommendation'));"
              "print(json.dumps([len(out.recommendations) > 0, 'torch' in sys.modules,"
              " 'sentence_transformers' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [True, False, False]


def test_a_damaged_cached_model_is_exported_again(tmp_path, monkeypatch, torch_vectors):
    """A model file that is not a whole ONNX model (a disk that filled up, a copy cut short) is replaced."""
    monkeypatch.setenv("CITREC_MODEL_CACHE", str(tmp_path / "models"))
    damaged = onnx_export.model_file("fp32")
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"\x08\x07" + b"\x00" * 1000)
    encoder = OnnxEncoder("all-MiniLM-L6-v2@128+onnx-fp32", 128, "fp32", threads=1)
    assert damaged.stat().st_size > 10_000_000
    assert np.sum(encoder.encode(TEXTS) * torch_vectors, axis=1).min() >= 0.999
    assert [p.name for p in damaged.parent.iterdir() if not p.name.endswith(".lock")] == [damaged.name]


def test_english_encoder_follows_the_manifest_name():
    assert english_encoder("all-MiniLM-L6-v2@128") is get_encoder("sbert", 128, "torch")
    assert english_encoder("all-MiniLM-L6-v2@128+onnx-fp32") is get_encoder("sbert", 128, "onnx-fp32")


def test_the_command_line_builds_with_the_runtime_asked_for_and_adds_with_the_index_own(tmp_path):
    from recommender.cli import main

    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("\n".join(json.dumps(p.to_dict()) for p in papers(10)) + "\n", encoding="utf-8")
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(json.dumps(p.to_dict()) for p in papers(3, start=10)) + "\n", encoding="utf-8")
    assert main(["index", str(corpus), "--out", str(tmp_path / "idx"), "--runtime", "onnx-fp32"]) == 0
    assert main(["index", str(more), "--out", str(tmp_path / "idx"), "--add"]) == 0
    index = Index.load(tmp_path / "idx")
    assert len(index) == 13 and index.manifest["model"] == "all-MiniLM-L6-v2@128+onnx-fp32"
    with pytest.raises(SystemExit):
        main(["index", str(corpus), "--out", str(tmp_path / "other"), "--runtime", "openvino"])
