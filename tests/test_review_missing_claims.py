"""Issue 26: an uncited sentence that the missing list places a paper at is listed among the uncited claims, whatever
its cue words say, so that the reviewer sees the claim beside the paper it lacks."""
from recommender.documents.model import Passage
from recommender.documents.read import read_document
from recommender.review.claims import CLAIM_THRESHOLD, ClaimScorer
from recommender.review.document import (CLAIM_FROM_MISSING, DocumentReviewer, Evidence, MissingPaper, UncitedClaim,
                                         claims_with_missing)

PARAPHRASES = ["Questions and passages can be embedded separately by two transformer encoders and matched by their "
               "inner products.",
               "A forest of random projection trees offers a middle ground for approximate nearest neighbour queries "
               "over embeddings.",
               "Compressing the posting lists with variable byte codes makes query processing faster."]
SUBMISSION = ("Fast and accurate retrieval\n\nAbstract\n\nWe study how search engines retrieve documents quickly.\n\n"
              "1 Introduction\n\nThe BM25 function weights term frequency and document length [1]. Feedback terms "
              "from the top documents expand the query [2]. " + " ".join(PARAPHRASES)
              + "\n\nReferences\n\n[1] K. Sparck Jones. 2010. Probabilistic relevance weighting with BM25. In SIGIR.\n"
              "[2] G. Salton and K. Sparck Jones. 2011. Query expansion with pseudo relevance feedback. In SIGIR.\n")


def claim(sentence: str, score: float, order: int) -> UncitedClaim:
    return UncitedClaim(Passage(sentence), sentence, score, order=order)


def missing(paper_id: str, score: float, at: UncitedClaim | None) -> MissingPaper:
    return MissingPaper(paper_id, paper_id, score, None, at.sentence if at else "", "", Evidence(claim=at))


def test_a_sentence_a_missing_paper_is_placed_at_joins_the_claims_in_document_order():
    first, second, third = claim("One.", 0.9, 0), claim("Two.", 0.1, 1), claim("Three.", 0.2, 2)
    listed = claims_with_missing([first], [missing("p", 0.5, third), missing("q", 0.5, second),
                                           missing("r", 0.5, third), missing("topic", 0.9, None)])
    assert listed == [first, second, third]  # each once, in the document's order; the topic's paper adds none


def test_weak_evidence_adds_no_claim():
    first, second = claim("One.", 0.9, 0), claim("Two.", 0.1, 1)
    assert claims_with_missing([first], [missing("p", CLAIM_FROM_MISSING * 0.9, second)]) == [first]
    assert claims_with_missing([first], [missing("p", CLAIM_FROM_MISSING, second)]) == [first, second]


class CuesOnly(ClaimScorer):
    """The claim scorer without what the corpus says: the paraphrases, which have no cue words, read as no claims."""

    def score(self, sentences, nearest=None):
        return super().score(sentences)


def test_paraphrases_without_cue_words_are_listed_with_the_papers_they_lack(small_recommender):
    report = DocumentReviewer(small_recommender, claims=CuesOnly()).review(
        read_document(SUBMISSION.encode(), "submission.txt"))
    placed = [m for m in report.missing if m.evidence.claim is not None and m.score >= CLAIM_FROM_MISSING]
    assert placed, "the paraphrases point to corpus papers"
    below = [m for m in placed if m.evidence.claim.score < CLAIM_THRESHOLD]
    assert below, "some paraphrase reads below the claim threshold by its cues"
    listed = {c.sentence for c in report.uncited}
    assert all(m.evidence.sentence in listed for m in placed)  # listed for the paper it lacks
    assert [c.order for c in report.uncited] == sorted(c.order for c in report.uncited)
