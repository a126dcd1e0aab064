"""Text from a corpus or a document made safe to print on a terminal (the command line's plain-text output).

Titles, authors and venues come from files anyone may have written. Printed raw, an escape sequence in a title
could recolour or clear the screen, move the cursor to overwrite earlier lines, set the window title or plant a
hyperlink; bidi controls could make a line read differently from what it holds (U+202E reverses what follows);
and one 1 MB title would flood the screen. JSON output needs none of this: json.dumps escapes control
characters, and programs read it, not people.
"""
from __future__ import annotations

import re

TITLE_CHARS = 300  # a title longer than this is cut, with an ellipsis
NAME_CHARS = 300  # authors, venue, identifiers
TEXT_CHARS = 2_000  # an explanation, a passage, a notice

_UNSAFE_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, erasing (ESC [ params intermediates final)
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (window title, hyperlinks), DCS, SOS, PM, APC: with payload
    r"|\x1b[ -/]*[0-~]?"  # any other escape sequence, or a lone ESC
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*[\x07\x9c]?"  # 8-bit OSC, DCS, SOS, PM, APC: with payload
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # the other C0 and C1 controls (tab and newline stay), DEL
    r"|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # bidi marks, embeddings, overrides and isolates
    r"|[\ud800-\udfff]"  # lone surrogates (from JSON's \ud800): print could not encode them
)


def terminal_safe(text: object, limit: int = TITLE_CHARS, one_line: bool = True) -> str:
    """`text` without escape sequences, control characters other than tab and newline, or bidi controls, cut
    to `limit` characters (the last one an ellipsis). `one_line` (the default) also turns every run of
    whitespace, newlines and tabs included, into one space: a field printed on its line cannot start another.
    """
    clean = _UNSAFE_RE.sub("", "" if text is None else str(text))
    if one_line:
        clean = " ".join(clean.split())
    return clean if len(clean) <= limit else clean[:max(0, limit - 1)] + "…"
