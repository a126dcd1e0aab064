"""BibTeX parsing and LaTeX-to-text decoding shared by the corpus loader and the reference-list reader."""
from __future__ import annotations

import re
import unicodedata
from typing import Any


# an entry that starts a line ("@article{", "@misc("), after white space but line ends ([^\S\n], not \s: "^\s*" searched
# over many blank lines takes quadratic time)
_ENTRY_START_RE = re.compile(r"^[^\S\n]*@[A-Za-z]+\s*[{(]", re.MULTILINE)


def holds_entry(text: str) -> bool:
    """Whether a text holds a BibTeX entry (one that starts a line)."""
    return _ENTRY_START_RE.search(text) is not None


def parse_library(text: str):
    """bibtexparser's library of the text's blocks, field names lower-cased."""
    import bibtexparser
    from bibtexparser import middlewares as mw

    return bibtexparser.parse_string(text, append_middleware=[mw.NormalizeFieldKeys()])


# An accent command and the letter it marks: \'e, \'{e}, \"{\i}, \v{S}, \v S (a letter-named accent needs a
# brace or a space before its letter: \textbf is not \t + "extbf").
_ACCENTED_RE = re.compile(r"""\\[`'^"~=.]\s*(?:\{\s*\\?[A-Za-z]\s*\}|\\[ij](?![A-Za-z])|[A-Za-z])"""
                          r"|\\[uvHckrbdt](?:\s*\{\s*\\?[A-Za-z]\s*\}|\s+(?:\\[ij](?![A-Za-z])|[A-Za-z]))")
# A letter command (\L, \o, \ss, ...) with the empty group or space that ends it (a space before "and"
# separates names, so it stays).
_LETTER_RE = re.compile(r"\\(?:AE|ae|OE|oe|AA|aa|ss|[LlOoij])(?![A-Za-z])(?:\{\}|[ \t]+(?=[a-z])(?!and\b))?")


def author_names(value: Any) -> list[str]:
    r"""A BibTeX author field as names "First von Last Jr", LaTeX decoded (\v{S}koda: Škoda).

    Accented letters are decoded before the field is split into names and parts, so that a command such as
    `\v S` or `\L{}` is never taken for a word or dropped by the splitter.
    """
    from bibtexparser.middlewares.names import (InvalidNameError, parse_single_name_into_parts,
                                                split_multiple_persons_names)

    decoded = _LETTER_RE.sub(_decode_match, _ACCENTED_RE.sub(_decode_match, str(value or "")))
    names = []
    for number, name in enumerate(split_multiple_persons_names(decoded), start=1):
        try:
            parts = parse_single_name_into_parts(name)
        except InvalidNameError as exc:
            reason = str(exc).rsplit(":", 1)[-1].strip()
            shown = name if len(name) <= 60 else name[:60] + "…"
            raise ValueError(f"author {number}: cannot split the name “{shown}” into parts ({reason})") from None
        text = latex_text(" ".join([*parts.first, *parts.von, *parts.last, *parts.jr]))
        if text:
            names.append(text)
    return names


def _decode_match(match: re.Match) -> str:
    return unicodedata.normalize("NFC", latex_text(match.group(0)))


_latex_decoder = None


def latex_text(value: Any) -> str:
    """Decode LaTeX (accents, letters, text commands) and drop braces; a bare % or & is text, not LaTeX syntax."""
    text = str(value or "")
    if not text:
        return ""
    if "\\" not in text and "{" not in text and "~" not in text and "--" not in text and "`" not in text:
        return " ".join(text.split())
    escaped = re.sub(r"(?<!\\)([%&#])", r"\\\1", text)
    return " ".join(_decoder().latex_to_text(escaped).split())


def _decoder():
    """pylatexenc's LaTeX-to-text converter, taught the commands titles use that it would drop."""
    global _latex_decoder
    if _latex_decoder is None:
        from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

        context = get_default_latex_context_db()
        context.add_context_category("bibliography", prepend=True, macros=[
            MacroTextSpec("mbox", "%s"), MacroTextSpec("url", "%s"), MacroTextSpec("LaTeX", "LaTeX"),
            MacroTextSpec("TeX", "TeX"), MacroTextSpec("BibTeX", "BibTeX"),
            MacroTextSpec("textbraceleft", "{"), MacroTextSpec("textbraceright", "}")])  # export.py writes them
        _latex_decoder = LatexNodes2Text(math_mode="verbatim", latex_context=context)
    return _latex_decoder


def strip_braces(value: str) -> str:
    return " ".join(value.replace("{", "").replace("}", "").split())

