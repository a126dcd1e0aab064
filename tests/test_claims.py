"""Uncited claims: sentence splitting of real draft text, and claim scores of sentences written for these tests."""
import pytest

from support.data import shared_data
from recommender.review.claims import CLAIM_THRESHOLD, ClaimScorer, split_sentences

CLAIMS = [
    "Transformer models have been shown to outperform recurrent networks on translation.",
    "Dense retrievers such as DPR have recently surpassed BM25 on open-domain question answering.",
    "It is well known that the graph isomorphism problem is not known to be NP-complete.",
    "Previous studies reported that dropout reduces overfitting in deep networks.",
    "BERT is widely used for text classification.",
    "Smith and Jones showed that the bound is tight for planar graphs.",
    "Contrastive pre-training has become the state of the art for image-text retrieval.",
    "The Kohn-Sham scheme is the standard approach for electronic structure calculations.",
    "Following prior work, we evaluate on the ImageNet validation set.",
    "Several authors have studied the stability of these solitons.",
    "The conjecture was proved by Kabluchko for all probability measures.",
    "Citation recommendation has attracted growing attention in recent years.",
]
NON_CLAIMS = [
    "We now describe our experimental setup.",
    "Table 2 lists the results.",
    "In this section we prove the main theorem.",
    "Let x be a point of the manifold and fix a chart around it.",
    "The remainder of this paper is organised as follows.",
    "Figure 3 shows the distribution of errors over the test set.",
    "We trained each model for ten epochs with a batch size of 32.",
    "This completes the proof.",
    "Our code is available online.",
    "Thus the two definitions agree.",
    "Substituting Eq. (4) into Eq. (2) gives the bound.",
    "Each run took about two hours on one GPU.",
]


def sentences(text: str) -> list[str]:
    spans = split_sentences(text)
    assert all(text[start:end] == sentence for start, end, sentence in spans)
    return [sentence for _, _, sentence in spans]


def test_abbreviations_numbers_and_citations_do_not_end_a_sentence():
    text = ("Lexical models, e.g. BM25, remain strong baselines [12]. Lin et al. report 0.35 MRR in Fig. 3 and "
            "Tab. 4, i.e. 3.5 points above dense retrieval (Smith et al., 2020). We follow Devlin et al. [4]. "
            "The loss is given in Eq. (2). It costs approx. 10 GPU hours vs. 40 for the baseline.")
    assert sentences(text) == [
        "Lexical models, e.g. BM25, remain strong baselines [12].",
        "Lin et al. report 0.35 MRR in Fig. 3 and Tab. 4, i.e. 3.5 points above dense retrieval "
        "(Smith et al., 2020).",
        "We follow Devlin et al. [4].",
        "The loss is given in Eq. (2).",
        "It costs approx. 10 GPU hours vs. 40 for the baseline.",
    ]


def test_text_copied_from_a_pdf_and_latex_source():
    pdf = ("2 Related Work\n\nCitation recommendation has been stud-\nied for two decades [3, 5-7]. Early\n"
           "systems used co-citation counts.\n\nNeural models followed. They need more data!")
    assert sentences(pdf) == [
        "2 Related Work",
        "Citation recommendation has been stud-\nied for two decades [3, 5-7].",
        "Early\nsystems used co-citation counts.",
        "Neural models followed.",
        "They need more data!",
    ]
    latex = r"As shown in Fig.~\ref{fig:loss}, the loss drops \cite{kingma2015}. Training then stops."
    assert sentences(latex) == [r"As shown in Fig.~\ref{fig:loss}, the loss drops \cite{kingma2015}.",
                                "Training then stops."]


def test_empty_huge_and_wrong_input():
    assert split_sentences("") == [] and split_sentences(" \n\n ") == []
    run_on = "word " * 40000 + "x" * 100000 + " end."
    assert [(start, end) for start, end, _ in split_sentences(run_on)] == [(0, len(run_on))]
    with pytest.raises(TypeError):
        split_sentences(b"bytes are not text")


def test_claims_score_above_non_claims():
    scorer = ClaimScorer()
    claims, others = scorer.score(CLAIMS), scorer.score(NON_CLAIMS)
    assert all(0.0 <= s <= 1.0 for s in claims + others)
    assert min(claims) > max(others)
    assert all(s < CLAIM_THRESHOLD for s in others)
    assert sum(s > CLAIM_THRESHOLD for s in claims) >= len(CLAIMS) - 2


def test_scores_do_not_depend_on_line_breaks_or_batching():
    scorer = ClaimScorer()
    wrapped = "Previous studies re-\nported that dropout reduces\noverfitting in deep networks."
    assert scorer.score([wrapped]) == pytest.approx(scorer.score([CLAIMS[3]]))
    assert scorer.score(CLAIMS[:3]) == [scorer.score([s])[0] for s in CLAIMS[:3]]
    assert scorer.score([]) == []


def test_text_without_cues_is_not_reported_and_bad_input_is_refused():
    scorer = ClaimScorer()
    assert all(s < CLAIM_THRESHOLD for s in scorer.score(["", "zzzzqqq xxyyzz", "$x^2 + y^2 = z^2$."]))
    with pytest.raises(TypeError, match="list of sentences"):
        scorer.score("One sentence passed as a string.")
    with pytest.raises(TypeError):
        scorer.score([None])


def test_scorer_beats_the_keyword_baseline_on_held_out_papers():
    from bench.claims import baseline_scores, halves
    from sklearn.metrics import average_precision_score

    held_out = halves(shared_data("unarxive-sample"))["held-out"]
    assert len(set(held_out.papers)) >= 15 and any(held_out.labels) and not all(held_out.labels)
    assert not any("[CIT]" in s or "\\cite" in s for s in held_out.sentences)
    ours = average_precision_score(held_out.labels, ClaimScorer().score(held_out.sentences))
    baseline = average_precision_score(held_out.labels, baseline_scores(held_out.sentences))
    assert ours > baseline + 0.05


def test_a_marker_that_opens_a_sentence_stays_with_it():
    """"... search. [7] analyze ...": the segmenter ends the previous sentence after the marker; the marker is the
    next sentence's subject (ACM style), so that sentence is not an uncited one."""
    text = "We study search. [7] analyze the growth of image collections. It was shown before. [4] We go on."
    assert sentences(text) == ["We study search.", "[7] analyze the growth of image collections.",
                               "It was shown before. [4]", "We go on."]


def test_the_review_benchmark_writes_a_removed_citation_as_its_authors_would():
    """bench.review_real: where a citation was removed, no gap is left ("theory ."), and unArXive's cross-references
    ("Fig. REF") read as a reader sees them; the removed sentence a flag must hit is written the same way."""
    from bench.review_real import Submission, write_text

    submission = Submission("paper", "Title", "Abstract", [[
        ("The model is realized in twistor string theory [CIT].", ["removed"]),
        ("See Fig. REF for the setup of [CIT] (see [CIT]).", ["kept", "also-kept"])]])
    submission.removed["removed"] = submission.paragraphs[0][0][0]
    text = write_text(submission, entry=lambda pid: f"Entry of {pid}.")
    assert "twistor string theory." in text and "theory ." not in text
    assert "See Fig. 1 for the setup of [1, 2]." in text and "REF" not in text  # "(see )" left empty: removed
    assert submission.written["removed"] == "The model is realized in twistor string theory."
    assert "[1] Entry of kept.\n[2] Entry of also-kept." in text
