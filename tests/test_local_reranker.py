"""The passage reranker learned from citation contexts (`train --contexts`): the context file, folds by citing
paper, graph-free features, storage with the index, use for local queries only, and bad files."""
import gzip
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recommender import Query, Recommender
from recommender.config import DEFAULT, METHODS
from recommender.documents.model import Document, Marker, Passage
from recommender.pipeline.features import FEATURES
from recommender.pipeline.learned import LearnedModelError, describe_learned, load_reranker, model_path, save_reranker
from recommender.pipeline.local_features import LOCAL_FEATURES, venue_key
from recommender.pipeline.passage import citing_sentences
from recommender.review.document import DocumentReviewer
from recommender.training import local
from recommender.training import reranker as rr

PROJECT = Path(__file__).resolve().parents[1]

DRAFTS = {
    "draft-cite": ("Recommending citations for scientific drafts",
                   "We suggest the references a draft should cite, from its passages and from its abstract."),
    "draft-ir": ("Ranking for ad hoc search", "We study ranking functions and learned rankers for search engines."),
    "draft-vision": ("Learning visual recognition with little data",
                     "We train image classifiers and detectors from few labelled photographs."),
    "draft-bio": ("Machine learning for molecular biology",
                  "We predict properties of proteins and genes from sequences."),
}
# (citing paper, passage, cited papers), in the project's own words; some as copied from a PDF (wrapped lines,
# a word hyphenated at the line end)
CONTEXTS = [
    ("draft-cite", "Earlier systems embed the abstract of a draft with a neural encoder [CIT].", ["cite0"]),
    ("draft-cite", "A passage with a citation place-\nholder can be matched against candidate papers [CIT].",
     ["cite1"]),
    ("draft-cite", "Neighbours in the citation graph add candidates [CIT]. Lists are judged by reciprocal rank "
                   "and recall [CIT].", ["cite2", "cite4"]),
    ("draft-cite", "Reviewers also want the citations a submission\nmisses [CIT].", ["cite5"]),
    ("draft-ir", "Term frequency and document length are weighted by BM25 [CIT].", ["ir0"]),
    ("draft-ir", "Pseudo relevance feedback adds terms from the top documents to the query [CIT].", ["ir1"]),
    ("draft-ir", "Boosted trees learn to rank from BM25 scores and clicks [CIT], and dual encoders retrieve "
                 "passages [CIT].", ["ir2", "ir3"]),
    ("draft-vision", "Residual connections let very deep networks train [CIT].", ["vision0"]),
    ("draft-vision", "Objects are detected from region proposals [CIT] and every pixel can be labelled [CIT].",
     ["vision1", "vision2"]),
    ("draft-vision", "Crops and flips augment small image datasets [CIT].", ["vision3"]),
    ("draft-bio", "The structure of a protein can be predicted from its amino acid sequence [CIT].", ["bio0"]),
    ("draft-bio", "Sequences are aligned by dynamic programming [CIT].", ["bio2"]),
    ("draft-bio", "Single cells are clustered into types from their transcriptomes [CIT].", ["bio4"]),
]


def context_rows(with_draft: bool = True) -> list[dict]:
    rows = []
    for i, (citing, passage, cited) in enumerate(CONTEXTS):
        title, abstract = DRAFTS[citing] if with_draft else ("", "")
        rows.append({"qid": f"q{i}", "context": passage, "citing_title": title, "citing_abstract": abstract,
                     "relevant": cited, "citing_id": citing})
    return rows


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def cli(*args):
    return subprocess.run([sys.executable, "-m", "recommender", *map(str, args)], cwd=PROJECT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def local_trained(small_index, tmp_path_factory) -> Path:
    """A copy of the small index with a passage reranker trained on CONTEXTS (with drafts); read-only."""
    root = tmp_path_factory.mktemp("local") / "idx"
    shutil.copytree(small_index, root)
    contexts_file = write_jsonl(root.parent / "contexts.jsonl", context_rows())
    rec = Recommender.load(root)
    reranker = local.train_local(rec, local.read_contexts(contexts_file, rec.index), progress=False, min_papers=2)
    assert reranker.info["stored"] == (reranker.info["test"]["ndcg@10_difference"]["low"] > 0)
    if not reranker.info["stored"]:  # the tests below need the model on disk whatever it scored
        save_reranker(root, reranker, local=True)
    return root


# -- the context file ------------------------------------------------------------------------------------
def test_contexts_are_read_with_their_citing_papers(small_recommender, tmp_path):
    rec = small_recommender
    rows = context_rows() + [{"context": "A passage citing only papers outside the index [CIT].",
                              "relevant": ["elsewhere"], "citing_id": "draft-x"}]
    path = tmp_path / "contexts.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(json.dumps(r) for r in rows) + "\n\n").encode("utf-8")))
    contexts = local.read_contexts(path, rec.index)
    assert len(contexts.queries) == len(CONTEXTS) and contexts.skipped == 1 and contexts.citing_papers == 4
    first = contexts.queries[0]
    assert first.relevant == {"cite0"} and first.query.is_local and first.query.title == DRAFTS["draft-cite"][0]
    assert first.query.exclude == {"draft-cite"} and contexts.groups[0] == "draft-cite"
    # without a citing id the citing title groups contexts, and a bare context stands alone
    bare = write_jsonl(tmp_path / "bare.jsonl", [
        {"context": "BM25 weights terms [CIT].", "relevant": ["ir0"], "citing_title": "Search"},
        {"context": "Feedback expands queries [CIT].", "relevant": ["ir1"], "citing_title": " search"},
        {"context": "Residual networks [CIT].", "relevant": ["vision0"]}])
    assert local.read_contexts(bare, rec.index).groups == ["title:search", "title:search", "line3"]


@pytest.mark.parametrize("content, message", [
    (b"", "no contexts"),
    (b'{"context": "BM25 [CIT]", "relevant": ["ir0"]}\nnot json at all\n', "line 2: not JSON"),
    (b'["a list"]\n', "line 1: a JSON object is expected"),
    (b'{"relevant": ["ir0"]}\n', "line 1: no \"context\""),
    (b'{"context": "BM25 [CIT]", "relevant": "ir0"}\n', "\"relevant\" must be a non-empty list"),
    (b'{"context": "BM25 [CIT]", "relevant": []}\n', "\"relevant\" must be a non-empty list"),
    (b'{"context": "BM25 [CIT]", "relevant": ["ir0"], "citing_id": 7}\n', "\"citing_id\" must be text"),
    (b'{"context": "BM25 [CIT]", "relevant": ["not-in-index"]}\n', "none of its 1 contexts cites a paper"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe binary", "not a UTF-8 JSONL context file"),
    (gzip.compress(b'{"context": "x"}')[:20], "damaged gzip file"),
])
def test_bad_context_files_are_refused_clearly(small_recommender, tmp_path, content, message):
    rec = small_recommender
    path = tmp_path / "contexts.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        local.read_contexts(path, rec.index)


def test_the_cli_refuses_bad_context_files_and_leaves_the_index_unchanged(index_copy, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"context": "BM25 [CIT]", "relevant": ["ir0"]}\n{"context": \n', encoding="utf-8")
    proc = cli("train", "--index", index_copy, "--contexts", bad)
    assert proc.returncode == 2 and "line 2: not JSON" in proc.stderr
    proc = cli("train", "--index", index_copy, "--contexts", tmp_path / "missing.jsonl")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = cli("train", "--index", index_copy, "--contexts", bad, "--split", "splits.json:train")
    assert proc.returncode == 2 and "give one or the other" in proc.stderr
    assert not (index_copy / "learned").exists()


# -- folds -----------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcdefghij"), min_size=2, max_size=60), st.integers(1, 7), st.integers(0, 5))
def test_grouped_folds_never_split_a_citing_paper(groups, k, seed):
    if len(set(groups)) < 2:
        with pytest.raises(ValueError, match="at least two citing papers"):
            local.grouped_folds(groups, k, seed)
        return
    folds = local.grouped_folds(groups, k, seed)
    assert len(folds) == len(groups)
    for name in set(groups):
        assert len({int(f) for f, g in zip(folds, groups) if g == name}) == 1
    used = set(folds.tolist())
    assert used == set(range(min(k, len(set(groups)))))  # every fold gets a citing paper
    assert np.array_equal(folds, local.grouped_folds(groups, k, seed))  # seeded


def test_folds_are_balanced_by_contexts():
    groups = ["big"] * 10 + ["a"] * 3 + ["b"] * 3 + ["c"] * 3 + ["d"] * 1
    sizes = np.bincount(local.grouped_folds(groups, 2, 0))
    assert sorted(sizes.tolist()) == [10, 10]


def test_cross_validation_scores_each_context_with_a_model_that_never_saw_its_citing_paper(small_recommender,
                                                                                          tmp_path, monkeypatch):
    rec = small_recommender
    queries = local.read_contexts(write_jsonl(tmp_path / "c.jsonl", context_rows()), rec.index).queries
    pools = local.collect_pools(rec, queries, progress=False)
    folds = local.grouped_folds([c for c, _, _ in CONTEXTS], 4, 0)
    seen = []
    original = local.fit_pools

    def recording(train_pools, *args):
        seen.append({id(p) for p in train_pools})
        return original(train_pools, *args)

    monkeypatch.setattr(local, "fit_pools", recording)
    scores = local.out_of_fold(pools, folds, len(pools))
    assert len(seen) == 4
    for fold, trained_on in zip(sorted(set(folds.tolist())), seen):
        held = {id(pools[i]) for i in np.flatnonzero(folds == fold)}
        assert not held & trained_on and len(trained_on) == len(pools) - len(held)
    assert all(len(s) == len(p.candidates) for s, p in zip(scores, pools))


def test_the_bootstrap_resamples_citing_papers_and_its_lower_bound_decides():
    papers = [f"p{i}" for i in range(12) for _ in range(3)]
    before = np.full(36, 0.5)
    # every paper holds the same three contexts: drawn by paper, each draw has the same mean (by context it would
    # not), so there is no doubt
    alike = local.paired_bootstrap(before, before + np.tile([0.3, -0.1, -0.05], 12), papers)
    assert alike["low"] == pytest.approx(0.05) == pytest.approx(alike["high"]) == pytest.approx(alike["delta"])
    # the same gains, each paper's three alike: the papers differ, so the interval is wide
    apart = local.paired_bootstrap(before, before + np.repeat([0.3, -0.1, -0.05] * 4, 3), papers)
    assert apart["delta"] == pytest.approx(0.05) and apart["low"] < 0 < 0.1 < apart["high"]
    mixed = local.paired_bootstrap(before, before + np.repeat([0.1] * 7 + [-0.12] * 5, 3), papers)
    assert mixed["delta"] > 0 >= mixed["low"]  # a gain on average, but other papers may well see none
    # few papers widen it: the same per-paper gains on 4 papers instead of 12
    few = local.paired_bootstrap(np.full(12, 0.5), 0.5 + np.repeat([0.3, -0.1, -0.05, 0.05], 3),
                                 [f"p{i}" for i in range(4) for _ in range(3)])
    wide = local.paired_bootstrap(before, before + np.repeat([0.3, -0.1, -0.05, 0.05] * 3, 3), papers)
    assert few["high"] - few["low"] > 2 * (wide["high"] - wide["low"])
    assert local.decide({"ndcg@10_difference": alike}, 12) == "kept"
    assert local.decide({"ndcg@10_difference": mixed}, 12) == "not shown better"
    assert local.decide({"ndcg@10_difference": alike}, local.MIN_PAPERS - 1) == "too few papers"
    assert local.decide(None, 12) == "too few papers"


def test_a_model_is_kept_only_when_enough_citing_papers_show_a_gain_above_zero(index_copy, tmp_path, monkeypatch):
    rec = Recommender.load(index_copy)
    collect, rng = local.collect_pools, np.random.default_rng(0)  # the small corpus's untrained order is nearly
    monkeypatch.setattr(local, "collect_pools", lambda *args, **kw: [  # perfect: a random one instead
        replace(p, fused=rng.random(len(p.fused))) for p in collect(*args, **kw)])
    four = local.read_contexts(write_jsonl(tmp_path / "four.jsonl", context_rows()), rec.index)
    rows = [{**row, "citing_id": f"paper{i}"} for i, row in enumerate(context_rows())]
    many = local.read_contexts(write_jsonl(tmp_path / "many.jsonl", rows), rec.index)  # 13 citing papers
    path = model_path(index_copy, local=True)
    monkeypatch.setattr(local, "out_of_fold", lambda pools, folds, held, *args: [p.fused for p in pools[:held]])
    same = local.train_local(rec, many, progress=False).info  # a model that changes nothing
    assert same["test"]["ndcg@10_difference"] == {"delta": 0, "low": 0, "high": 0}
    assert same["decision"] == "not shown better" and not same["stored"] and not path.exists()
    assert "+0.0% on 13 contexts of 13 citing papers it did not learn from (95% interval for as many other papers: " \
        "+0.0% to +0.0%)" in local.summary(same, path)
    assert "lower bound is not above zero, so the model was not stored" in local.summary(same, path)
    monkeypatch.setattr(local, "out_of_fold", lambda pools, folds, held, *args: [  # the cited papers first
        p.cited.astype(np.float32) for p in pools[:held]])
    few = local.train_local(rec, four, progress=False).info  # 4 citing papers, fewer than MIN_PAPERS
    assert few["decision"] == "too few papers" and few["test"] is None and not few["stored"] and not path.exists()
    text = local.summary(few, path)
    assert f"4 citing papers are too few to test it (at least {local.MIN_PAPERS} are needed" in text
    assert "nDCG@10" not in text and "not stored" in text
    kept = local.train_local(rec, many, progress=False).info
    assert kept["decision"] == "kept" and kept["stored"] and path.is_file()
    assert kept["test"]["ndcg@10_difference"]["low"] > 0
    text = local.summary(kept, path)
    assert "on 13 contexts of 13 citing papers it did not learn from (95% interval for as many other papers: +" in text
    assert "model written to" in text


# -- features --------------------------------------------------------------------------------------------
def test_local_features_need_no_graph_and_split_passage_from_draft(small_recommender):
    rec = small_recommender
    query = Query(title=DRAFTS["draft-ir"][0], abstract=DRAFTS["draft-ir"][1],
                  context="Term weighting with BM25 [CIT] is standard. Some systems expand queries [CIT].")
    pool = rec.candidate_pool(query, local.pool_config())
    matrix = rec.passage_features(pool)
    col = {name: i for i, name in enumerate(LOCAL_FEATURES)}
    assert matrix.shape == (len(pool.candidates), len(LOCAL_FEATURES)) and not np.isnan(matrix).any()
    ir0 = list(pool.candidates).index(rec.index.position["ir0"])
    assert matrix[ir0, col["passage_bm25"]] > 0 and matrix[ir0, col["citing_sentence_bm25"]] == 1.0
    assert matrix[ir0, col["citing_sentence_bm25"]] >= matrix[ir0, col["passage_bm25"]]
    assert matrix[:, col["markers"]].tolist() == [2.0] * len(pool.candidates)
    named = matrix[:, col["phrase_title_overlap"]]  # "Term weighting with BM25 [CIT]": its title's words
    assert named[ir0] == named.max() > 0 and (named < named[ir0]).sum() >= len(named) - 2
    assert (matrix[:, col["phrase_text_overlap"]] >= named - 1e-6).all()  # the indexed text holds the title
    opening = rec.passage_features(rec.candidate_pool(Query(context="[CIT] weight terms with BM25."),
                                                            local.pool_config()))
    assert np.isnan(opening[:, [col["phrase_title_overlap"], col["phrase_text_overlap"]]]).all()
    alone = Query(context=query.context)
    bare = rec.passage_features(rec.candidate_pool(alone, local.pool_config()))
    drafts = [col[n] for n in LOCAL_FEATURES if n.startswith("draft_")]
    assert np.isnan(bare[:, drafts]).all() and not np.isnan(np.delete(bare, drafts, axis=1)).any()


def test_citing_sentences_and_venue_keys():
    query = Query(context="BM25 is old [CIT]. We build on it.\nLearned rankers [cit] and e.g. Smith et al. [CIT] "
                          "use it.")
    assert citing_sentences(query) == ["BM25 is old .", "Learned rankers and e.g. Smith et al. use it."]
    assert citing_sentences(Query(context="No placeholder here.")) == ["No placeholder here."]
    assert venue_key("Proceedings of the 42nd International ACM SIGIR Conference, 2019") == \
        venue_key("Proceedings of the 43rd International ACM SIGIR Conference, 2020") != ""
    assert venue_key("") == ""


# -- training, storage, use ------------------------------------------------------------------------------
def test_training_stores_the_model_with_what_it_learned_from(local_trained):
    path = model_path(local_trained, local=True)
    assert path.is_file() and not model_path(local_trained).exists()  # the graph reranker is another file
    header = json.loads(path.read_bytes().partition(b"\n")[0])
    info = header["info"]
    assert header["features"] == list(LOCAL_FEATURES)
    assert info["mode"] == "local" and info["contexts"] == len(CONTEXTS) and info["citing_papers"] == 4
    assert info["source"].endswith("contexts.jsonl") and len(info["source_sha256"]) == 64
    assert info["contexts_with_draft"] == len(CONTEXTS) and info["contexts_without_draft"] == 0
    test = info["test"]  # one citing paper per fold
    assert (test["papers"], test["folds"], test["contexts"], info["min_papers"]) == (4, 4, len(CONTEXTS), 2)
    assert test["ndcg@10_difference"]["low"] <= test["ndcg@10_difference"]["delta"] <= \
        test["ndcg@10_difference"]["high"]
    assert test["ndcg@10_difference"]["delta"] == pytest.approx(test["learned"]["ndcg@10"] - test["fused"]["ndcg@10"],
                                                                abs=2e-4)
    assert "passage reranker trained on 13 citation contexts" in describe_learned(local_trained)


def test_the_passage_reranker_serves_local_queries_only(local_trained):
    rec = Recommender.load(local_trained)
    assert rec.local_reranker is not None and rec.reranker is None
    passage = Query(title=DRAFTS["draft-ir"][0], abstract=DRAFTS["draft-ir"][1],
                    context="Ranking functions weight terms [CIT].", diversity=0.0)
    ranking = rec.rank(passage, DEFAULT.with_(rerank=True))
    assert ranking.features.shape[1] == len(LOCAL_FEATURES) and "learned" in ranking.components
    results = rec.recommend(passage)
    assert "learned" in results[0].components
    assert [r.paper_id for r in results] == [rec.index.ids[p] for p in ranking.positions]
    # a draft (global mode) has no passage: the fused order, as on any untrained index
    draft = Query(title="Ranking functions for search", diversity=0.0)
    assert rec.reranker_for(draft) is None and "learned" not in rec.recommend(draft)[0].components
    with pytest.raises(LearnedModelError, match="no learned model"):
        rec.rank(draft, METHODS["learned"])
    # a passage pasted alone: the model learned from passages with drafts, so the fused order
    alone = Query(context="Ranking functions weight terms [CIT].", diversity=0.0)
    assert rec.reranker_for(alone) is None and "learned" not in rec.recommend(alone)[0].components


def test_a_review_answers_its_placeholders_with_the_passage_reranker(local_trained):
    rec = Recommender.load(local_trained)
    text = "Term weighting with BM25 [CIT] is the usual first stage."
    start = text.index("[CIT]")
    document = Document(title=DRAFTS["draft-ir"][0], abstract=DRAFTS["draft-ir"][1], references=[], kind="text",
                        passages=[Passage(text, [Marker("[CIT]", start, start + 5, placeholder=True)], line=1)])
    place = DocumentReviewer(rec).places(document, [], set(), 5)[0]
    query = Query(title=document.title, abstract=document.abstract, context=place.context, k=5, diversity=0.0)
    learned = rec.rank(query, DEFAULT.with_(rerank=True))
    assert [s.paper_id for s in place.suggestions] == [rec.index.ids[p] for p in learned.positions]
    assert [s.score for s in place.suggestions] == pytest.approx(learned.scores.tolist())
    assert not np.allclose(rec.rank(query, DEFAULT).scores, learned.scores)  # not the fused scores


def test_the_graph_reranker_keeps_global_queries(local_trained, tmp_path):
    root = tmp_path / "both"
    shutil.copytree(local_trained, root)
    rec = Recommender.load(root)
    rr.train(rec, rr.training_queries(rec.index), progress=False)
    both = Recommender.load(root)
    draft = Query(title="Neural citation recommendation", abstract="Suggesting references for a draft.")
    passage = Query(title=draft.title, abstract=draft.abstract, context="Drafts need references [CIT].")
    assert both.reranker_for(draft) is both.reranker and both.reranker_for(passage) is both.local_reranker
    assert both.rank(draft, METHODS["learned"]).features.shape[1] == len(FEATURES)
    assert both.rank(passage, METHODS["learned"]).features.shape[1] == len(LOCAL_FEATURES)
    alone = Query(context="Drafts need references [CIT].")  # no passage-alone training: the graph reranker
    assert both.reranker_for(alone) is both.reranker


def test_an_index_without_the_passage_reranker_ranks_as_before(small_index, small_recommender):
    rec = small_recommender
    assert rec.local_reranker is None and not model_path(small_index, local=True).exists()
    for query in (Query(context="Ranking with BM25 [CIT] is standard.", title="Search", diversity=0.0),
                  Query(title="Deep residual networks", diversity=0.0)):
        assert rec.reranker_for(query) is None
        fused = rec.candidate_pool(query, DEFAULT)
        expected = [rec.index.ids[int(fused.candidates[j])] for j in np.argsort(-fused.scores, kind="stable")][:10]
        results = rec.recommend(query)
        assert [r.paper_id for r in results] == expected and all("learned" not in r.components for r in results)


def test_a_passage_model_stored_before_the_phrase_columns_keeps_working(local_trained, tmp_path):
    root = tmp_path / "older"
    shutil.copytree(local_trained, root)
    rec = Recommender.load(root)
    older = tuple(n for n in LOCAL_FEATURES if not n.startswith("phrase_"))
    contexts = local.read_contexts(write_jsonl(tmp_path / "contexts.jsonl", context_rows()), rec.index)
    pools = local.collect_pools(rec, contexts.queries, progress=False)
    X = np.concatenate([p.features for p in pools])
    y = np.concatenate([p.cited for p in pools]).astype(np.int8)
    g = np.concatenate([np.full(len(p.cited), i) for i, p in enumerate(pools)])
    save_reranker(root, rr.fit(X, y, "lambdarank", 0, g, features=older, layout=LOCAL_FEATURES, few_queries=True),
                  local=True)
    model = load_reranker(root, local=True)
    assert model.features == older and model.layout == LOCAL_FEATURES
    query = Query(title=DRAFTS["draft-ir"][0], abstract=DRAFTS["draft-ir"][1],
                  context="Term weighting with BM25 [CIT] is standard.", diversity=0.0)
    ranking = Recommender.load(root).rank(query, DEFAULT.with_(rerank=True))
    assert "learned" in ranking.components and len(ranking.positions) > 0


def test_a_damaged_passage_model_names_the_remedy(local_trained, tmp_path):
    root = tmp_path / "damaged"
    shutil.copytree(local_trained, root)
    path = model_path(root, local=True)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(LearnedModelError, match="--contexts FILE"):
        load_reranker(root, local=True)
    assert load_reranker(root) is None  # the graph reranker slot is untouched
    with pytest.raises(LearnedModelError, match="checksum"):
        Recommender.load(root)


def test_cli_trains_the_passage_reranker(index_copy, tmp_path):
    rows = [{**row, "citing_id": f"paper{i}"} for i, row in enumerate(context_rows(with_draft=False))]
    contexts = write_jsonl(tmp_path / "contexts.jsonl", rows)  # 13 citing papers, one context each
    proc = cli("train", "--index", index_copy, "--contexts", contexts)
    assert proc.returncode == 0, proc.stderr
    assert "trained on 13 contexts from 13 citing papers" in proc.stdout
    assert "tested by citing paper (5 folds): nDCG@10 " in proc.stdout
    assert "on 13 contexts of 13 citing papers it did not learn from (95% interval for as many other papers: " \
        in proc.stdout
    stored = model_path(index_copy, local=True).is_file()
    assert stored == ("model written to" in proc.stdout) != ("lower bound is not above zero" in proc.stdout)
    if stored:  # trained on passages alone: it serves passages alone, drafts keep the fused order
        rec = Recommender.load(index_copy)
        assert rec.local_reranker.info["contexts_without_draft"] == 13
        assert rec.reranker_for(Query(context="BM25 weights terms [CIT].")) is rec.local_reranker
        assert rec.reranker_for(Query(context="BM25 weights terms [CIT].", title="Search")) is None
