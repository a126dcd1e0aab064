"""What kind of publication a record is (conference paper, journal article, preprint, ...) and its arXiv id.

The rule, first match wins:

1. An explicit type in the record: BibTeX `entry_type` (`inproceedings`, `article`, ...), else a CSL,
   Crossref or OpenAlex `type` (`paper-conference`, `journal-article`, `preprint`, ...). OpenAlex calls
   conference papers "article" too, so a bare "article" in `type` does not decide.
2. No venue: a preprint when the record has an arXiv id, else "other".
3. The venue's words: journals named "Proceedings of the National Academy / of the IEEE / of the Royal
   Society / of the VLDB Endowment"; preprint servers (arXiv, CoRR, bioRxiv, SSRN ...); theses; reports;
   blogs and web sites ("other"); then conference words (Proceedings, Conference, Symposium, Workshop, ...);
   then journal words (Journal, Transactions, Letters, Bulletin, Review, Magazine, Forum, ...); then books
   and chapters (a publisher's name alone is a book, a title with a publisher or a Handbook is a chapter).
4. Known journal abbreviations (JMLR, TACL, TPAMI, ...), then a few known conference names (Interspeech,
   Advances in Neural Information Processing Systems, ...).
5. A venue written only in acronyms, with an optional year or parenthesised track ("SIGIR", "ACM DL",
   "WI 2006", "NAACL-HLT (Industry Papers)", "GlobalSIP") is a conference.
6. Anything else ("Science", "Neural Computation", "IEEE Access") is a journal.
"""
from __future__ import annotations

import re

from recommender.paper import Paper

KINDS = ("conference", "journal", "preprint", "book", "chapter", "report", "thesis", "other")

_ENTRY_TYPES = {  # BibTeX entry type -> kind; misc and unknown types decide by arXiv id only
    "inproceedings": "conference", "conference": "conference", "proceedings": "conference",
    "article": "journal", "book": "book", "inbook": "chapter", "incollection": "chapter",
    "techreport": "report", "report": "report", "phdthesis": "thesis", "mastersthesis": "thesis",
    "thesis": "thesis",
}
_TYPES = {  # CSL, Crossref and OpenAlex `type` -> kind
    "paper-conference": "conference", "proceedings-article": "conference",
    "article-journal": "journal", "journal-article": "journal", "review": "journal", "letter": "journal",
    "editorial": "journal", "preprint": "preprint", "posted-content": "preprint",
    "book": "book", "monograph": "book", "chapter": "chapter", "book-chapter": "chapter",
    "report": "report", "thesis": "thesis", "dissertation": "thesis",
    "dataset": "other", "webpage": "other", "post-weblog": "other", "software": "other",
}
_JOURNAL_PROCEEDINGS_RE = re.compile(
    r"\bproceedings of the (national academy|ieee\s*$|royal society|vldb endowment)", re.IGNORECASE)
_PREPRINT_RE = re.compile(r"\b(arxiv|corr|biorxiv|medrxiv|chemrxiv|ssrn|preprints?)\b", re.IGNORECASE)
_REPORT_RE = re.compile(r"\b(technical report|tech\. ?rep|report|white ?paper|working paper)\b", re.IGNORECASE)
_THESIS_RE = re.compile(r"\b(thesis|dissertation)\b", re.IGNORECASE)
_WEB_RE = re.compile(r"\b(blog|web ?site|web ?page|github)\b", re.IGNORECASE)
_CONFERENCE_RE = re.compile(r"\b(proc|proceedings|conference|conf|symposium|workshop|congress|colloquium|"
                            r"meeting|summit|track|findings of)\b", re.IGNORECASE)
_JOURNAL_RE = re.compile(r"\b(journal|transactions|letters|bulletin|reviews?|magazine|forum|quarterly|annals|"
                         r"acta|communications of|foundations and trends)\b", re.IGNORECASE)
_CHAPTER_RE = re.compile(r"\b(handbook|encyclopedia|companion)\b|\(.*\b(press|publishers?|prentice[- ]hall|"
                         r"springer|wiley|elsevier)\b.*\)", re.IGNORECASE)
_PUBLISHER_RE = re.compile(r"\b(press|publishers?|publishing|media|prentice[- ]hall|springer|wiley|elsevier|"
                           r"o['’]reilly)\b", re.IGNORECASE)
_JOURNAL_ABBREVIATIONS = {
    "jmlr", "tacl", "tois", "tkde", "tpami", "pami", "jasist", "jasis", "cacm", "pnas", "ijdl", "jair", "tmlr",
    "tist", "tweb", "csur", "tods", "vldbj", "ipm", "ip&m", "jdoc", "plos one",
}
_KNOWN_CONFERENCES_RE = re.compile(r"^(interspeech|eurospeech|advances in neural information processing systems|"
                                   r"advances in information retrieval|lecture notes in computer science)\b",
                                   re.IGNORECASE)
_VENUE_RULES = (  # in order: the first pattern found in the venue decides
    (_JOURNAL_PROCEEDINGS_RE, "journal"), (_PREPRINT_RE, "preprint"), (_THESIS_RE, "thesis"), (_REPORT_RE, "report"),
    (_WEB_RE, "other"), (_CONFERENCE_RE, "conference"), (_JOURNAL_RE, "journal"), (_CHAPTER_RE, "chapter"),
    (_PUBLISHER_RE, "book"),
)
_TRAILING_PARENS_RE = re.compile(r"\s*\([^)]*\)\s*$")
_ACRONYM_WORD_RE = re.compile(r"[^\W\d_]*[A-Z][^\W\d_]*[A-Z][\w’'&+-]*|[\d’'-]+", re.UNICODE)
_NEW_ARXIV_RE = re.compile(r"(?:arxiv:)?(\d{4}\.\d{4,5}(?:v\d+)?)", re.IGNORECASE)
_OLD_ARXIV_RE = re.compile(r"(?:arxiv:)?([a-z][a-z.-]*(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)", re.IGNORECASE)


def arxiv_id(paper: Paper) -> str:
    """The paper's arXiv identifier ("1802.08301", "hep-th/9901001") from `arxiv`, or a BibTeX `eprint`
    that is an arXiv id; "" when it has none."""
    for name in ("arxiv", "eprint"):
        value = str(paper.extra.get(name) or "").strip()
        match = _NEW_ARXIV_RE.fullmatch(value) or _OLD_ARXIV_RE.fullmatch(value)
        if match:
            return match.group(1)
    return ""


def explicit_kind(paper: Paper) -> str | None:
    """The kind named by the record's own type field, or None when it names none (or only "article"/"misc")."""
    entry_type = str(paper.extra.get("entry_type") or "").lower()
    if entry_type:
        return _ENTRY_TYPES.get(entry_type)
    return _TYPES.get(str(paper.extra.get("type") or "").lower())


def venue_kind(venue: str) -> str:
    """The kind a venue name suggests (rules 3 to 6 of the module docstring); "other" for no venue."""
    venue = " ".join(venue.split())
    if not venue:
        return "other"
    for pattern, kind in _VENUE_RULES:
        if pattern.search(venue):
            return kind
    if venue.lower() in _JOURNAL_ABBREVIATIONS:
        return "journal"
    if _KNOWN_CONFERENCES_RE.search(venue) or _is_acronym_name(venue):
        return "conference"
    return "journal"


def _is_acronym_name(venue: str) -> bool:
    """"SIGIR", "ACM DL", "WI 2006", "TREC-3", "COMPSTAT’2010", "NAACL-HLT (Industry Papers)", "RecSys"."""
    words = _TRAILING_PARENS_RE.sub("", venue).split()
    return all(_ACRONYM_WORD_RE.fullmatch(word) for word in words) and any(not w[0].isdigit() for w in words)


def publication_kind(paper: Paper) -> str:
    """One of `KINDS` for a paper, by the rule of the module docstring."""
    kind = explicit_kind(paper)
    if kind is not None:
        return kind
    if paper.extra.get("entry_type") or not paper.venue.strip():
        return "preprint" if arxiv_id(paper) else "other"
    return venue_kind(paper.venue)
