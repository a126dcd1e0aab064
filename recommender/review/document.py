"""Review a whole draft or submission: its references matched, every citation place answered, uncited claims
found, and the corpus papers it misses, each tied to the passage where it belongs.

    review = DocumentReviewer(recommender).review(read_document(path))
    review.to_dict()  # the fixed JSON of `python -m recommender review`
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from recommender.review.claims import CLAIM_THRESHOLD, ClaimScorer, split_sentences
from recommender.config import DEFAULT
from recommender.documents.limits import MAX_CLAIMS, MAX_PLACES
from recommender.documents.model import Document, Marker, Passage
from recommender.query import CITATION_MARK, Query
from recommender.pipeline.recommender import Recommender
from recommender.references.check import Check, RetractionIndex, Source, check_references
from recommender.references.corpus_source import CorpusSource
from recommender.references.match import ReferenceIndex
from recommender.references.parse import ReferenceItem
from recommender.references.retractions import RetractionStore

PLACE_K = 5  # suggestions per citation place
# sentences read on each side of a place's own; None: its whole paragraph, the place's sentence weighed apart
# (`passage.focus_sentences`; bench.review_places on ACM-CR: beats 0, 1 and 2)
CONTEXT_WINDOW: int | None = None
# a place in a longer paragraph is asked with the sentences nearest its own, up to this length (so that a review
# costs time in proportion to the document, however long its paragraphs)
CONTEXT_CHARS = 1_500
MISSING_K = 10  # papers in the "missing" list
MAX_CLAIMS_ASKED = 30  # uncited sentences (likeliest first) asked in local mode: the missing list's evidence
MAX_ASKED_PER_PAPER = 3  # of them, sentences whose nearest paper is the same (near-duplicates use up no more)
EVIDENCE_SENTENCES = 2_000  # uncited sentences asked of the corpus (the first ones); the rest judged by cues alone
# A sentence's suggestions share its belief (1 for a placeholder, the claim score for a claim) by a softmax of
# their scores at this temperature: a clear winner takes most of it, a close race spreads it. This, MIN_EVIDENCE
# and TOPIC_WEIGHT were chosen on half the ACM-CR development papers and checked on the other half
# (bench/review_real.py; docs/benchmarks.md, "Reviewer check on real papers").
SHARE_TEMPERATURE = 0.02
MIN_EVIDENCE = 0.05  # below this, what sentences say of a paper is no evidence; the document's topic fills in
# an uncited sentence to which a missing paper owes at least this belief is listed among the uncited claims, whatever
# its cues say: the missing list points the reviewer to it (chosen on the tune halves of ACM-CR and unArXive,
# bench/review_real.py --split tune: the most removed sentences flagged at no more false alarms than the cues alone)
CLAIM_FROM_MISSING = 0.1
TOPIC_DEPTH = 100  # papers of the whole document's query that weigh a sentence's evidence by their score there
TOPIC_WEIGHT = 2.0  # how much more a paper counts at the top of that list
MAX_HOMES = 50  # body passages a paper may be placed in when the document has no citation place or claim


@dataclass
class Suggestion:
    paper_id: str
    title: str
    score: float

    def to_dict(self) -> dict:
        return {"paper_id": self.paper_id, "title": self.title, "score": round(self.score, 4)}


@dataclass
class Place:
    """A citation marker (or placeholder) with its context and the papers suggested for it."""

    passage: Passage
    marker: Marker
    context: str  # the marker's sentence, the marker written [CIT], other markers removed
    cited: list[str]  # corpus ids of the references the marker already cites
    suggestions: list[Suggestion]

    def to_dict(self) -> dict:
        return {**self.passage.where, "context": self.context, "marker": self.marker.text,
                "placeholder": self.marker.placeholder, "cited": self.cited,
                "recommendations": [s.to_dict() for s in self.suggestions]}


@dataclass
class UncitedClaim:
    """A sentence without a citation that reads like it needs one, and the papers it may lack."""

    passage: Passage
    sentence: str
    score: float
    suggestions: list[Suggestion] = field(default_factory=list)
    asked: bool = False  # the suggestions come from a local-mode query (else: the nearest papers in meaning)
    ranked: list[Suggestion] = field(default_factory=list)  # that query's answer, MISSING_K long: the evidence
    order: int = 0  # its place among the document's uncited sentences

    def to_dict(self) -> dict:
        return {**self.passage.where, "sentence": self.sentence, "score": round(self.score, 4),
                "recommendations": [s.to_dict() for s in self.suggestions]}


@dataclass
class Evidence:
    """What points to one missing paper: the sentence that points hardest, and how many agree."""

    strength: float = 0.0  # belief that the paper is missing, from all sentences (noisy-or of their shares)
    best: float = 0.0  # the strongest single sentence's share
    sentence: str = ""
    passage: Passage | None = None
    claim_score: float = 0.0  # that sentence's belief (1.0 for a placeholder)
    margin: float = 0.0  # the paper's score there minus the next candidate's (the leader's, when it is not first)
    closeness: float = 0.0  # cosine of that sentence and the paper (confidence.py's absolute scale)
    places: int = 0  # sentences that suggest the paper
    claim: UncitedClaim | None = None  # the uncited sentence that points hardest (None: a placeholder, the topic)

    def to_dict(self) -> dict:
        return {"sentence": self.sentence or "the topic of the whole document",
                "closeness": round(self.closeness, 4), "margin": round(self.margin, 4),
                "claim_score": round(self.claim_score, 4), "places": self.places}


@dataclass
class MissingPaper:
    """A corpus paper the document does not cite, the passage it belongs to, and why."""

    paper_id: str
    title: str
    score: float
    passage: Passage | None  # None when the document has no body (title and abstract only)
    sentence: str  # the context that asked for it ("": the whole document)
    why: str
    evidence: Evidence

    def to_dict(self) -> dict:
        where = {**self.passage.where, "passage": _snippet(self.passage.text)} if self.passage else {}
        return {"paper_id": self.paper_id, "title": self.title, "score": round(self.score, 4), "where": where,
                "why": self.why, "evidence": self.evidence.to_dict()}


@dataclass
class DocumentReview:
    document: Document
    matches: list[str | None]  # the corpus paper each reference is, parallel to document.references
    cited: set[str] = field(default_factory=set)  # every corpus id the references matched
    places: list[Place] = field(default_factory=list)
    uncited: list[UncitedClaim] = field(default_factory=list)
    missing: list[MissingPaper] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # the reader's and the review's, for the user
    checks: list[Check] = field(default_factory=list)  # the reference check's verdict on each reference

    def to_dict(self) -> dict:
        doc = self.document
        checks = self.checks or [None] * len(doc.references)
        return {
            "title": doc.title,
            "abstract": doc.abstract,
            "references": [{"text": item.raw, "paper_id": pid, **({"check": check.to_dict()} if check else {})}
                           for item, pid, check in zip(doc.references, self.matches, checks)],
            "places": [p.to_dict() for p in self.places],
            "uncited": [u.to_dict() for u in self.uncited],
            "missing": [m.to_dict() for m in self.missing],
            "notices": self.notices,
        }


class DocumentReviewer:
    """Reviews documents against one index."""

    def __init__(self, recommender: Recommender, references: ReferenceIndex | None = None,
                 claims: ClaimScorer | None = None, window: int | None = CONTEXT_WINDOW,
                 retractions: RetractionIndex | None = None):
        """`retractions`: the Retraction Watch store the reference check consults (default: the imported one,
        `references.retractions.default_store_path()`, when there is one)."""
        self.recommender, self.window = recommender, window
        self.references = references or ReferenceIndex(recommender.index.all_papers())
        self.retractions = retractions if retractions is not None else RetractionStore.open()
        self.claims = claims or ClaimScorer()
        self.config = DEFAULT.with_(rerank=recommender.reranker is not None)

    @cached_property
    def corpus_source(self) -> CorpusSource:
        """The corpus as the reference check's first source (built on the first review, over `references`)."""
        return CorpusSource.from_index(self.recommender.index, self.references)

    def check_references(self, items: list[ReferenceItem], online: list[Source] = ()) -> list[Check]:
        """The reference check's verdicts: the corpus, then the `online` sources (none by default), and the
        Retraction Watch store."""
        return check_references(list(items), [self.corpus_source, *online], self.retractions)

    def review(self, document: Document, *, place_k: int = PLACE_K, missing_k: int = MISSING_K,
               exclude: set[str] = frozenset(), online: list[Source] = ()) -> DocumentReview:
        """The whole review; `exclude` names papers never to suggest (besides those the references cite);
        `online`: sources the reference check asks after the corpus (`references.run.sources(online=True)`)."""
        found = [self.references.match_item(item) for item in document.references]
        matches = [min(ids) if ids else None for ids in found]
        cited = set(exclude).union(*found)
        report = DocumentReview(document, matches, cited, notices=list(document.notices))
        report.checks = self.check_references(document.references, online)
        report.places = self.places(document, matches, cited, place_k, report.notices)
        report.uncited, asked = self._uncited(document, cited, place_k, report.notices)
        report.missing = self._missing(document, report, asked, cited, missing_k)
        report.uncited = claims_with_missing(report.uncited, report.missing)
        return report

    def places(self, document: Document, matches: list[str | None], cited: set[str], k: int = PLACE_K,
               notices: list[str] | None = None) -> list[Place]:
        """Every citation marker and placeholder of the document with its suggestions (`cited` never suggested).
        Past MAX_PLACES places, placeholders first and then the first in the document are answered (said in
        `notices`)."""
        spots = [(passage, marker, split) for passage in document.passages if passage.markers
                 for split in [_Split(passage)] for marker in passage.markers]
        answered = set(sorted(range(len(spots)), key=lambda i: (not spots[i][1].placeholder, i))[:MAX_PLACES])
        if len(spots) > MAX_PLACES and notices is not None:
            notices.append(f"The document has {len(spots):,} citation places; the first {MAX_PLACES:,} (its "
                           "placeholders first) were answered.")
        asked = [marker_context(passage, marker, self.window, split) if i in answered else ""
                 for i, (passage, marker, split) in enumerate(spots)]
        answers = self.suggest(document, asked, cited, k)
        return [Place(passage, marker, marker_context(passage, marker, 0, split),
                      [pid for pid in (matches[i] for i in marker.references if i < len(matches)) if pid], answer)
                for (passage, marker, split), answer in zip(spots, answers)]

    def suggest(self, document: Document, contexts: list[str], exclude: set[str], k: int) -> list[list[Suggestion]]:
        """Local-mode suggestions for each context, the document's title and abstract as its draft (their texts
        encoded in one batch first)."""
        queries = [Query(title=document.title, abstract=document.abstract, context=context, k=k, exclude=exclude,
                         diversity=0.0) if _has_words(context.replace(CITATION_MARK, "")) else None
                   for context in contexts]
        self.recommender.prepare([q for q in queries if q is not None], self.config)
        return [self._answer(query) if query is not None else [] for query in queries]

    def _answer(self, query: Query) -> list[Suggestion]:
        # a passage: reranked by the index's passage reranker when it has one (`train --contexts`)
        rerank = self.recommender.reranker_for(query) is not None
        ranking = self.recommender.rank(query, self.config.with_(rerank=rerank))
        index = self.recommender.index
        return [Suggestion(index.ids[pos], index.titles[pos], float(score))
                for pos, score in zip(ranking.positions, ranking.scores)]

    def _uncited(self, document: Document, cited: set[str], k: int,
                 notices: list[str]) -> tuple[list[UncitedClaim], list[UncitedClaim]]:
        """Sentences without a citation that read like claims needing one, in document order: the cues of
        `claims.py` with what the corpus says (how closely and distinctively the sentence describes one paper);
        the MAX_CLAIMS likeliest (the rest counted in `notices`), each with its suggestions. Also the
        MAX_CLAIMS_ASKED likeliest uncited sentences, claims or not, asked in local mode: the missing list's
        evidence."""
        candidates = [(passage, sentence) for passage in document.passages
                      for sentence in uncited_sentences(passage)]
        if not candidates:
            return [], []
        nearest = self.recommender.nearest_papers([s for _, s in candidates[:EVIDENCE_SENTENCES]], cited, max(k, 2))
        evidence = [(float(cosines[0]), float(cosines[0] - (cosines[1] if len(cosines) > 1 else 0.0)))
                    if len(cosines) else None for _, cosines in nearest]
        scores = self.claims.score([sentence for _, sentence in candidates], evidence)
        index = self.recommender.index
        sentences = []
        for i, ((passage, sentence), score) in enumerate(zip(candidates, scores)):
            positions, cosines = nearest[i] if i < len(nearest) else ([], [])
            sentences.append(UncitedClaim(passage, sentence, float(score),
                                          [Suggestion(index.ids[p], index.titles[p], float(c))
                                           for p, c in zip(positions[:k], cosines[:k])], order=i))
        asked, per_paper = [], {}
        for claim in sorted(sentences, key=lambda claim: -claim.score):
            nearest_id = claim.suggestions[0].paper_id if claim.suggestions else ""
            if len(asked) < MAX_CLAIMS_ASKED and per_paper.get(nearest_id, 0) < MAX_ASKED_PER_PAPER:
                asked.append(claim)
                per_paper[nearest_id] = per_paper.get(nearest_id, 0) + 1
        answers = self.suggest(document, [f"{claim.sentence} {CITATION_MARK}" for claim in asked], cited,
                               max(k, MISSING_K))
        for claim, answer in zip(asked, answers):
            claim.suggestions, claim.ranked, claim.asked = answer[:k], answer, True
        claims = [claim for claim in sentences if claim.score >= CLAIM_THRESHOLD]
        if len(claims) > MAX_CLAIMS:
            notices.append(f"{len(claims):,} sentences read like uncited claims; the {MAX_CLAIMS:,} likeliest are "
                           "listed.")
            kept = {id(claim) for claim in sorted(claims, key=lambda claim: -claim.score)[:MAX_CLAIMS]}
            claims = [claim for claim in claims if id(claim) in kept]
        return claims, asked

    def _missing(self, document: Document, report: DocumentReview, asked: list[UncitedClaim], cited: set[str],
                 k: int) -> list[MissingPaper]:
        """The papers the document's sentences point to hardest (placeholders, and the uncited sentences `asked`,
        each as strongly as it reads like a claim), each placed at its sentence; papers close to the whole
        document's topic only fill what is left, and say so."""
        found: dict[str, Evidence] = {}
        sources = [(place.context, 1.0, place.passage, place.suggestions)
                   for place in report.places if place.marker.placeholder and place.suggestions]
        sources += [(claim.sentence, claim.score, claim.passage, claim.ranked, claim) for claim in asked
                    if claim.ranked]
        for sentence, belief, passage, suggestions, *claim in sources:
            scores = np.array([s.score for s in suggestions], dtype=np.float64)
            shares = np.exp((scores - scores.max()) / SHARE_TEMPERATURE)
            shares *= belief / shares.sum()
            for rank, (suggestion, share) in enumerate(zip(suggestions, shares)):
                evidence = found.setdefault(suggestion.paper_id, Evidence())
                evidence.strength = 1.0 - (1.0 - evidence.strength) * (1.0 - share)
                evidence.places += 1
                if share > evidence.best:
                    rival = scores[1] if rank == 0 and len(scores) > 1 else scores[0]
                    evidence.best, evidence.sentence, evidence.passage = float(share), sentence, passage
                    evidence.claim_score, evidence.margin = belief, float(scores[rank] - rival)
                    evidence.claim = claim[0] if claim else None
        index = self.recommender.index
        topic: list[str] = []
        if document.title or document.abstract:
            query = Query(title=document.title, abstract=document.abstract, k=TOPIC_DEPTH, exclude=cited,
                          diversity=0.0)
            ranking = self.recommender.rank(query, self.config)
            topic = [index.ids[p] for p in ranking.positions]
            top = float(ranking.scores[0]) if len(ranking.scores) else 1.0
            on_topic = {pid: float(score) / max(top, 1e-9) for pid, score in zip(topic, ranking.scores)}
            for pid, evidence in found.items():  # evidence for a paper on the document's topic weighs more
                evidence.strength *= 1.0 + TOPIC_WEIGHT * on_topic.get(pid, 0.0)
        chosen = sorted((pid for pid, e in found.items() if e.strength >= MIN_EVIDENCE),
                        key=lambda pid: -found[pid].strength)[:k]
        for evidence in found.values():
            evidence.strength /= 1.0 + TOPIC_WEIGHT if topic else 1.0  # back to a belief in [0, 1]
        topical = [pid for pid in topic if pid not in chosen][:k - len(chosen)]
        found.update({pid: Evidence() for pid in topical})
        chosen += topical
        homes = self._homes(report, [pid for pid in chosen if found[pid].passage is None])
        missing = []
        for pid in chosen:
            evidence = found[pid]
            if evidence.sentence:
                evidence.closeness = float(self.recommender.closeness(Query(context=evidence.sentence).context_text,
                                                                      [pid])[0])
            why = (f"suggested for “{_snippet(evidence.sentence, 120)}”" if evidence.sentence
                   else "close to the topic of the whole document (no sentence points to it)")
            missing.append(MissingPaper(pid, index.titles[index.position[pid]], float(evidence.strength),
                                        evidence.passage or homes.get(pid), evidence.sentence, why, evidence))
        return missing

    def _homes(self, report: DocumentReview, paper_ids: list[str]) -> dict[str, Passage]:
        """For each paper, the passage of the answered citation place or best uncited claim closest to it in
        meaning (their texts were encoded for their own queries); without either, the closest of the first body
        passages."""
        spots = [(place.passage, Query(context=place.context).context_text) for place in report.places
                 if place.suggestions]
        spots += [(claim.passage, claim.sentence)
                  for claim in sorted(report.uncited, key=lambda claim: -claim.score)[:MAX_CLAIMS_ASKED]]
        if not spots:
            spots = [(p, strip_markers(p)) for p in report.document.passages if _has_words(p.text)][:MAX_HOMES]
        if not paper_ids or not spots:
            return {}
        index = self.recommender.index
        vectors = self.recommender.encode([text for _, text in spots])
        papers = np.asarray(index.dense[[index.position[pid] for pid in paper_ids]])
        best = (papers @ vectors.T).argmax(axis=1)
        return {pid: spots[j][0] for pid, j in zip(paper_ids, best)}


def claims_with_missing(claims: list[UncitedClaim], missing: list[MissingPaper],
                        least: float = CLAIM_FROM_MISSING) -> list[UncitedClaim]:
    """The uncited claims, and each uncited sentence that a missing paper of at least `least` belief is placed at
    (the sentence whose suggestions point to it hardest), in document order."""
    listed = {id(claim) for claim in claims}
    more = [paper.evidence.claim for paper in missing if paper.evidence.claim is not None
            and paper.score >= least and id(paper.evidence.claim) not in listed]
    more = list({id(claim): claim for claim in more}.values())
    return sorted(claims + more, key=lambda claim: claim.order) if more else claims


class _Split:
    """A passage's sentences, their starts and its markers in order, worked out once for all its markers."""

    def __init__(self, passage: Passage):
        self.sentences = split_sentences(passage.text)
        self.starts = [start for start, _, _ in self.sentences]
        self.ordered = passage.ordered_markers()


def marker_context(passage: Passage, marker: Marker, window: int | None = CONTEXT_WINDOW,
                   split: _Split | None = None) -> str:
    """The sentence holding `marker` and `window` sentences on each side (None: the whole passage, or past
    CONTEXT_CHARS the sentences nearest the marker's up to that length), the marker written [CIT] and the
    passage's other markers removed. `split`: the passage's, when already worked out for another marker."""
    def kept(other: Marker) -> bool:
        return other is marker

    if window is None and len(passage.text) <= CONTEXT_CHARS:
        return passage.render(marked=kept, ordered=split.ordered if split is not None else None)
    split = split or _Split(passage)
    sentences, ordered = split.sentences, split.ordered
    if not sentences:
        return passage.render(marked=kept, ordered=ordered)
    here = max(0, bisect_right(split.starts, marker.start) - 1)
    if window is not None:
        first, last = max(0, here - window), min(len(sentences) - 1, here + window)
    else:
        first = last = here
        while True:  # one sentence more on each side while the whole stays within CONTEXT_CHARS
            grown = False
            for before, after in ((0, 1), (1, 0)):  # each side grows from where the other left it
                wider = (first - before, last + after)
                if 0 <= wider[0] and wider[1] < len(sentences) and \
                        sentences[wider[1]][1] - sentences[wider[0]][0] <= CONTEXT_CHARS:
                    (first, last), grown = wider, True
            if not grown:
                break
    return passage.render(sentences[first][0], max(sentences[last][1], marker.end), kept, ordered)


def uncited_sentences(passage: Passage) -> list[str]:
    """The passage's sentences that hold no citation marker (markers of other kinds removed)."""
    starts = sorted(m.start for m in passage.markers)

    def holds_marker(start: int, end: int) -> bool:  # a marker starts in [start, end)
        i = bisect_left(starts, start)
        return i < len(starts) and starts[i] < end

    return [" ".join(sentence.split()) for start, end, sentence in split_sentences(passage.text)
            if not holds_marker(start, end) and _has_words(sentence)]


def strip_markers(passage: Passage) -> str:
    return passage.render()


def _has_words(text: str) -> bool:
    return sum(ch.isalpha() for ch in text) >= 3


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
