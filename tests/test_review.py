"""Whole-document review over a real index: places answered, cited papers never suggested, claims and missing
papers placed in the document; placeholders of a LaTeX source filled."""
import json

import pytest

from recommender.documents.fill import cite_after_sentences, fill_placeholders, placeholder_spans
from recommender.documents.model import Document, Marker, Passage
from recommender.references.parse import parse_reference_line
from recommender.review.document import DocumentReviewer, marker_context, uncited_sentences

TITLE = "Recommending citations for scientific drafts"
ABSTRACT = "We suggest references for a draft from its abstract and from the passages that need a citation."


def passage(text: str, line: int, markers: dict[str, list[int]] | None = None) -> Passage:
    """A passage whose markers are the given strings (each found in `text`) resolving to reference positions."""
    found = []
    for marker_text, references in (markers or {}).items():
        start = text.index(marker_text)
        found.append(Marker(marker_text, start, start + len(marker_text), placeholder=not references,
                            references=references))
    return Passage(text, sorted(found, key=lambda m: m.start), line=line)


@pytest.fixture(scope="module")
def document() -> Document:
    references = [parse_reference_line("A. Lovelace and A. Turing. 2010. Neural citation recommendation from paper "
                                       "abstracts. In JCDL."),
                  parse_reference_line("J. Doe. 2020. A paper the corpus does not hold. Nowhere.")]
    return Document(
        title=TITLE, abstract=ABSTRACT, kind="latex", references=references,
        passages=[
            passage("Drafts embedded by a neural encoder find related papers [1]. A passage with a citation "
                    "placeholder is matched against candidate papers to suggest the reference [CIT]. We build on both.",
                    line=10, markers={"[1]": [0], "[CIT]": []}),
            passage("The BM25 ranking function has been shown to weight term frequency and document length well for "
                    "ad hoc retrieval. We now describe our setup.", line=14),
            passage("Residual connections let very deep convolutional networks train well \\cite{?}.", line=18,
                    markers={"\\cite{?}": []}),
        ])


@pytest.fixture(scope="module")
def report(small_recommender, document):
    return DocumentReviewer(small_recommender).review(document, place_k=4)


def test_references_are_matched_and_never_suggested(report):
    assert report.matches == ["cite0", None]
    suggested = {s.paper_id for place in report.places for s in place.suggestions}
    suggested |= {m.paper_id for m in report.missing}
    assert "cite0" not in suggested


def test_each_place_gets_suggestions_from_its_own_context(report):
    assert [p.marker.text for p in report.places] == ["[1]", "[CIT]", "\\cite{?}"]
    existing, placeholder, vision = report.places
    assert existing.cited == ["cite0"] and not existing.marker.placeholder
    assert placeholder.context == ("A passage with a citation placeholder is matched against candidate papers to "
                                   "suggest the reference [CIT].")
    assert placeholder.suggestions[0].paper_id == "cite1"  # the passage paraphrases cite1's abstract
    assert vision.suggestions[0].paper_id.startswith("vision")
    assert all(len(p.suggestions) == 4 for p in report.places)


def test_uncited_claims_are_found_and_placed(report):
    sentences = [claim.sentence for claim in report.uncited]
    assert any(s.startswith("The BM25 ranking function has been shown") for s in sentences)
    assert "We now describe our setup." not in sentences
    assert all(claim.passage.line is not None for claim in report.uncited)


def test_missing_papers_point_into_the_document(report):
    assert report.missing and len({m.paper_id for m in report.missing}) == len(report.missing)
    scores = [m.score for m in report.missing if m.evidence.sentence]
    assert scores and scores == sorted(scores, reverse=True) and all(0 < score <= 1 for score in scores)
    assert report.missing[0].evidence.sentence and report.missing[0].evidence.closeness > 0.5
    assert all(m.passage is not None for m in report.missing)
    bm25 = [m for m in report.missing if m.paper_id == "ir0"]
    assert bm25 and bm25[0].passage.line == 14  # asked for by the uncited BM25 claim, placed there


def test_json_has_the_fixed_keys(report):
    data = json.loads(json.dumps(report.to_dict()))
    assert {"title", "abstract", "references", "places", "uncited", "missing"} <= set(data)
    assert data["references"][0]["text"] == report.document.references[0].raw
    assert data["references"][0]["paper_id"] == "cite0"
    assert data["references"][0]["check"]["verdict"] == "verified"  # the reference check (issue 28)
    place = data["places"][1]
    assert {"line", "context", "marker", "recommendations"} <= set(place)
    assert set(place["recommendations"][0]) == {"paper_id", "title", "score"}
    assert {"line", "sentence", "score", "recommendations"} <= set(data["uncited"][0])
    assert data["uncited"][0]["recommendations"]
    assert {"paper_id", "title", "score", "where", "evidence"} <= set(data["missing"][0])
    assert {"sentence", "closeness", "margin", "claim_score", "places"} == set(data["missing"][0]["evidence"])


def test_marker_context_is_the_marker_sentence_with_other_markers_removed(document):
    first = document.passages[0]
    assert marker_context(first, first.markers[0], window=0) == "Drafts embedded by a neural encoder find related papers [CIT]."
    assert "[1]" not in marker_context(first, first.markers[1], window=1)
    assert uncited_sentences(first) == ["We build on both."]


def test_placeholders_are_filled_in_order_and_comments_skipped():
    tex = "A \\cite{?} and \\citep[see][]{TODO} % \\cite{?} in a comment\nthen [CIT] and 50\\% \\cite{}. Done \\cite{x}."
    assert len(placeholder_spans(tex)) == 4
    filled = fill_placeholders(tex, [["a", "b"], ["c"], [], ["d"]])
    assert filled == ("A \\cite{a,b} and \\citep[see][]{c} % \\cite{?} in a comment\nthen [CIT] and 50\\% \\cite{d}. "
                      "Done \\cite{x}.")


def test_filling_refuses_a_count_mismatch():
    with pytest.raises(ValueError, match="2 placeholders"):
        fill_placeholders("\\cite{?} \\cite{?}", [["a"]])


TEX = r"""\begin{abstract}
BM25 weights terms well.
\end{abstract}
% BM25 weights terms well.
Intro. BM25   weights
terms~well.  Schr\"odinger's cat is \emph{famous} (see Section~\ref{sec:cat}). Is it $x$?
Dense retrieval uses two\\ encoders\footnote{Query and document.} at 10\,000 queries a second.
"""


def test_citations_are_written_after_sentences_found_in_the_source():
    filled, lost = cite_after_sentences(TEX, ["BM25 weights terms well.", "Is it $x$?"], [["bm25"], ["x"]],
                                        lines=[5, None])
    assert lost == []
    assert "Intro. BM25   weights\nterms~well~\\cite{bm25}.  " in filled
    assert "\nBM25 weights terms well.\n" in filled  # the abstract's copy: the paragraph's line comes first
    assert "% BM25 weights terms well.\n" in filled  # never in a comment
    assert "Is it $x$~\\cite{x}?" in filled


def test_sentences_are_matched_whatever_their_spacing_markup_and_accents():
    sentences = ["Schrödinger’s cat is famous (see Section ).",
                 "Dense retrieval uses two encoders [Query and document.] at 10 000 queries a second."]
    filled, lost = cite_after_sentences(TEX, sentences, [["cat"], ["dpr"]])
    assert lost == []
    assert "\\emph{famous} (see Section~\\ref{sec:cat})~\\cite{cat}. Is" in filled
    assert "\\footnote{Query and document.} at 10\\,000 queries a second~\\cite{dpr}.\n" in filled


def test_several_claims_in_one_paragraph_each_get_their_citation():
    sentences = ["Intro.", "BM25 weights terms well.", "Schrödinger's cat is famous (see Section).", "Is it $x$?"]
    filled, lost = cite_after_sentences(TEX, sentences, [[], ["a", "b"], ["c"], ["d", "a"]], lines=[5, 5, 5, 5])
    assert lost == []
    assert filled.count("\\cite{") == 3 and "Intro. BM25" in filled
    assert "terms~well~\\cite{a,b}.  Schr" in filled
    assert "Section~\\ref{sec:cat})~\\cite{c}. Is it $x$~\\cite{d,a}?" in filled


def test_a_sentence_written_twice_is_cited_at_each_copy_in_turn():
    tex = "\\begin{document}\nThe SMART system ranks documents. The SMART system ranks documents.\n\\end{document}\n"
    sentence = "The SMART system ranks documents."
    filled, lost = cite_after_sentences(tex, [sentence, sentence], [["a"], ["b"]], lines=[2, 2])
    assert lost == [] and "documents~\\cite{a}. The SMART system ranks documents~\\cite{b}." in filled
    filled, lost = cite_after_sentences(tex, [sentence] * 3, [["a"], ["b"], ["c"]], lines=[2, 2, 2])
    assert lost == [sentence] and "\\cite{c}" not in filled  # a third copy that is not there is said, not merged


def test_a_sentence_not_in_the_source_is_left_out_and_said():
    filled, lost = cite_after_sentences(TEX, ["BM25 weights terms badly.", "BM25 weights term"], [["a"], ["b"]])
    assert filled == TEX and lost == ["BM25 weights terms badly.", "BM25 weights term"]  # a part of a word: no
    assert cite_after_sentences(TEX, [], []) == (TEX, [])
    with pytest.raises(ValueError):
        cite_after_sentences(TEX, ["Intro."], [])


def test_placeholders_are_still_filled_after_claims_are_cited():
    tex = "A claim here. A place \\cite{?}.\n"
    cited, _ = cite_after_sentences(tex, ["A claim here."], [["a"]])
    assert fill_placeholders(cited, [["b"]]) == "A claim here~\\cite{a}. A place \\cite{b}.\n"


def test_a_vague_place_is_read_with_its_paragraph(small_recommender):
    vague = passage("The structure of a protein can now be predicted from its amino acid sequence with deep "
                    "networks. This was shown before [CIT].", line=3, markers={"[CIT]": []})
    document = Document(title="", abstract="", kind="text", references=[], passages=[vague])
    place, = DocumentReviewer(small_recommender).places(document, [], set(), k=3)
    assert place.context == "This was shown before [CIT]."  # what the report shows: the place's own sentence
    assert place.suggestions[0].paper_id == "bio0"
    alone, = DocumentReviewer(small_recommender, window=0).places(document, [], set(), k=3)
    assert alone.suggestions[0].paper_id != "bio0"


def test_papers_a_submission_paraphrases_without_citing_are_missing(small_recommender):
    """Issue 26: each paper that Recommend ranks first for an uncited sentence paraphrasing it is in `missing`."""
    from recommender.documents.read import read_document
    from recommender.query import Query

    paraphrases = {"ir3": "Questions and passages can be embedded separately by two transformer encoders and "
                          "matched by their inner products.",
                   "ir4": "A forest of random projection trees offers a middle ground for approximate nearest "
                          "neighbour queries over embeddings.",
                   "ir5": "Compressing the posting lists with variable byte codes makes query processing faster."}
    text = ("Fast and accurate retrieval\n\nAbstract\n\nWe study how search engines retrieve documents quickly.\n\n"
            "1 Introduction\n\nThe BM25 function weights term frequency and document length [1]. Feedback terms "
            "from the top documents expand the query [2]. " + " ".join(paraphrases.values())
            + "\n\nReferences\n\n[1] K. Sparck Jones. 2010. Probabilistic relevance weighting with BM25. In SIGIR.\n"
            "[2] G. Salton and K. Sparck Jones. 2011. Query expansion with pseudo relevance feedback. In SIGIR.\n")
    document = read_document(text.encode(), "submission.txt")
    reviewer = DocumentReviewer(small_recommender)
    report = reviewer.review(document)
    assert {"ir0", "ir1"} <= report.cited and not {"ir0", "ir1"} & {m.paper_id for m in report.missing}
    missing = {m.paper_id: m for m in report.missing}
    firsts = 0
    for pid, sentence in paraphrases.items():
        query = Query(title=document.title, abstract=document.abstract, context=f"{sentence} [CIT]",
                      exclude=report.cited, k=5, diversity=0.0)
        if small_recommender.index.ids[small_recommender.rank(query).positions[0]] == pid:
            firsts += 1
            assert pid in missing and missing[pid].evidence.sentence == sentence
    assert firsts >= 2


def test_a_placeholder_with_no_words_around_it_is_listed_unanswered(small_recommender):
    from recommender.documents.read import read_document

    document = read_document(b"A title\n\nDense retrieval embeds questions and passages [CIT].\n\n$x$ [CIT]\n", "a.md")
    places = DocumentReviewer(small_recommender).review(document).places
    assert len(places) == 2 and places[0].suggestions and not places[1].suggestions


def test_a_place_in_a_long_paragraph_is_asked_with_sentences_on_both_sides():
    """Past CONTEXT_CHARS the context grows one sentence on each side in turn, so the marker stays near its
    middle (a growth on one side is never undone by the other's)."""
    before = [f"Sentence {i} before the citation talks about retrieval models at some length here." for i in range(30)]
    after = [f"Sentence {i} after the citation talks about ranking functions at some length here." for i in range(30)]
    text = " ".join(before) + " Dense retrievers embed questions [CIT]. " + " ".join(after)
    start = text.index("[CIT]")
    passage = Passage(text, [Marker("[CIT]", start, start + 5, True)])
    context = marker_context(passage, passage.markers[0], window=None)
    assert "[CIT]" in context and len(context) <= 1600
    assert context.count("before the citation") >= 5 and context.count("after the citation") >= 5
