"""Uncited claims: split a draft into sentences and score how much each looks like it needs a citation.

`split_sentences` cuts text into sentences with their character offsets (sentencex, then a few repairs for
scholarly abbreviations such as "Fig. 3", "Eq. (2)", "et al. [4]."). `ClaimScorer.score` gives each sentence
a citation-worthiness in [0, 1] from hand-written linguistic cues: attributions ("has been shown", "is well
known"), other people's work ("prior work", "widely used", "recently"), pointers to a source ("following",
"as in", "e.g."), other people's names and years, named methods and data sets, and against them the signs of
the document's own furniture ("Table 2", "Eq. (3)", "thus") and voice ("we", "this paper"). The cues are
written by hand; a dozen weights and the threshold were fitted on development papers (bench/claims.py).
A review reports a sentence without a citation marker when its score exceeds `CLAIM_THRESHOLD`.
"""
from __future__ import annotations

import math
import re

import sentencex

# Abbreviations after which a full stop does not end a sentence (lower case, without the stop).
_ABBREVIATIONS = frozenset("""
    al e.g i.e cf vs viz resp approx ca fig figs eq eqs tab tabs sec secs ch chap vol vols no nos pp p
    ref refs proc dr prof st jr thm lem prop cor def app appx alg ex eqn eqns
""".split())
_LAST_WORD = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)\.\W*$")
_LETTER = re.compile(r"[^\W\d_]")
# a bracketed citation marker after a sentence's final stop, at the end of the segmenter's piece
_TRAILING_MARKER = re.compile(r"[.!?][\"”’)]*\s+(\[[^\[\]\n]{1,40}\])\s*$")


def split_sentences(text: str) -> list[tuple[int, int, str]]:
    """Sentences of `text` as (start, end, sentence), with `text[start:end] == sentence`, stripped of spaces."""
    if not isinstance(text, str):
        raise TypeError(f"split_sentences needs a str, not {type(text).__name__}")
    spans: list[list[int]] = []
    paragraph_break = False
    for part in sentencex.get_sentence_boundaries("en", text):
        start, end = part["start_index"], part["end_index"]
        piece = text[start:end]
        if not piece.strip():
            paragraph_break = paragraph_break or piece.count("\n") > 1
            continue
        if spans and not paragraph_break and _continues(_tail(text, *spans[-1]), piece):
            spans[-1][1] = end
        else:
            spans.append([start, end])
        paragraph_break = piece[len(piece.rstrip()):].count("\n") >= 2  # (a regex took cubic time on "  \n" * n)
    for previous, following in zip(spans, spans[1:]):
        # "... search. [7] analyze ...": the segmenter ends a sentence after the marker that is the next one's subject
        moved = _TRAILING_MARKER.search(text, previous[0], previous[1])
        if moved and text[following[0]:following[1]].lstrip()[:1].islower() and \
                "\n\n" not in text[moved.start(1):following[0]]:
            previous[1] = following[0] = moved.start(1)
    if len(spans) > 1 and not _LETTER.search(text[spans[0][0]:spans[0][1]]):
        spans[1][0] = spans[0][0]  # a leading "1." (a heading's number) belongs to what follows
        del spans[0]
    result = []
    for start, end in spans:
        piece = text[start:end]
        start += len(piece) - len(piece.lstrip())
        end -= len(piece) - len(piece.rstrip())
        result.append((start, end, text[start:end]))
    return result


def _tail(text: str, start: int, end: int, size: int = 40) -> str:
    """The last `size` characters of text[start:end] without its trailing spaces: all `_continues` reads of a
    sentence (copying the whole sentence took quadratic time when thousands of pieces continue one)."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return text[max(start, end - size):end]


def _continues(previous: str, piece: str) -> bool:
    """Whether `piece` is the rest of the sentence `previous` rather than a new one."""
    if not _LETTER.search(piece):
        return True  # ". " or "(2). " or "[4]." left over by the segmenter
    if not previous.rstrip().endswith("."):
        return False
    head = piece.lstrip()
    if head[:1].islower():
        return True
    word = _LAST_WORD.search(previous.rstrip()[-40:])
    return bool(word) and word.group(1).lower() in _ABBREVIATIONS


def _cues(*patterns: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(patterns) + r")\b", re.IGNORECASE)


_PARTICIPLES = ("shown|proposed|studied|used|applied|developed|reported|observed|demonstrated|established|"
                "investigated|introduced|considered|suggested|found|prove[dn]|explored|employed|adopted|argued|"
                "discussed|analy[sz]ed|addressed|examined|described|documented|noted|recogni[sz]ed|known|"
                "conjectured|derived|measured|identified|presented|achieved|utili[sz]ed|implemented|tested|"
                "evaluated|calculated|computed|predicted|generali[sz]ed|extended|improved|modified")
_FURNITURE = ("[Tt]ables?|[Ff]ig(?:ure)?s?|[Ss]ec(?:tion)?s?|[Ee]q(?:uation)?s?|[Aa]ppendix|[Cc]hapter|"
              "[Dd]efinition")
_WORKS = ("works?|stud(?:y|ies)|research|papers?|results?|literature|approaches|methods|efforts|investigations|"
          "experiments|analyses|attempts|findings|observations|measurements|models|techniques|algorithms")
# The cue groups, counted per sentence (their weights are in _WEIGHTS).
_GROUPS: dict[str, re.Pattern[str]] = {
    # results reported as established: "has been shown", "were proposed by", "is well known"
    "attribution": _cues(
        rf"(?:has|have|had)\s+(?:also\s+|already\s+|recently\s+|previously\s+)?(?:been\s+(?:\w+ly\s+)?)?"
        rf"(?:{_PARTICIPLES}|become|surpassed|emerged|attracted|received|gained|enabled|led)",
        rf"(?:was|were)\s+(?:first\s+|originally\s+|recently\s+|previously\s+|later\s+)?(?:{_PARTICIPLES})"
        r"\s+(?:by|in)",
        r"(?:is|are)\s+(?:well|widely|commonly|generally|often)\s+(?:known|used|accepted|believed|studied|"
        r"adopted|regarded|considered|employed)",
        r"well[- ]known", r"it\s+is\s+known", r"according\s+to",
        r"as\s+(?:shown|reported|noted|observed|suggested|demonstrated|discussed|described|proposed|argued|"
        r"pointed\s+out)",
        r"(?:first|originally)\s+(?:proposed|introduced|described|studied|observed|suggested)", r"inspired\s+by",
        r"(?:following|similar(?:ly)?\s+to)\s+(?:the\s+)?(?:work|approach|method|idea|analysis|setup|protocol)s?"
        r"\s+of"),
    # other people's work and the field at large: "previous studies", "recently", "state of the art"
    "prior_work": _cues(
        rf"(?:prior|previous|earlier|existing|past|related|recent|seminal|pioneering|influential|classical|"
        rf"landmark|other)\s+(?:\w+\s+)?(?:{_WORKS})",
        r"(?:many|several|numerous|various|some|most)\s+(?:\w+\s+)?(?:authors|researchers|groups|studies|works|"
        r"papers|approaches|methods|models|systems|techniques|algorithms|experiments|efforts)",
        r"previously", r"(?:the|a)\s+(?:\w+\s+)?literature", r"a\s+(?:number|variety|range|wealth|body|line)\s+of",
        r"(?:has|have)\s+(?:attracted|received|gained|drawn)",
        r"(?:in|over)\s+(?:the\s+)?(?:recent|past|last)\s+(?:\w+\s+)?(?:years|decades?)", r"recent(?:ly)?",
        r"to\s+date", r"so\s+far", r"state[- ]of[- ]the[- ]art", r"widely", r"commonly", r"extensively",
        r"popular", r"conventional(?:ly)?", r"traditional(?:ly)?", r"reviews?", r"surveys?", r"authors",
        r"researchers", r"community", r"benchmarks?"),
    # pointers to a source: "following", "we refer to", "as in", "e.g.", "proposed by", "consistent with"
    "pointer": _cues(
        r"(?<!as\s)follow(?:s|ing|ed)?", r"refer(?:s|red)?\s+(?:\w+\s+){0,2}to", r"in\s+the\s+spirit\s+of",
        r"based\s+on", r"recall", r"adopt(?:s|ed|ing)?", r"borrow(?:s|ed|ing)?",
        rf"(?:{_PARTICIPLES}|given|defined|considered|obtained)\s+(?:in|by)(?!\s+(?:{_FURNITURE}))",
        r"as\s+in", r"see(?:\s+also)?", r"cf\.", r"e\.g\.", r"for\s+(?:example|instance)", r"such\s+as", r"like",
        r"details", r"(?:more|further)\s+(?:\w+\s+){0,3}(?:can|may)\s+be\s+found",
        r"for\s+(?:a|an)\s+(?:\w+\s+)?(?:review|overview|survey|discussion|introduction)",
        r"in\s+(?:contrast|line|agreement|accordance)\s+(?:to|with)", r"consistent\s+with",
        r"compared?\s+(?:to|with)", r"unlike", r"similar(?:ly)?\s+to"),
    # other people by name: "Devlin et al.", "Kabluchko's theorem", "Tao and Vu", "Perdew-Burke", "by Moggi"
    "names": re.compile(
        r"\bet\s+al\b|\b[A-Z][a-z]+(?:'s|’s)\s|\b[A-Z][a-z]+,?\s+and\s+[A-Z][a-z]+\b"
        r"|\b[A-Z][a-z]+[-–][A-Z][a-z]+\b"
        rf"|\b(?:of|by|to)\s+(?!(?:{_FURNITURE})\b)[A-Z][a-z]{{2,}}\b(?!\s+(?:\d|[IVX]+\b))"),
    # what other authors did, in the past tense: "... showed", "... proposed"
    "reported_verb": _cues(
        r"showed|proposed|introduced|proved|conjectured|demonstrated|reported|observed|developed|suggested|argued|"
        r"established|pointed\s+out|found|discovered|predicted|presented|designed|pioneered|coined|formulated|"
        r"obtained|derived|measured"),
    "year": re.compile(r"\b(?:19[5-9]\d|20[0-4]\d)\b"),
    # named methods, models and data sets: BERT, ImageNet, GPT-3, ResNet, LSTM (not Roman numerals, not TeX)
    "named_method": re.compile(
        r"(?<![\\$_{^A-Za-z0-9-])\b(?=[A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*[A-Z])(?![IVXLC]+\b)[A-Za-z][A-Za-z0-9-]{1,}\b"),
    # the author's own work and voice
    "own_work": _cues(
        r"we", r"our", r"us", r"ours", r"here(?:in)?", r"in\s+what\s+follows", r"let",
        r"this\s+(?:paper|work|study|article|section|chapter|thesis|manuscript|letter|note)",
        r"the\s+present\s+(?:paper|work|study)"),
    # the document's own furniture and reasoning: "Table 2", "Eq. (3)", "the next section", "thus"
    "furniture": _cues(
        rf"(?:{_FURNITURE})\.?\s*\(?\d", r"(?:above|below|following|previous|next)\s+(?:section|table|figure|"
        r"equation|chapter)", r"thus", r"therefore", r"respectively"),
}
_MATH = re.compile(r"\$[^$]*\$|\\[a-zA-Z]+|[=<>≤≥∑∫∈±×∀∃→⊂⊆]")
_LINE_END_HYPHEN = re.compile(r"(?<=[a-z])-\s*\n\s*(?=[a-z])")
# Logistic weights of the groups, the share of math and the length; fitted on the development papers of
# bench/claims.py and rounded (`python -m bench.claims --tune`), except "year", set by hand: that benchmark
# drops author-year citations together with their years, so it cannot weigh them.
_WEIGHTS = {"bias": -0.7, "attribution": 0.7, "prior_work": 0.8, "pointer": 1.2, "names": 1.2,
            "reported_verb": 0.1, "year": 0.5, "named_method": 0.2, "own_work": -0.2, "furniture": -1.4,
            "math": -0.1, "length": 0.4}
MAX_SENTENCE_CHARS = 2_000
CLAIM_THRESHOLD = 0.4  # best F0.5 (precision counted twice) on the development papers
# What the corpus says of a sentence, added to the logit (`corpus_evidence`): how far the cosine of its nearest
# paper lies above (or below) a "close" cosine, much more past a "paraphrase" cosine, where a sentence all but
# paraphrases one paper, and its margin over the next paper past a "distinct" margin (it describes that one paper,
# not a topic). A sentence that describes a corpus paper closely and distinctively reads as needing a citation,
# cue words or not; one far from every paper is less likely to lack a citation of this corpus. Chosen on half the
# ACM-CR development papers (the most cited sentences flagged with no more flags on the others than the cues
# alone), checked on the other half (bench/claims_evidence.py). In order: close weight, close cosine, paraphrase
# weight, paraphrase cosine, distinct weight, distinct margin.
EVIDENCE_WEIGHTS = (1.0, 0.65, 40.0, 0.7, 10.0, 0.1)


def corpus_evidence(closeness: float, margin: float, weights: tuple[float, ...] = EVIDENCE_WEIGHTS) -> float:
    """What a sentence's nearest paper (its cosine, and its margin over the next) adds to the claim logit."""
    close_weight, close, paraphrase_weight, paraphrase, distinct_weight, distinct = weights
    return (close_weight * (closeness - close) + paraphrase_weight * max(0.0, closeness - paraphrase)
            + distinct_weight * max(0.0, margin - distinct))


class ClaimScorer:
    """Citation-worthiness of sentences without a citation marker: a logistic mix of linguistic cue counts."""

    def features(self, sentence: str) -> dict[str, float]:
        """The scorer's inputs for one sentence (its first `MAX_SENTENCE_CHARS`: no sentence is longer, and some
        cues take quadratic time on a long run of one token): damped cue counts, math share, length."""
        sentence = _LINE_END_HYPHEN.sub("", sentence[:MAX_SENTENCE_CHARS])  # "pro-\nposed", as copied out of a PDF
        values = {name: math.log1p(len(pattern.findall(sentence))) for name, pattern in _GROUPS.items()}
        maths = sum(len(m) for m in _MATH.findall(sentence))
        values["math"] = maths / max(len(sentence), 1)
        values["length"] = math.log1p(len(_MATH.sub(" ", sentence).split())) - math.log(20)
        return values

    def score(self, sentences: list[str], nearest: list[tuple[float, float] | None] | None = None) -> list[float]:
        """A score in [0, 1] for each sentence; above `CLAIM_THRESHOLD` it reads as a claim needing a citation.
        `nearest`: per sentence, the cosine of its nearest corpus paper and its margin over the next (None: not
        asked)."""
        if isinstance(sentences, str):
            raise TypeError("score needs a list of sentences, not one string (split it with split_sentences)")
        scores = []
        for i, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise TypeError(f"each sentence must be a str, not {type(sentence).__name__}")
            values = self.features(sentence)
            logit = _WEIGHTS["bias"] + sum(_WEIGHTS[name] * value for name, value in values.items())
            found = nearest[i] if nearest is not None and i < len(nearest) else None
            if found is not None:
                logit += corpus_evidence(*found)
            scores.append(1.0 / (1.0 + math.exp(-logit)))
        return scores
