"""What a document being written asks at a cursor: its draft (title and abstract) and the local-mode query for a
citation there, from LaTeX, Markdown/Pandoc or plain text as typed (unfinished commands and unbalanced braces
included). Shared by the language server and the HTTP API.

    draft_of(text)                    -> (title, abstract)
    citation_query(text, offset, k=)  -> Query: the cursor's paragraph with [CIT] at the cursor, the draft
"""
from __future__ import annotations

import re
from functools import lru_cache
from string import ascii_lowercase

from pylatexenc.latex2text import LatexNodes2Text

from recommender.documents.markdown import front_matter, inline_text
from recommender.documents.markers import find_markers
from recommender.documents.model import Passage
from recommender.query import CITATION_MARK, Query
from recommender.review.document import CONTEXT_CHARS, marker_context
from recommender.serve.citations import find_citations, site_among

RAW_CHARS = 4 * CONTEXT_CHARS  # source read on either side of the cursor in a long paragraph
_CURSOR = "\ue000"  # stands for the cursor while the paragraph is turned into text (a private-use character)

_LATEX_RE = re.compile(r"\\(?:documentclass|usepackage|begin\s*\{|(?:sub)*section\*?\s*[\[{]|title\s*[\[{])")
# a citation command (\cite, \parencite, \citet ...) is told by its whole name: "[A-Za-z]*cite[a-z]*" backtracked
# through every "cite" of "\citecite…" (quadratic time)
_LATEX_COMMAND_RE = re.compile(r"\\([A-Za-z]++)\*?\s*[\[{]")
# a bracket's text and a link's target stop at the next bracket: else "[" * n and "](" * n took quadratic time
_MARKDOWN_RE = re.compile(r"\A---[ \t]*\n|^ {0,3}#{1,6}\s|^ {0,3}```|\[[^\[\]\n]*@\w|\]\([^)\]\s]+\)", re.MULTILINE)
_LATEX_BREAK_RE = re.compile(r"\s*\\(?:(?:sub)*section|chapter|part|paragraph|subparagraph|begin|end|maketitle|par"
                             r"|bibliography|addbibresource|printbibliography|title|author|date)\b")
_LATEX_ITEM_RE = re.compile(r"\s*\\item\b")
_MARKDOWN_BREAK_RE = re.compile(r" {0,3}(?:#{1,6}\s|```|~~~|(?:=+|-+)\s*$)")
_MARKDOWN_ITEM_RE = re.compile(r"\s*(?:[-*+]|\d{1,3}[.)])\s+")
_MARKDOWN_PREFIX_RE = re.compile(r"^\s*(?:>\s?)*(?:(?:[-*+]|\d{1,3}[.)])\s+)?", re.MULTILINE)
_BREAKS = {"latex": _LATEX_BREAK_RE, "markdown": _MARKDOWN_BREAK_RE}
_ITEMS = {"latex": _LATEX_ITEM_RE, "markdown": _MARKDOWN_ITEM_RE}
_LATEX_COMMENT_RE = re.compile(r"(?<!\\)%[^\n]*")
_LATEX_COMMAND_NAME_RE = re.compile(r"\\[A-Za-z]*\*?")
_LATEX_DROPPED_RE = re.compile(r"\\(?:label|ref|eqref|autoref|cref|Cref|pageref|nameref|nocite|index|footnotemark)"
                               r"\*?\s*(?:\[[^\[\]]*\]\s*)?\{[^{}]*\}")
_LATEX_TITLE_RE = re.compile(r"\\title\s*(?:\[[^\[\]]*\]\s*)?\{")  # one \s* per gap: two backtrack
_LATEX_ABSTRACT_RE = re.compile(r"\\begin\s*\{abstract\}(.*?)(?:\\end\s*\{abstract\}|\Z)", re.DOTALL)
_LATEX_ABSTRACT_MACRO_RE = re.compile(r"\\abstract\s*\{")
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r"\s+([.,;:!?)])")
_LATEX_TEXT = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True)


def document_kind(text: str) -> str:
    """"latex", "markdown" or "text", from what the source is written with."""
    if _LATEX_RE.search(text) or any(_cites(m.group(1)) for m in _LATEX_COMMAND_RE.finditer(text)):
        return "latex"
    return "markdown" if _MARKDOWN_RE.search(text) else "text"


def _cites(name: str) -> bool:
    """Whether a command's name is a citation's: "cite" in the lower-case letters that end it (cite, parencite,
    citep; a regex from every "cite" of a long name took quadratic time)."""
    return "cite" in name[len(name.rstrip(ascii_lowercase)):]


def draft_of(text: str) -> tuple[str, str]:
    """A document's (title, abstract): LaTeX's `\\title{}` and `abstract` environment, a Markdown/Pandoc YAML
    front matter's `title:` and `abstract:`; ("", "") when it names neither."""
    kind = document_kind(text)
    if kind == "latex":
        source = _LATEX_COMMENT_RE.sub("", text)
        title = _braced(source, _LATEX_TITLE_RE)
        abstract = _LATEX_ABSTRACT_RE.search(source)
        abstract = abstract.group(1) if abstract else _braced(source, _LATEX_ABSTRACT_MACRO_RE)
        return _latex_text(title), _latex_text(abstract)
    if kind == "markdown":
        values, _ = front_matter(text.splitlines()[:200])
        return inline_text(values.get("title", "")), inline_text(values.get("abstract", ""))
    return "", ""


def citation_query(text: str, offset: int, *, k: int = 10, exclude: frozenset[str] | set[str] = frozenset()) -> Query:
    """The local-mode query for a citation at character `offset` of a LaTeX, Markdown or plain-text document: the
    paragraph around the cursor (past `CONTEXT_CHARS`, the sentences nearest it, as a review asks a citation
    place) with [CIT] at the cursor, or in place of the citation the cursor stands in; the paragraph's other
    citations removed; `draft_of(text)` as title and abstract. A paragraph without words asks the draft alone
    (global mode)."""
    if not 0 <= offset <= len(text):
        raise ValueError(f"offset {offset} is outside the document (0 to {len(text)} characters)")
    kind = document_kind(text)
    start, end = paragraph_span(text, offset, kind)
    start, end = max(start, offset - RAW_CHARS), min(end, offset + RAW_CHARS)
    pandoc = kind != "latex"
    citations = find_citations(text[start:end], pandoc, offset=start)
    site = site_among(citations, text, offset)
    mine = site.citation if site else next((c for c in citations if c.start < offset < c.end), None)
    edits = [(c.start, c.end, f" {_CURSOR} " if c is mine else " ") for c in citations]
    if mine is None:
        while offset < end and text[offset].isalnum():  # inside a word: the citation goes after it
            offset += 1
        edits.append((offset, offset, f" {_CURSOR} "))
    pieces, cursor = [], start
    for first, last, replacement in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        if first >= cursor:
            pieces += [text[cursor:first], replacement]
            cursor = last
    pieces.append(text[cursor:end])
    plain = " ".join(as_text("".join(pieces), kind).split())
    title, abstract = draft_of(text)
    at = plain.find(_CURSOR)
    plain = plain.replace(_CURSOR, CITATION_MARK)
    passage = Passage(plain, find_markers(plain))
    marker = next((m for m in passage.markers if m.start == at), None)
    context = marker_context(passage, marker) if marker is not None else plain
    if sum(ch.isalpha() for ch in context.replace(CITATION_MARK, "")) < 3:
        context = ""
    return Query(title=title, abstract=abstract, context=context, k=k, exclude=set(exclude))


def paragraph_span(text: str, offset: int, kind: str) -> tuple[int, int]:
    """(start, end) of the paragraph holding `offset`: lines between blank lines, headings and (LaTeX) sectioning
    and environment commands; a list item starts a paragraph. A cursor on such a separating line: that line."""
    items = _ITEMS.get(kind)
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    end = len(text) if end < 0 else end
    if separates(text[start:end], kind):
        return start, end
    while start > 0 and not (items and items.match(text, start)):
        previous = text.rfind("\n", 0, start - 1) + 1
        if separates(text[previous:start - 1], kind):
            break
        start = previous
    while end < len(text):
        following = text.find("\n", end + 1)
        following = len(text) if following < 0 else following
        line = text[end + 1:following]
        if separates(line, kind) or (items and items.match(line)):
            break
        end = following
    return start, end


def paragraphs(text: str, kind: str) -> list[tuple[int, int]]:
    """(start, end) of every paragraph of the text (`paragraph_span`'s), in order; separating lines left out."""
    found, offset = [], 0
    while offset < len(text):
        start, end = paragraph_span(text, offset, kind)
        if not separates(text[start:end], kind):
            found.append((start, end))
        offset = end + 1
    return found


def separates(line: str, kind: str) -> bool:
    """Whether a line separates paragraphs: blank, a heading, a (LaTeX) sectioning or environment command."""
    breaks = _BREAKS.get(kind)
    return not line.strip() or bool(breaks and breaks.match(line))


def as_text(source: str, kind: str) -> str:
    """A paragraph's source as the text the engine reads (LaTeX and Markdown syntax removed)."""
    if kind == "latex":
        return _latex_text(source)
    if kind == "markdown":
        return inline_text(_MARKDOWN_PREFIX_RE.sub("", source))
    return " ".join(source.split())


@lru_cache(maxsize=4096)
def _latex_text(source: str) -> str:
    """LaTeX as text (tolerant of what is half typed): comments, cross-references and citations dropped, maths
    kept as written."""
    source = _LATEX_COMMENT_RE.sub("", source)
    source = _LATEX_DROPPED_RE.sub(" ", source)
    pieces, at = [], 0  # each citation cut out in one pass (copying the rest for each took quadratic time)
    for citation in sorted(find_citations(source), key=lambda c: c.start):
        pieces += [source[at:max(at, citation.start)], " "]
        at = max(at, citation.end)
    source = " ".join(("".join(pieces) + source[at:]).split())  # a long run of spaces: the parser's quadratic time
    try:
        text = " ".join(_LATEX_TEXT.latex_to_text(source, tolerant_parsing=True).split())
    except RecursionError:  # nested past the parser's depth ("\\cite[a " × 1,250): its commands dropped instead
        text = " ".join(_LATEX_COMMAND_NAME_RE.sub(" ", source).replace("{", " ").replace("}", " ").split())
    return _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", text)


def _braced(source: str, opening: re.Pattern[str]) -> str:
    """The text inside the braces that `opening` (ending in "{") opens, to its matching "}" or the source's end."""
    match = opening.search(source)
    if not match:
        return ""
    depth = 1
    for index in range(match.end(), len(source)):
        char = source[index]
        if char in "{}" and source[index - 1] != "\\":
            depth += 1 if char == "{" else -1
            if depth == 0:
                return source[match.end():index]
    return source[match.end():]
