"""The body's sentences where they stand in a document's source, cited or not: what the language server scores
as uncited claims. LaTeX: the text between `\\begin{document}` and `\\end{document}` without comments, floats,
maths displays, verbatim text, the abstract and the bibliography (`documents.latex.LEFT_OUT_ENVIRONMENTS`);
Markdown: without the front matter, code blocks, HTML comments and what follows a References heading.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from recommender.documents.assemble import is_reference_heading
from recommender.documents.latex import LEFT_OUT_ENVIRONMENTS
from recommender.documents.markdown import heading_text
from recommender.documents.markers import find_markers
from recommender.review.claims import split_sentences
from recommender.serve.citations import find_citations
from recommender.serve.context import as_text, paragraphs

_LATEX_LEFT_OUT_RE = re.compile(r"\\begin\s*\{(" + "|".join(re.escape(name) for name in LEFT_OUT_ENVIRONMENTS) +
                                r")\}.*?(?:\\end\s*\{\1\}|\Z)", re.DOTALL)
_LATEX_COMMENT_RE = re.compile(r"(?<!\\)%[^\n]*")
_BEGIN_DOCUMENT_RE = re.compile(r"\\begin\s*\{document\}")
_END_DOCUMENT_RE = re.compile(r"\\end\s*\{document\}|\\bibliography\s*\{|\\printbibliography\b")
_MARKDOWN_LEFT_OUT_RE = re.compile(r"<!--.*?(?:-->|\Z)|^ {0,3}(```|~~~).*?(?:^ {0,3}\1[^\n]*$|\Z)",
                                   re.DOTALL | re.MULTILINE)
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n.*?^(?:---|\.\.\.)[ \t]*$", re.DOTALL | re.MULTILINE)
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*)$", re.MULTILINE)  # closing #s: `heading_text`


@dataclass(frozen=True)
class SourceSentence:
    start: int  # offsets of the sentence in the source
    end: int
    text: str  # as the engine reads it
    cited: bool  # it holds a citation (a command, a Pandoc key, a number or author-year in text)


def body_sentences(text: str, kind: str) -> list[SourceSentence]:
    """Every body sentence of the source with words in it, in order."""
    body = _body(text, kind)
    found = []
    for start, end in paragraphs(body, kind):
        for first, last, raw in split_sentences(body[start:end]):
            plain = as_text(raw, kind)
            if sum(ch.isalpha() for ch in plain) < 3:
                continue
            cited = bool(find_citations(raw, pandoc=kind != "latex") or find_markers(plain))
            found.append(SourceSentence(start + first, start + last, plain, cited))
    return found


def _body(text: str, kind: str) -> str:
    """The source with everything but the body blanked (spaces for every character but line ends)."""
    if kind == "latex":
        text = _LATEX_COMMENT_RE.sub(_blank, text)
        begin = _BEGIN_DOCUMENT_RE.search(text)
        if begin:
            text = _blank(text[:begin.end()]) + text[begin.end():]
        end = _END_DOCUMENT_RE.search(text)
        if end:
            text = text[:end.start()] + _blank(text[end.start():])
        return _LATEX_LEFT_OUT_RE.sub(_blank, text)
    if kind == "markdown":
        text = _FRONT_MATTER_RE.sub(_blank, text)
        text = _MARKDOWN_LEFT_OUT_RE.sub(_blank, text)
        references = next((m for m in _HEADING_RE.finditer(text)
                           if is_reference_heading(heading_text(m.group(1)))), None)
        return text[:references.start()] + _blank(text[references.start():]) if references else text
    return text


def _blank(text: str | re.Match) -> str:
    text = text.group(0) if isinstance(text, re.Match) else text
    return re.sub(r"[^\n]", " ", text)
