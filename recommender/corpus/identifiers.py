"""Identifiers of a paper as references and corpora write them: DOIs, arXiv ids and titles, normalised for matching."""
from __future__ import annotations

import re
import unicodedata

_NON_ALNUM_RE = re.compile(r"[^0-9a-z]+")
_DROPPED_RE = re.compile(r"[{}'\u2019]")  # BibTeX case braces and apostrophes join their words
_LATEX_ACCENT_RE = re.compile(r"\\[`'^\"~=.]\s*\{?([A-Za-z])\}?|\\[uvHckrbd]\{([A-Za-z])\}")
_DOI_PREFIX_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi\s*:\s*|doi\s+)", re.IGNORECASE)
# the archives of old-style ids (before April 2007), whose ids references also write bare: "[hep-th/9802068]"
_ARCHIVES = ("hep-th|hep-ph|hep-lat|hep-ex|gr-qc|astro-ph|cond-mat|quant-ph|math-ph|nucl-th|nucl-ex|physics|math|"
             "nlin|cs|q-bio|chao-dyn|solv-int|alg-geom|dg-ga|funct-an|q-alg|patt-sol|adap-org|comp-gas|chem-ph|"
             "atom-ph|bayes-an|plasm-ph|ao-sci|mtrl-th|supr-con|acc-phys|cmp-lg")
# one \s* per gap and a bounded archive name: "arxiv" + spaces, or "arxiv" + a long word, took quadratic time
_ARXIV_RE = re.compile(r"(?:arxiv\s*(?:[:.]\s*)?|arxiv\.org/(?:abs|pdf)/|\babs/)"
                       r"(\d{4}\.\d{4,5}|[a-z-]{1,20}(?:\.[a-z]{2})?/\d{7})(?:v\d+)?"
                       rf"|(?<![\w/-])((?:{_ARCHIVES})(?:\.[a-z]{{2}})?/\d{{7}})(?:v\d+)?\b", re.IGNORECASE)


def fold(text: str) -> str:
    """Lowercase text without accents, LaTeX accent commands, case braces or apostrophes; punctuation kept."""
    text = _LATEX_ACCENT_RE.sub(lambda m: m.group(1) or m.group(2), text or "")
    decomposed = unicodedata.normalize("NFKD", _DROPPED_RE.sub("", text))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def normalize_title(text: str) -> str:
    """Lowercase, strip accents, and collapse every run of non-alphanumerics to one space."""
    return _NON_ALNUM_RE.sub(" ", fold(text)).strip()


def normalize_doi(text: str) -> str:
    """Bare lowercase DOI: no `https://doi.org/` or `doi:` prefix, no trailing punctuation."""
    doi = _DOI_PREFIX_RE.sub("", (text or "").strip()).strip().rstrip(".,;").lower()
    while doi.endswith(")") and doi.count(")") > doi.count("("):
        doi = doi[:-1].rstrip(".,;")
    return doi


def normalize_arxiv(text: str) -> str:
    """Bare lowercase arXiv id without version ("1810.04805", "hep-th/9901001") found in text, else ""."""
    text = (text or "").strip()
    match = _ARXIV_RE.search(text) or _ARXIV_RE.search(f"arXiv:{text}")
    return (match.group(1) or match.group(2)).lower() if match else ""


def find_arxiv(text: str) -> str:
    """The bare lowercase arXiv id that text names with an arXiv prefix or address (an old-style one also bare),
    else ""."""
    match = _ARXIV_RE.search(text)
    return (match.group(1) or match.group(2)).lower() if match else ""
