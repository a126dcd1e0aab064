"""The built-in demo corpus is sound data, loadable by the normal loader."""
from collections import Counter

from pages.ui.demo import DEMO_CORPUS
from recommender.loaders import load_corpus
from recommender.references import normalize_title


def test_demo_corpus_loads_cleanly_with_summaries_years_and_resolved_links():
    result = load_corpus(DEMO_CORPUS, strict=True)
    papers = result.papers
    assert len(papers) >= 200 and not result.problems
    titles = Counter(normalize_title(p.title) for p in papers)
    assert [t for t, n in titles.items() if n > 1] == []
    ids = {p.id for p in papers}
    assert all(ref in ids for p in papers for ref in p.references)
    assert all(p.abstract.strip() and isinstance(p.year, int) for p in papers)
    assert all(p.extra.get("summary_source") == "project" for p in papers)
    for paper in papers:
        curated = paper.extra.get("curated_references", [])
        assert set(curated) <= set(paper.references)
        assert not curated or paper.extra.get("added") or paper.references


def test_demo_corpus_has_a_connected_citation_structure():
    papers = load_corpus(DEMO_CORPUS).papers
    cited = {ref for p in papers for ref in p.references}
    linked = {p.id for p in papers if p.references} | cited
    assert len(linked) / len(papers) > 0.8
