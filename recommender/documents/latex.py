"""LaTeX drafts: a .tex file, optionally with its .bib, or the files of a zipped project.

Parsed with pylatexenc (strictly: unbalanced braces or an unclosed environment make the file refused).
The title is `\\title`'s, the abstract the `abstract` environment's; the passages are the body's paragraphs
after `\\maketitle` (blank lines, `\\par`, sectioning commands and list items separate them), turned into text
with every citation command kept as written; floats, display maths and verbatim text are left out. The references are the .bib
entries the document cites (`\\cite`, `\\nocite`; all of them with `\\nocite{*}`), in order of first citation,
or else its `thebibliography` list. `\\input` and `\\include` are resolved among the project's files; line
numbers refer to the source with them resolved (`Document.source_text`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pylatexenc import latex2text, latexwalker
from pylatexenc.macrospec import MacroSpec

from recommender.corpus.bibtex import holds_entry
from recommender.documents.assemble import assemble
from recommender.documents.blocks import Block, add
from recommender.documents.errors import DocumentError
from recommender.documents.limits import MAX_INCLUDE_DEPTH, MAX_INCLUDES, MAX_TEXT_CHARS, check
from recommender.documents.markers import PLACEHOLDER_KEYS
from recommender.documents.model import Document
from recommender.documents.project import OUTSIDE_NOTICE, LatexProject, Outside
from recommender.references.parse import ReferenceItem, cited_bibtex, parse_reference_list

CITE_MACROS = ("cite", "citep", "citet", "citealp", "citealt", "citeauthor", "citeyear", "citeyearpar", "citenum",
               "citeurl", "Cite", "Citep", "Citet", "parencite", "Parencite", "textcite", "Textcite", "autocite",
               "Autocite", "smartcite", "Smartcite", "footcite", "footcitetext", "supercite", "fullcite")
SECTION_MACROS = ("part", "chapter", "section", "subsection", "subsubsection", "paragraph", "subparagraph")
LEFT_OUT_ENVIRONMENTS = ("figure", "figure*", "table", "table*", "tabular", "tabular*", "tabularx", "wrapfigure",
                         "equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*",
                         "eqnarray", "eqnarray*", "displaymath", "tikzpicture", "algorithm", "algorithmic",
                         "lstlisting", "verbatim", "minted", "comment", "thebibliography", "abstract",
                         "CCSXML", "teaserfigure")
LIST_ENVIRONMENTS = ("itemize", "enumerate", "description")
_EXTRA_MACROS = [MacroSpec(name, "*[[{") for name in CITE_MACROS] + [
    MacroSpec("nocite", "{"), MacroSpec("addbibresource", "[{"), MacroSpec("caption", "*[{"),
    MacroSpec("href", "{{"), MacroSpec("thanks", "{"), MacroSpec("autoref", "*{"), MacroSpec("cref", "*{"),
    MacroSpec("Cref", "*{"), MacroSpec("eqref", "{"), MacroSpec("subfile", "{"), MacroSpec("keywords", "{"),
    MacroSpec("affiliation", "[{"), MacroSpec("email", "{"), MacroSpec("institute", "{"), MacroSpec("maketitle", ""),
    MacroSpec("title", "[{"), MacroSpec("paragraph", "*[{"), MacroSpec("subparagraph", "*[{"),
    MacroSpec("bibliographystyle", "{"), MacroSpec("ccsdesc", "[{"), MacroSpec("Description", "{"),
    MacroSpec("orcid", "{"), MacroSpec("authornote", "{")]
_INPUT_RE = re.compile(r"\\(?:input|include|subfile)\s*\{([^{}]+)\}")
# one \s* per gap (\bibitem, \title), an argument that stops at the next brace (\bibliography): "\\title" + spaces
# and "\\bibliography{" × n took quadratic time
_BIB_COMMAND_RE = re.compile(r"^[^%\n]*\\(?:bibliography|addbibresource(?:\[[^\[\]]*\])?)\s*\{([^{}]*)\}", re.MULTILINE)
_COMMENT_RE = re.compile(r"(?<!\\)%.*$")
_BIBITEM_KEY_RE = re.compile(r"\\bibitem\s*(?:\[[^\[\]]*\]\s*)?\{([^{}]*)\}")
_PARAGRAPH_BREAK_RE = re.compile(r"\n[ \t]*\n\s*")
# a run of spaces and tabs at a line's end, or (group 1) of two or more inside a line; starting where a run starts
# (white space but line ends: [^\S\n]; a control space "\ " at a line's end kept)
_SPACE_RUN_RE = re.compile(r"(?<![^\S\n])(?<!\\)[^\S\n]+(?=\n|\Z)|(?<![^\S\n])([^\S\n]{2,})")
_BLANK_LINES_RE = re.compile(r"(?<!\n)\n{3,}")
_TITLE_RE = re.compile(r"\\title\s*(?:\[[^\[\]]*\]\s*)?\{")
_URL_RE = re.compile(r"\\(?:url|href)\s*\{[^{}\n]*\}")
_BEGIN_DOCUMENT_RE = re.compile(r"^[^%\n]*?(\\begin\s*\{document\})", re.MULTILINE)
_END_DOCUMENT_RE = re.compile(r"^[^%\n]*?(\\end\s*\{document\})", re.MULTILINE)


def read_latex(source: str, bibs: list[str] = (), project: LatexProject | None = None) -> Document:
    """A LaTeX draft. `bibs`: the texts of .bib files given with it; `project`: the files it may include
    (`\\input`, and the .bib files `\\bibliography` names, or its compiled .bbl when there is neither a .bib nor a
    `thebibliography` list); without one, includes are not followed."""
    notices: list[str] = []
    source = expand_inputs(source, project, notices)
    bbl = ""
    if project is not None:
        named = [name.strip() for match in _BIB_COMMAND_RE.finditer(source) for name in match.group(1).split(",")
                 if name.strip()]
        found, outside = project.bibs(named)
        bibs = [*bibs, *found]
        if outside:
            _notice(notices, OUTSIDE_NOTICE)
        bbl = project.bbl()
    preamble, body = split_preamble(parse_copy(source))
    walker = latexwalker.LatexWalker(body, latex_context=_walker_context(), tolerant_parsing=False)
    try:
        # from the body's first character: the blanked preamble before it, one long run of spaces, took the
        # parser quadratic time (a 1.2 MB preamble: 25 s)
        nodes, _, _ = walker.get_latex_nodes(pos=len(body) - len(body.lstrip()))
        reader = _BodyReader(walker)
        reader.read(nodes)
    except latexwalker.LatexWalkerError as exc:
        raise DocumentError(f"This LaTeX file does not parse: {_parse_problem(exc)}. Check that every brace and "
                            "every \\begin{...} is closed, or compile it once with LaTeX to find the mistake.") \
            from exc
    except RecursionError:  # "{" * 400, "\\textbf{" * 300: a Python stack per level of nesting
        raise DocumentError("This LaTeX file nests braces, groups or commands too deeply to be read (hundreds of "
                            "levels). Check that every brace is closed.") from None
    title = _find_title(nodes, reader.to_text) or _title_in_preamble(preamble, reader.to_text)
    references = _references(_cited_keys(nodes), bibs, reader.bibitems or bbl, notices)
    document = assemble(reader.blocks, "latex", title, references=references, abstract=reader.abstract,
                        notices=notices)
    document.source_text = source
    return document


def parse_copy(source: str) -> str:
    """The source as the parser reads it, line for line: verbatim text, `\\iffalse` blocks and `%` in URLs, which
    the parser would misread, blanked (spaces in place of every character but line ends). Windows line ends read as
    "\\n". Long runs of white space, which the parser reads in quadratic time, are cut short: spaces at a line's end
    are dropped, runs of them inside a line made one, and blank lines after the first are made comment lines ("%";
    a body of " \\n" × 320,000 took 5 s)."""
    source = _blank_verbatim(source.replace("\r\n", "\n").replace("\r", " "))
    source = _URL_RE.sub(lambda m: re.sub(r"(?<!\\)%", " ", m.group(0)), source)
    source = _SPACE_RUN_RE.sub(lambda m: "" if m.group(1) is None else " ", source)
    return _BLANK_LINES_RE.sub(lambda m: "\n\n" + "%\n" * (len(m.group(0)) - 2), source)


def split_preamble(source: str) -> tuple[str, str]:
    """(the preamble, the body), the source with the other part blanked, so that positions agree (the body ends
    where `\\end{document}` starts)."""
    begin = _BEGIN_DOCUMENT_RE.search(source)
    if begin is None:
        if re.search(r"\\documentclass\b", source):
            raise DocumentError("This LaTeX file has a \\documentclass but no \\begin{document}.")
        return "", source  # a fragment: all of it is body
    end = next((m for m in _END_DOCUMENT_RE.finditer(source) if m.start(1) >= begin.end()), None)
    if end is None:
        raise DocumentError(f"This LaTeX file does not parse: \\begin{{document}} (line "
                            f"{source.count(chr(10), 0, begin.start(1)) + 1}) is never closed by \\end{{document}}.")
    preamble = source[:begin.start(1)] + _blank(source[begin.start(1):])
    # the body ends at \end{document}: a blanked tail, one long run of spaces, took the parser quadratic time
    body = _blank(source[:begin.end(1)]) + source[begin.end(1):end.start(1)]
    return preamble, body


_VERBATIM_START_RE = re.compile(r"\\begin\{(verbatim\*?|Verbatim|lstlisting|minted|comment)\}"
                                r"|\\(?:verb\*?|lstinline)([^\w\s{])|\\iffalse\b")
_FI_RE = re.compile(r"\\fi\b")


def _blank_verbatim(source: str) -> str:
    """Verbatim blocks (`verbatim`, `lstlisting`, `minted`, `comment` environments; `\\verb|...|`, `\\lstinline`)
    and `\\iffalse ... \\fi` blanked, an opener without its end left as it is. Each opener's end is searched once,
    and a kind of block whose end was not found is not searched for again (a lazy regex searched to the end of
    the text from every unclosed opener: "\\iffalse " * n took quadratic time)."""
    pieces, at, pos, unclosed = [], 0, 0, set()
    while match := _VERBATIM_START_RE.search(source, pos):
        if match.group(2):  # \verb|...|: its end on the same line
            line_end = source.find("\n", match.end())
            end = source.find(match.group(2), match.end(), len(source) if line_end < 0 else line_end)
            end = end + 1 if end >= 0 else -1
        else:
            closer = "\\fi" if match.group(1) is None else f"\\end{{{match.group(1)}}}"
            end = -1
            if closer not in unclosed:
                if match.group(1) is None:
                    found = _FI_RE.search(source, match.end())
                    end = found.end() if found else -1
                else:
                    end = source.find(closer, match.end())
                    end = end + len(closer) if end >= 0 else -1
                if end < 0:
                    unclosed.add(closer)
        if end < 0:
            pos = match.start() + 1
            continue
        pieces += [source[at:match.start()], _blank(source[match.start():end])]
        at = pos = end
    pieces.append(source[at:])
    return "".join(pieces)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def expand_inputs(source: str, project: LatexProject | None, notices: list[str]) -> str:
    """The source with each `\\input{name}` / `\\include{name}` (outside comments) replaced by that file of the
    project: a file at most once per chain of includes, at most MAX_INCLUDES in all, and the whole text at most
    MAX_TEXT_CHARS, counted while expanding (DocumentError past it)."""
    return _Expansion(project, notices).expand(source, (project.main,) if project else ())


def _notice(notices: list[str], notice: str) -> None:
    if notice not in notices:
        notices.append(notice)


@dataclass
class _Expansion:
    project: LatexProject | None
    notices: list[str]
    size: int = 0  # characters expanded so far
    includes: int = 0  # files included so far

    def expand(self, source: str, chain: tuple[str, ...]) -> str:
        self.size += len(source)
        check(self.size, MAX_TEXT_CHARS, "The LaTeX text with its \\input files included")
        lines = source.split("\n")
        for number, line in enumerate(lines):
            code = _COMMENT_RE.sub("", line)
            if "\\in" in code or "\\subfile" in code:
                lines[number] = _INPUT_RE.sub(lambda match: self._include(match, chain), code) + line[len(code):]
        return "\n".join(lines)

    def _include(self, match: re.Match, chain: tuple[str, ...]) -> str:
        name = match.group(1).strip()
        if self.project is None:
            _notice(self.notices, f"\\input{{{name}}} could not be followed: upload the whole project as a .zip.")
            return match.group(0)
        if len(chain) > MAX_INCLUDE_DEPTH:
            _notice(self.notices, f"\\input nested deeper than {MAX_INCLUDE_DEPTH} levels was not followed.")
            return match.group(0)
        if self.includes >= MAX_INCLUDES:
            _notice(self.notices, f"Only the first {MAX_INCLUDES} \\input and \\include commands were followed.")
            return match.group(0)
        try:
            found = self.project.find(name)
        except Outside:
            _notice(self.notices, OUTSIDE_NOTICE)
            return match.group(0)
        if found is None:
            _notice(self.notices, f"\\input{{{name}}} could not be followed: no such file.")
            return match.group(0)
        path, text = found
        if path in chain:
            _notice(self.notices, f"{path} includes itself (through \\input); it was read once.")
            return match.group(0)
        self.includes += 1
        return self.expand(text, (*chain, path))


def _walker_context():
    context = latexwalker.get_default_latex_context_db()
    context.add_context_category("citrec-documents", macros=_EXTRA_MACROS, prepend=True)
    return context


def _text_context():
    """latex2text's rules, with citation commands kept as written and cross-references dropped."""
    verbatim = latex2text.MacroTextSpec  # alias for the long lines below
    context = latex2text.get_default_latex_context_db()
    context.add_context_category("citrec-documents", prepend=True, macros=[
        *(verbatim(name, simplify_repl=lambda node: " ".join(node.latex_verbatim().split())) for name in CITE_MACROS),
        *(verbatim(name, discard=True) for name in ("ref", "eqref", "autoref", "cref", "Cref", "label", "nocite",
                                                    "thanks", "footnotemark", "addbibresource", "bibliography",
                                                    "bibliographystyle", "maketitle", "keywords", "caption",
                                                    "ccsdesc", "Description", "author", "affiliation", "email",
                                                    "orcid", "authornote", "institution")),
        verbatim("href", simplify_repl="%(2)s"), verbatim("LaTeX", simplify_repl="LaTeX"),
        verbatim("TeX", simplify_repl="TeX"),
    ], environments=[latex2text.EnvironmentTextSpec(name, discard=True) for name in LEFT_OUT_ENVIRONMENTS])
    return context


def _parse_problem(exc: latexwalker.LatexWalkerError) -> str:
    """pylatexenc's message, "line N" in place of its "@(N,col)"."""
    message = re.sub(r"\s*@\s*\((\d+),\s*(\d+)\)", r" (line \1)", str(exc).split("\n")[0].strip())
    return message.rstrip(".")[:300]


def _cited_keys(nodes) -> list[str]:
    """Every key of every citation command (abstract, captions and footnotes included), in document order."""
    keys: list[str] = []
    for node in nodes or []:
        if node is None:
            continue
        if isinstance(node, latexwalker.LatexMacroNode):
            arguments = node.nodeargd.argnlist if node.nodeargd and node.nodeargd.argnlist else []
            if (node.macroname in CITE_MACROS or node.macroname == "nocite") and arguments and arguments[-1]:
                written = arguments[-1].latex_verbatim().strip()[1:-1]
                keys.extend(k.strip() for k in written.split(",") if k.strip())
            else:
                keys.extend(_cited_keys(arguments))
        elif isinstance(node, (latexwalker.LatexEnvironmentNode, latexwalker.LatexGroupNode)):
            keys.extend(_cited_keys(node.nodelist))
    return keys


def _find_title(nodes, to_text) -> str:
    """The text of the body's `\\title{...}`, if it has one."""
    for node in nodes or []:
        if isinstance(node, latexwalker.LatexMacroNode) and node.macroname == "title" and node.nodeargd:
            argument = node.nodeargd.argnlist[-1]
            return " ".join(to_text([argument]).split()) if argument is not None else ""
        if isinstance(node, latexwalker.LatexEnvironmentNode):
            found = _find_title(node.nodelist, to_text)
            if found:
                return found
    return ""


def _title_in_preamble(preamble: str, to_text) -> str:
    """The text of the preamble's `\\title[short]{...}`. Only that argument is parsed: a preamble's macro
    definitions (`\\newenvironment{x}{\\begin{center}}{...}`) are beyond what the parser follows."""
    code = "\n".join(_COMMENT_RE.sub("", line) for line in preamble.split("\n"))
    match = _TITLE_RE.search(code)
    if not match:
        return ""
    depth, end = 0, None
    for index in range(match.end() - 1, len(code)):
        char = code[index]
        if char == "\\":
            continue
        if char == "{" and code[index - 1] != "\\":
            depth += 1
        elif char == "}" and code[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                end = index
                break
    if end is None:
        return ""
    walker = latexwalker.LatexWalker(code[match.end():end], latex_context=_walker_context(), tolerant_parsing=True)
    return " ".join(to_text(walker.get_latex_nodes()[0]).split())


@dataclass
class _BodyReader:
    """Walks the body's nodes into paragraphs; notes the abstract and the `thebibliography` list."""

    walker: latexwalker.LatexWalker
    blocks: list[Block] = field(default_factory=list)
    abstract: str = ""
    bibitems: str = ""

    def __post_init__(self):
        self.converter = latex2text.LatexNodes2Text(latex_context=_text_context(), math_mode="verbatim",
                                                    strict_latex_spaces=True)
        self.pending: list = []  # nodes of the paragraph being read

    def to_text(self, nodes) -> str:
        return " ".join(self.converter.nodelist_to_text([n for n in nodes if n is not None]).split())

    def read(self, nodes) -> None:
        self._walk(nodes)
        self._flush()

    def _walk(self, nodes) -> None:
        for node in nodes or []:
            if isinstance(node, latexwalker.LatexCharsNode):
                self._chars(node)
            elif isinstance(node, latexwalker.LatexMacroNode):
                self._macro(node)
            elif isinstance(node, latexwalker.LatexEnvironmentNode):
                self._environment(node)
            elif not isinstance(node, latexwalker.LatexCommentNode):
                self.pending.append(node)

    def _chars(self, node) -> None:
        pieces = _PARAGRAPH_BREAK_RE.split(node.chars)
        offset = 0
        for index, piece in enumerate(pieces):
            if index:
                self._flush()
                offset = node.chars.index(piece, offset) if piece else len(node.chars)
            if piece:
                self.pending.append(self.walker.make_node(latexwalker.LatexCharsNode, parsing_state=node.parsing_state,
                                                          chars=piece, pos=node.pos + offset, len=len(piece)))
            offset += len(piece)

    def _macro(self, node) -> None:
        name = node.macroname
        if name in SECTION_MACROS:
            self._flush()
            argument = node.nodeargd.argnlist[-1] if node.nodeargd and node.nodeargd.argnlist else None
            heading = self.to_text([argument]) if argument is not None else ""
            if heading:
                add(self.blocks, Block(text=heading, line=self._line(node), heading=True))
            return
        if name in ("par", "item"):
            self._flush()
            return
        if name == "maketitle":  # what came before it is the front matter (authors, CCS concepts, teaser)
            self.pending, self.blocks = [], []
            return
        self.pending.append(node)

    def _environment(self, node) -> None:
        name = node.environmentname
        if name == "abstract":
            self.abstract = self.to_text(node.nodelist)
        elif name == "thebibliography":
            self.bibitems = node.latex_verbatim()
        elif name in LIST_ENVIRONMENTS:
            self._flush()
            self._walk(node.nodelist)
            self._flush()
        elif name in LEFT_OUT_ENVIRONMENTS:
            return
        else:  # center, quote, minipage, theorem, proof ...: their text is body text
            self._walk(node.nodelist)

    def _flush(self) -> None:
        nodes, self.pending = self.pending, []
        text = self.to_text(nodes)
        if text:
            first = next((n for n in nodes if not (isinstance(n, latexwalker.LatexCharsNode) and not n.chars.strip())),
                         nodes[0])
            add(self.blocks, Block(text=text, line=self._line(first)))

    def _line(self, node) -> int:
        position = node.pos
        if isinstance(node, latexwalker.LatexCharsNode):
            position += len(node.chars) - len(node.chars.lstrip())
        return self.walker.pos_to_lineno_colno(position)[0]


def _references(cited_keys: list[str], bibs: list[str], bibitems: str,
                notices: list[str]) -> list[ReferenceItem] | None:
    """The cited .bib entries in order of first citation; else the \\bibitem list; None: look for a section."""
    cited = [k for k in dict.fromkeys(cited_keys) if k.casefold() not in PLACEHOLDER_KEYS and k != "*"]
    entries: dict[str, ReferenceItem] = {}
    read_bib = False  # a .bib with entries was read (its cited ones may be none)
    for bib in bibs:
        if not holds_entry(bib):
            notices.append("A .bib file holds no BibTeX entry; it was left out.")
            continue
        read_bib = True
        for item in parse_reference_list(bib if "*" in cited_keys else cited_bibtex(bib, set(cited))):
            entries.setdefault(item.key, item)
    if entries or read_bib:
        by_folded = {key.casefold(): key for key in entries}
        keys = [k if k in entries else by_folded.get(k.casefold(), k) for k in cited]
        missing = [k for k in keys if k not in entries]
        if missing:
            notices.append(f"{len(missing)} cited key(s) are not in the .bib: {', '.join(missing[:10])}"
                           + (" ..." if len(missing) > 10 else ""))
        chosen = [k for k in keys if k in entries]
        if "*" in cited_keys:
            chosen += [k for k in entries if k not in chosen]
        return [entries[k] for k in chosen]
    if bibitems:
        items = parse_reference_list(bibitems)
        keys = _BIBITEM_KEY_RE.findall(bibitems)
        if len(keys) == len(items):
            items = [replace(item, key=key.strip()) for item, key in zip(items, keys)]
        return items
    return None
