"""Write accepted citations into a LaTeX draft's placeholders (`\\cite{?}`, `\\cite{}`, `\\cite{TODO}`, `[CIT]`, `[?]`)."""
from __future__ import annotations

import re

_PLACEHOLDER_RE = re.compile(
    r"\\(?P<command>[A-Za-z]*cite[A-Za-z]*\*?)(?P<options>(?:\s*\[[^\]]*\]){0,2})\s*\{\s*(?:\?|TODO|todo|)\s*\}"
    r"|\[(?:CIT|cit|\?)\]")
_COMMENT_RE = re.compile(r"(?<!\\)%.*")


def placeholder_spans(tex: str) -> list[tuple[int, int]]:
    """Character spans of the placeholders in a LaTeX source, in order, outside `%` comments."""
    spans = []
    offset = 0
    for line in tex.splitlines(keepends=True):
        comment = _COMMENT_RE.search(line)
        code = line[: comment.start()] if comment else line
        spans += [(offset + m.start(), offset + m.end()) for m in _PLACEHOLDER_RE.finditer(code)]
        offset += len(line)
    return spans


def fill_placeholders(tex: str, keys: list[list[str]]) -> str:
    """The source with its n-th placeholder replaced by a citation of `keys[n]` (left as it is when empty).

    Raises ValueError when the source holds another number of placeholders than `keys` has entries, so that a
    citation can never land in the wrong place.
    """
    spans = placeholder_spans(tex)
    if len(spans) != len(keys):
        raise ValueError(f"the LaTeX source has {len(spans)} placeholders, the review {len(keys)}: "
                         "nothing was filled in")
    pieces, cursor = [], 0
    for (start, end), chosen in zip(spans, keys):
        pieces.append(tex[cursor:start])
        pieces.append(_citation(tex[start:end], chosen) if chosen else tex[start:end])
        cursor = end
    pieces.append(tex[cursor:])
    return "".join(pieces)


def _citation(placeholder: str, keys: list[str]) -> str:
    match = _PLACEHOLDER_RE.fullmatch(placeholder)
    command = match.group("command") if match and match.group("command") else "cite"
    options = match.group("options") if match and match.group("options") else ""
    return f"\\{command}{options}{{{','.join(keys)}}}"
