import pytest

from recommender import Query, Recommender
from recommender.config import METHODS
from recommender.evaluation.evaluate import evaluate
from recommender.evaluation.queries import EvalQuery, queries_from_split
from recommender.pipeline.retrieve import own_work
from recommender.store.index import Index


def test_global_query_finds_the_topic_and_explains(small_recommender):
    rec = small_recommender
    results = rec.recommend(Query(title="Recommending citations for a paper draft",
                                  abstract="Neural embeddings of abstracts find the papers a draft should cite.", k=5))
    assert len(results) == 5
    assert [r.rank for r in results] == [1, 2, 3, 4, 5]
    assert sum(r.paper_id.startswith("cite") for r in results) >= 4
    top = results[0]
    assert top.explanation and top.components["dense"] > 0.3
    assert "lexical" in top.components


def test_local_query_with_placeholder(small_recommender):
    rec = small_recommender
    results = rec.recommend(Query(context="Ad hoc retrieval commonly scores documents with BM25 [CIT].", k=3))
    assert results[0].paper_id == "ir0"
    assert "bm25" in results[0].explanation.lower()


def test_filters_and_exclusions_are_respected(small_recommender):
    rec = small_recommender
    query = Query(title="citation recommendation", k=10, year_min=2012, year_max=2014, exclude={"cite3"})
    results = rec.recommend(query)
    assert results and all(2012 <= r.year <= 2014 for r in results)
    assert "cite3" not in {r.paper_id for r in results}
    venues = rec.recommend(Query(title="deep learning", k=10, venues=["cvpr"]))
    assert venues and {r.venue for r in venues} == {"CVPR"}


def test_graph_expansion_explains_the_citing_neighbour(small_recommender):
    rec = small_recommender
    ranking = rec.rank(Query(title="Reviewer support: missing citations in a submission", k=8), METHODS["hybrid+graph"])
    assert ranking.via, "references of the top neighbours joined the pool"
    assert ranking.components["graph"].max() > 0


def test_diversity_spreads_authors(small_recommender):
    rec = small_recommender
    query = Query(title="citation recommendation and reference lists", abstract="recommending citations", k=4)
    plain = rec.rank(query, METHODS["hybrid+graph"])
    diverse = rec.rank(query, METHODS["hybrid+graph"].with_(diversity=3.0))
    def authors(r):
        return {a for pos in r.positions for a in rec.index.authors[pos]}
    lovelace = lambda r: sum("Ada Lovelace" in rec.index.authors[p] for p in r.positions)
    assert lovelace(diverse) < lovelace(plain)
    assert len(authors(diverse)) >= len(authors(plain))


def test_the_query_authors_earlier_work_joins_and_rises(small_recommender):
    rec = small_recommender
    # an image-classification draft by Ada Lovelace: her citation papers are off-topic for the text alone
    query = Query(title="Residual networks for classifying images", k=10, authors=["A. Lovelace"])
    without = rec.rank(query, METHODS["hybrid+graph"])
    with_own = rec.rank(query, METHODS["hybrid+graph+own"])
    theirs = {rec.index.position[f"cite{i}"] for i in (0, 1, 2, 4)}
    assert theirs <= set(with_own.positions)
    assert sum(p in theirs for p in with_own.positions[:6]) > sum(p in theirs for p in without.positions[:6])
    top_own = [r for r in rec.recommend(Query(title="Residual networks for classifying images", k=10,
                                              authors=["Ada Lovelace"])) if r.components.get("own")]
    assert top_own and "one of your authors" in top_own[0].explanation
    assert own_work(Query(title="x", authors=["Nobody Known"]), METHODS["full"], rec.index.by_author) == {}


def test_a_query_without_authors_leaves_the_author_table_unbuilt(small_index):
    fresh = Recommender.from_index(Index.load(small_index))  # its own index: no other test looked anything up
    assert fresh.recommend(Query(title="Residual networks for classifying images", k=5)).recommendations
    assert "table" not in vars(fresh.index.by_author)  # seconds on a million papers: only for queries with authors
    fresh.recommend(Query(title="Residual networks for classifying images", k=5, authors=["A. Lovelace"]))
    assert "table" in vars(fresh.index.by_author)


def test_empty_or_bad_queries_are_refused(small_recommender):
    rec = small_recommender
    with pytest.raises(ValueError, match="Give a title"):
        rec.recommend(Query(context="[CIT]"))
    with pytest.raises(ValueError, match="year_min"):
        rec.recommend(Query(title="x", year_min=2020, year_max=2000))


def test_reference_list_marks_already_cited_papers(small_recommender, corpus_records):
    rec = small_recommender
    bib = "@article{a, title={Probabilistic relevance weighting with BM25}, year={2010}}\n"
    plain = "[3] K. He. Deep residual networks for image classification. CVPR 2012.\n"
    doi_line = "Someone. Unrelated title. doi:10.9999/bio.2\n"
    assert rec.already_cited(bib) == {"ir0"}
    assert rec.already_cited(plain + doi_line) == {"vision0", "bio2"}


def test_split_protocol_only_sees_older_papers_and_never_the_query(small_recommender, tmp_path):
    rec = small_recommender
    splits = tmp_path / "splits.json"
    splits.write_text('{"dev": ["cite5", "ir4", "cite0"]}')
    queries = queries_from_split(f"{splits}:dev", rec.index)
    assert [q.qid for q in queries] == ["cite5", "ir4"]  # cite0 cites nothing
    assert queries[0].relevant == {"cite2", "cite3", "cite4"}
    for item in queries:
        ranking = rec.rank(item.query, METHODS["full"], k=30)
        ids = [rec.index.ids[p] for p in ranking.positions]
        assert item.qid not in ids
        years = [rec.index.years[p] for p in ranking.positions]
        assert max(years) <= rec.index.years[rec.index.position[item.qid]]


def test_evaluate_runs_every_method_on_the_same_queries(small_recommender):
    rec = small_recommender
    queries = [EvalQuery("q1", Query(context="Documents are ranked by BM25 [CIT]."), {"ir0"}),
               EvalQuery("q2", Query(title="protein structure from sequences"), {"bio0"})]
    results = evaluate(rec, queries, progress=False)
    assert set(results) == set(METHODS) - {"learned", "tuned", "sbert+subref"}  # nothing trained
    for metrics in results.values():
        assert {"mrr", "map", "ndcg@10", "precision@10", "recall@1000", "f1@20"} <= set(metrics)
        assert metrics["recall@1000"] == 1.0
    assert results["hybrid"]["mrr"] == 1.0
