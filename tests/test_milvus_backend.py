"""The Milvus backend against real milvus-lite databases on disk: loading, recommending, filters, the same
rankings as the in-process engine, and the faults (unreachable, missing, built for another index or encoder)."""
import json
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("pymilvus", reason="the Milvus backend's client pymilvus is not installed (requirements.txt)")
pytest.importorskip("milvus_lite", reason="the embedded Milvus (milvus-lite) is not installed (requirements.txt)")

from pymilvus import MilvusClient  # noqa: E402

from support.app_helpers import open_app  # noqa: E402
from recommender import Query, Recommender, cli  # noqa: E402
from recommender.backends import BackendError, Filters, milvus, open_backend  # noqa: E402
from recommender.backends.milvus import parse_target  # noqa: E402
from recommender.backends.milvus_load import load_index  # noqa: E402
from recommender.config import METHODS  # noqa: E402
from recommender.evaluation.evaluate import evaluate  # noqa: E402
from recommender.evaluation.queries import queries_for_papers  # noqa: E402
from recommender.paper import Paper  # noqa: E402
from recommender.pipeline.learned import EncoderHead  # noqa: E402
from recommender.store.build import add_to_index, build_index  # noqa: E402
from recommender.store.index import Index  # noqa: E402
from recommender.store.lexical import lexical_text  # noqa: E402

QUERIES = [
    Query(title="Citation recommendation", abstract="We recommend references for a draft paper from its abstract."),
    Query(context="Candidates are expanded with the citation graph [CIT] and reranked.",
          title="Citation recommendation", abstract="References for a draft."),
    Query(context="Ranking with BM25 [CIT] remains a strong baseline."),
    Query(context="Frühere Arbeiten empfehlen Zitate mit BM25 und neuronalen Einbettungen [CIT]."),
    Query(title="Residual networks", abstract="Deep convolutional networks classify images.", authors=["Ada Lovelace"]),
    Query(title="Citation recommendation", abstract="Recommending papers to cite.", year_min=2012,
          max_date="2014-06-30", venues=["sigir", "jcdl"], exclude={"ir0"}),
]
METHOD_NAMES = ["bm25", "dense", "hybrid+graph", "hybrid+graph+own", "full"]

# A corpus whose metadata has the shapes filters must get right: no year, only a year, a full date, venue names
# with quotes, % and _, and no venue.
VARIED = [
    ("v0", "SIGIR '20", 2020, "2020-07-25"), ("v1", 'The "Data" 100% Conference', 2019, None),
    ("v2", "Proc_of_ACL", 2018, "2018-12-31"), ("v3", "", 0, None), ("v4", "sigir", 2015, "2015-08-09"),
    ("v5", "Bioinformatics", 2017, "2017-01-01"), ("v6", "JCDL", None, None), ("v7", "ACL", 2016, "2016"),
    ("v8", "CVPR", 2021, "2021-06-19"), ("v9", "SIGIR '20", 2020, "2020-07-26"),
]


def target(path, collection=None):
    return parse_target(f"milvus:{path}" + (f"?collection={collection}" if collection else ""))


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def milvus_db(tmp_path_factory, small_recommender):
    """A milvus-lite database holding the small index (collection "papers"); treat it as read-only."""
    path = tmp_path_factory.mktemp("milvus") / "papers.db"
    load_index(small_recommender.index, target(path), progress=False)
    return path


@pytest.fixture(scope="module")
def on_milvus(small_index, milvus_db) -> Recommender:
    return Recommender.load(small_index, f"milvus:{milvus_db}")


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    """An index of VARIED (encoded with 64 tokens: another encoder than the small index's) and a database holding
    it: (index root, database path)."""
    root = tmp_path_factory.mktemp("varied") / "idx"
    papers = [Paper.from_dict({"id": pid, "title": f"Paper {pid} on retrieval", "abstract": f"Study number {pid}.",
                               "venue": venue, "year": year, **({"date": date} if date else {})})
              for pid, venue, year, date in VARIED]
    build_index(papers, root, max_tokens=64, progress_bar=False)
    path = root.parent / "varied.db"
    load_index(Index.load(root), target(path), batch=4, progress=False)
    return root, path


def test_load_writes_every_paper_and_records_what_it_was_built_from(small_index, milvus_db):
    index = Index.load(small_index)
    client = MilvusClient(str(milvus_db))
    described = client.describe_collection("papers")
    props = described["properties"]
    assert props["citrec.index_version"] == index.version.name and props["citrec.papers"] == str(len(index))
    assert props["citrec.dense"] == f"{index.manifest['model']}:384"
    assert props["citrec.multilingual"] == "use-multilingual-v3:512"
    assert props["citrec.format"] == "2"
    client.load_collection("papers")
    rows = client.query("papers", filter="pos >= 0", output_fields=["pos", "bm25"])
    assert sorted(r["pos"] for r in rows) == list(range(len(index)))
    weights_of, papers_of, indptr = index.lexical.postings()
    for row, paper in zip(sorted(rows, key=lambda r: r["pos"]), index.papers(range(len(index)))):
        weights = {int(term): value for term, value in row["bm25"].items()}
        assert set(weights) == set(index.lexical.term_counts(lexical_text(paper)))  # its terms, each once
        for term, value in weights.items():  # the weight of the in-process BM25 matrix
            column = slice(indptr[term], indptr[term + 1])
            in_process = dict(zip(papers_of[column].tolist(), weights_of[column].tolist()))
            assert value == pytest.approx(in_process[row["pos"]], rel=1e-6)


def test_bm25_needs_no_single_segment(small_index, small_recommender, tmp_path):
    """Milvus's own BM25 keeps its statistics per segment (milvus-lite) or shard (a server): a collection split
    into segments would rank differently from the in-process engine. The stored weights are the index's."""
    path = tmp_path / "segments.db"
    load_index(small_recommender.index, target(path), batch=4, segment_rows=4, progress=False)
    client = MilvusClient(str(path))
    manifest = next((path / "collections").glob("*/manifest.json"))
    assert len(json.loads(manifest.read_text())["partitions"]["_default"]["data_files"]) > 2
    client.close()
    on_segments = Recommender.load(small_index, f"milvus:{path}")
    for method in ("bm25", "hybrid+graph", "full"):
        for query in QUERIES:
            here = small_recommender.rank(query, METHODS[method], k=10)
            there = on_segments.rank(query, METHODS[method], k=10)
            assert there.positions == here.positions, (method, query)
            np.testing.assert_allclose(there.scores, here.scores, atol=1e-5)
    on_segments.backend.close()


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_rankings_match_the_in_process_engine(small_recommender, on_milvus, method):
    for query in QUERIES:
        here = small_recommender.rank(query, METHODS[method], k=10)
        there = on_milvus.rank(query, METHODS[method], k=10)
        assert there.positions == here.positions, (method, query)
        np.testing.assert_allclose(there.scores, here.scores, atol=1e-5)
        assert there.route == here.route


def test_recommendations_and_explanations_come_through_milvus(small_recommender, on_milvus):
    query = Query(title="Citation recommendation", abstract="We recommend references for a draft paper.", k=5)
    here, there = small_recommender.recommend(query), on_milvus.recommend(query)
    assert [r.paper_id for r in there] == [r.paper_id for r in here]
    assert [r.explanation for r in there] == [r.explanation for r in here]
    assert on_milvus.backend.name == "milvus" and small_recommender.backend.name == "in-process"


def test_evaluation_through_milvus_gives_the_in_process_metrics(small_recommender, on_milvus):
    queries = queries_for_papers(small_recommender.index, list(range(len(small_recommender.index))))
    methods = {name: METHODS[name] for name in ("bm25", "hybrid+graph")}
    here = evaluate(small_recommender, queries, methods, depth=20, progress=False)
    there = evaluate(on_milvus, queries, methods, depth=20, progress=False)
    for name in methods:
        assert {k: v for k, v in there[name].items() if not k.startswith("ms_")} == \
               {k: v for k, v in here[name].items() if not k.startswith("ms_")}


def test_filters_select_exactly_the_papers_the_in_process_mask_allows(varied):
    root, path = varied
    index = Index.load(root)
    backend = open_backend(f"milvus:{path}", index, None)
    cases = [Query(title="x", year_min=2018), Query(title="x", year_max=2017), Query(title="x", max_date="2018-12-31"),
             Query(title="x", max_date="2020-07-25"), Query(title="x", max_date="2016"),
             Query(title="x", venues=["sigir '20"]), Query(title="x", venues=['"data" 100%', "acl"]),
             Query(title="x", venues=["nowhere"]), Query(title="x", venues=["_of_"]),
             Query(title="x", exclude={"v0", "v3", "unknown"}),
             Query(title="x", year_min=2016, year_max=2020, venues=["sigir", "acl"], exclude={"v9"},
                   max_date="2020-07-25"),
             Query(title="x")]
    for query in cases:
        filters = Filters.of(query, index)
        expr = backend.expression(filters)
        rows = backend.client.query("papers", filter=expr or "pos >= 0", output_fields=["pos"])
        assert sorted(r["pos"] for r in rows) == np.flatnonzero(filters.mask).tolist(), (query, expr)
    filtered = Recommender(index, backend=backend).recommend(Query(title="retrieval", venues=["sigir"], k=10))
    assert {r.paper_id for r in filtered} == {"v0", "v4", "v9"}


def test_a_reload_replaces_the_collection_and_an_interrupted_one_changes_nothing(small_index, tmp_path):
    index = Index.load(small_index)
    path = tmp_path / "papers.db"
    first = load_index(index, target(path), progress=False)

    def killed(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        load_index(index, target(path), batch=10, progress=False, on_batch=killed)
    client = MilvusClient(str(path))
    assert client.describe_alias("papers")["collection_name"] == first.collection
    client.close()
    rec = Recommender(index, backend=f"milvus:{path}")
    assert len(rec.recommend(Query(title="Citation recommendation"))) == 10
    rec.backend.close()

    second = load_index(index, target(path), progress=False)
    client = MilvusClient(str(path))
    assert client.list_collections() == [second.collection]  # the old one and the interrupted one are gone
    assert client.describe_alias("papers")["collection_name"] == second.collection


def test_trained_encoder_vectors_are_loaded_and_checked(small_index, tmp_path):
    index = Index.load(small_index)
    rng = np.random.default_rng(0)

    def head(seed_scale):
        return EncoderHead(rng.normal(0, seed_scale, (384, 16)).astype(np.float32), np.zeros(16, np.float32),
                           rng.normal(0, seed_scale, (16, 384)).astype(np.float32), np.zeros(384, np.float32))

    tuned = head(0.1)
    path = tmp_path / "tuned.db"
    load_index(index, target(path), tuned, progress=False)
    query = Query(title="Citation recommendation", abstract="We recommend references for a draft paper.")
    here = Recommender(index, head=tuned).rank(query, METHODS["tuned"], k=10)
    there = Recommender(index, head=tuned, backend=f"milvus:{path}").rank(query, METHODS["tuned"], k=10)
    assert there.positions == here.positions
    with pytest.raises(BackendError, match="another encoder for its tuned vectors"):
        Recommender(index, head=head(0.1), backend=f"milvus:{path}")


@pytest.fixture
def milvus_server(tmp_path):
    """A Milvus server on localhost (milvus-lite's, in its own process): its milvus:// URI."""
    port = closed_port()
    server = subprocess.Popen([sys.executable, "-m", "milvus_lite.cmdline", "server", "--data-dir",
                               str(tmp_path / "server.db"), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and server.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    assert server.poll() is None, server.stderr.read().decode()
    yield server, f"milvus://127.0.0.1:{port}"
    server.kill()
    server.wait()


def test_a_server_serves_until_it_goes_away(small_index, small_recommender, milvus_server):
    server, uri = milvus_server
    index = Index.load(small_index)
    load_index(index, parse_target(uri), progress=False)
    rec = Recommender(index, backend=uri)
    query = Query(title="Citation recommendation", abstract="We recommend references for a draft paper.")
    assert rec.rank(query).positions == small_recommender.rank(query).positions
    server.kill()
    server.wait()
    with pytest.raises(BackendError, match=r"Milvus at milvus://127\.0\.0\.1:\d+ .*: bm25 search failed"):
        rec.recommend(Query(title="Another question entirely", abstract="Asked after the server stopped."))


def test_an_unreachable_server_is_a_clear_error(small_index):
    uri = f"milvus://127.0.0.1:{closed_port()}"
    with pytest.raises(BackendError, match=r"Milvus at milvus://127\.0\.0\.1:\d+ .* is unreachable"):
        Recommender.load(small_index, uri)


def test_a_missing_database_or_collection_is_a_clear_error(small_index, milvus_db, tmp_path):
    with pytest.raises(BackendError, match="no milvus-lite database at .*milvus-load"):
        Recommender.load(small_index, f"milvus:{tmp_path / 'none.db'}")
    assert not (tmp_path / "none.db").exists()  # looking does not create one
    with pytest.raises(BackendError, match="collection 'elsewhere'.* does not exist; fill it with .*milvus-load"):
        Recommender.load(small_index, f"milvus:{milvus_db}?collection=elsewhere")


def test_a_collection_built_with_another_encoder_or_index_version_is_refused(small_index, varied, tmp_path):
    root, path = varied
    with pytest.raises(BackendError, match=r"another encoder for its dense vectors: all-MiniLM-L6-v2@64\S* \(dim 384\), "
                                           r"but queries are encoded with all-MiniLM-L6-v2@128"):
        Recommender.load(small_index, f"milvus:{path}")
    grown = tmp_path / "grown"
    shutil.copytree(root, grown)
    add_to_index([Paper.from_dict({"id": "new", "title": "A new paper on retrieval"})], grown)
    with pytest.raises(BackendError, match=r"holds index version v\S+ \(10 papers\), but .* \(11 papers\).*milvus-load"):
        Recommender.load(grown, f"milvus:{path}")


def test_a_collection_of_an_earlier_format_is_refused(small_index, tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    with monkeypatch.context() as patched:
        patched.setattr(milvus, "FORMAT", "1")
        load_index(Index.load(small_index), target(path), progress=False)
    with pytest.raises(BackendError, match=r"written in format 1 by an earlier milvus-load; this version reads "
                                           r"format 2; run `python -m recommender milvus-load"):
        Recommender.load(small_index, f"milvus:{path}")


def test_bad_backend_uris_are_refused(small_index):
    for uri, message in [("milvus:papers.sqlite", "ending in .db"), ("solr://host", "unknown backend"),
                         ("milvus://", "names no host"), ("milvus:x.db?collection=1a", "not a Milvus collection"),
                         ("milvus:x.db?shards=2", "unknown option")]:
        with pytest.raises(ValueError, match=message):
            Recommender.load(small_index, uri)


def test_command_line_loads_recommends_and_reports_faults(small_index, tmp_path, capsys):
    path = tmp_path / "cli.db"
    assert cli.main(["milvus-load", "--index", str(small_index), "--uri", f"milvus:{path}"]) == 0
    assert "loaded 24 papers into milvus:" in capsys.readouterr().out
    args = ["recommend", "--index", str(small_index), "--context", "Ranking with BM25 [CIT] is standard.", "--json"]
    assert cli.main(args) == 0
    here = json.loads(capsys.readouterr().out)
    assert cli.main(args + ["--backend", f"milvus:{path}"]) == 0
    there = json.loads(capsys.readouterr().out)
    assert [r["paper_id"] for r in there] == [r["paper_id"] for r in here]
    assert [r["score"] for r in there] == pytest.approx([r["score"] for r in here], abs=1e-5)
    assert cli.main(args + ["--backend", f"milvus://127.0.0.1:{closed_port()}"]) == 2
    assert "error: Milvus at milvus://127.0.0.1" in capsys.readouterr().err


def test_the_app_shows_a_backend_fault_and_stays_up(small_index, tmp_path, monkeypatch):
    corpus = tmp_path / "idx"  # a copy: the app caches engines per directory, and this one must use the backend
    shutil.copytree(small_index, corpus)
    monkeypatch.setenv("CITREC_INDEX", str(corpus))
    monkeypatch.setenv("CITREC_CORPORA", str(tmp_path / "corpora"))
    monkeypatch.setenv("CITREC_BACKEND", f"milvus://127.0.0.1:{closed_port()}")
    at = open_app()
    assert any("The search backend cannot answer" in e.value and "unreachable" in e.value for e in at.error)
    at.run()
    assert not at.exception and at.error
