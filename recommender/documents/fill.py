"""Write accepted citations into a LaTeX draft: into its placeholders (`\\cite{?}`, `\\cite{}`, `\\cite{TODO}`,
`[CIT]`, `[?]`), and after the sentences that lack one (`cite_after_sentences`)."""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left

_PLACEHOLDER_RE = re.compile(
    r"\\(?P<command>[A-Za-z]*cite[A-Za-z]*\*?)(?P<options>(?:\s*\[[^\[\]]*\]){0,2})\s*\{\s*(?:\?|TODO|todo|)\s*\}"
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


# Macros whose (first) argument never reaches a passage's text (latex.py drops it), left out when sentences are
# compared with the source.
_DROPPED_RE = re.compile(r"\\(?:ref|eqref|autoref|cref|Cref|pageref|nameref|label|href|nocite|footnotemark|thanks)"
                         r"\*?\s*\{[^{}]*\}")
_ALNUM_RE = re.compile(r"[^\W_]+")
_COMMAND_RE = re.compile(r"\\(?:[A-Za-z]+\*?|.)", re.DOTALL)
# what may close a sentence's last word before its end in the source: braces, inline maths, brackets, quotes, and
# a cross-reference with its tie (`Section~\\ref{x}`)
_CLOSERS_RE = re.compile(r"(?:[}$)\]'\"\u201d\u2019\u00bb]|~?\\(?:ref|eqref|autoref|cref|Cref|pageref|nameref)\*?\s*"
                         r"\{[^{}]*\})*")


def cite_after_sentences(tex: str, sentences: list[str], keys: list[list[str]],
                         lines: list[int | None] | None = None) -> tuple[str, list[str]]:
    """The source with `~\\cite{keys[n]}` written after `sentences[n]` (before its final punctuation, as in
    `... a sentence~\\cite{key}.`), and the sentences that were not found (the source left as it is for them).

    The sentences are text as the reader wrote it (macros turned into text, whitespace normalised), so they are
    compared with the source on their letters and digits alone (case, accents, spaces, punctuation and LaTeX
    commands ignored), outside `%` comments and starting and ending at word boundaries. `lines`: the 1-based
    source line of each sentence's paragraph, where the search starts (the first match after it, else the first
    in the source). Citations that land in the same place are merged.
    """
    if len(keys) != len(sentences) or (lines is not None and len(lines) != len(sentences)):
        raise ValueError("one list of keys (and one line) per sentence")
    wanted = [(n, sentence, chosen) for n, (sentence, chosen) in enumerate(zip(sentences, keys)) if chosen]
    if not wanted:
        return tex, []
    flat, where = _letters_of_source(tex)
    line_starts = [0] + [m.end() for m in re.finditer("\n", tex)]
    inserts: dict[int, list[str]] = {}
    taken: set[int] = set()  # sentences already cited: a sentence written twice is cited at each copy in turn
    not_found = []
    for n, sentence, chosen in wanted:
        line = lines[n] if lines is not None else None
        start = bisect_left(where, line_starts[line - 1]) if line and 0 < line <= len(line_starts) else 0
        span = _find(tex, flat, where, _letters(_COMMAND_RE.sub("", sentence)), start, taken)
        if span is None and start:
            span = _find(tex, flat, where, _letters(_COMMAND_RE.sub("", sentence)), 0, taken)
        if span is None:
            not_found.append(sentence)
            continue
        taken.add(span[0])
        inserts.setdefault(_insertion_point(tex, span[1]), []).extend(chosen)
    pieces, cursor = [], 0
    for point in sorted(inserts):
        pieces += [tex[cursor:point], f"~\\cite{{{','.join(dict.fromkeys(inserts[point]))}}}"]
        cursor = point
    pieces.append(tex[cursor:])
    return "".join(pieces), not_found


def _letters(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text).casefold() if ch.isalnum())


def _letters_of_source(tex: str) -> tuple[str, list[int]]:
    """The source's letters and digits as `_letters` writes them (comments, commands and the arguments of dropped
    macros left out), and the source position of each."""
    flat: list[str] = []
    where: list[int] = []
    offset = 0
    for line in tex.splitlines(keepends=True):
        comment = _COMMENT_RE.search(line)
        code = line[: comment.start()] if comment else line
        skipped = [m.span() for m in _DROPPED_RE.finditer(code)] + [m.span() for m in _COMMAND_RE.finditer(code)]
        cursor = 0
        for skip_start, skip_end in sorted(skipped):
            _add_letters(code, cursor, skip_start, offset, flat, where)
            cursor = max(cursor, skip_end)
        _add_letters(code, cursor, len(code), offset, flat, where)
        offset += len(line)
    return "".join(flat), where


def _add_letters(code: str, start: int, end: int, offset: int, flat: list[str], where: list[int]) -> None:
    for match in _ALNUM_RE.finditer(code, start, end):
        run = match.group(0)
        if run.isascii():
            flat.append(run.lower())
            where.extend(range(offset + match.start(), offset + match.end()))
            continue
        for i, char in enumerate(run, start=offset + match.start()):
            for letter in _letters(char):
                flat.append(letter)
                where.append(i)


def _find(tex: str, flat: str, where: list[int], target: str, start: int,
          taken: set[int]) -> tuple[int, int] | None:
    """The source span (first letter, one past the last) of `target` in `flat` from `start`, at word boundaries,
    not starting at a position in `taken`."""
    if not target:
        return None
    found = flat.find(target, start)
    while found >= 0:
        first, last = where[found], where[found + len(target) - 1]
        if first not in taken and not (first > 0 and tex[first - 1].isalnum()) and \
                not (last + 1 < len(tex) and tex[last + 1].isalnum()):
            return first, last + 1
        found = flat.find(target, found + 1)
    return None


def _insertion_point(tex: str, end: int) -> int:
    """Where a sentence whose last letter ends at `end` takes its citation: after what closes that letter's group
    (a brace, inline maths, a bracket, a quote, a cross-reference), before the space and final punctuation."""
    return end + len(_CLOSERS_RE.match(tex, end).group(0))
