"""A reference list as users bring it: decode an uploaded file, and split pasted text into entries.

Text copied out of a PDF arrives with hard line breaks inside entries, words hyphenated at line ends and,
in author-year styles, no entry numbers. `split_entries` rebuilds one string per reference:

- numbered lists (`[1]`, `1.`, `(1)`, `1)`) are split where the next number in sequence starts a line;
- `\\bibitem` lists (LaTeX) are split at each `\\bibitem`;
- other lists are split where a line ends a sentence and the next one starts like an author list
  ("Surname, I.", "I. Surname,", "Firstname Surname and ..."), or where the previous line stops short
  of the text width (the next word would have fitted, so the break was not a wrap);
- a list without any sign of wrapping (no line starts in lower case, none ends with a comma or a
  hyphen) is read as one reference per line.
"""
from __future__ import annotations

import gzip
import io
import re
import unicodedata
import zlib
from itertools import islice

MAX_DECOMPRESSED_BYTES = 20_000_000
MAX_CONTROL_SHARE = 0.01  # control characters a text may hold before it counts as binary ...
MAX_REPLACED_SHARE = 0.1  # ... and undecodable ones (U+FFFD)
MIN_BAD_CHARS = 8
_START_CHARS = 160  # an author list shows its pattern within this many characters
FULL_LINE_SHARE = 0.85  # a line whose length plus the next word reaches this share of the width was wrapped
_WRAP_EVIDENCE_SHARE = 0.1  # share of line breaks that must look like wraps before a list counts as wrapped

_HEADINGS = {"references", "reference list", "bibliography", "literature cited", "works cited", "literatur",
             "literaturverzeichnis", "references and notes", "références", "bibliographie", "cited literature"}
_PAGE_NUMBER_RE = re.compile(r"^\d{1,4}$")  # a page number between two pages of the list
# "[1234]" in brackets, but for years ([1500]-[2099]); "(123)", "123." at most three digits: "(2019)", "2019." are years
_MARKER_RE = re.compile(r"^(?:\[(\d{1,3}|1[0-4]\d\d|2[1-9]\d\d|[3-9]\d{3})\]|\((\d{1,3})\)|(\d{1,3})[.)](?=\s|$))\s*")
_BIBITEM_RE = re.compile(r"\\bibitem\s*(?:\[[^\[\]]*\]\s*)?\{[^{}]*\}")  # one \s* per gap: two backtrack
_LATEX_BLOCK_RE = re.compile(r"\\(?:begin|end)\{thebibliography\}(?:\{[^}]*\})?|\\newblock\b")

_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0100-\u017f\u0391-\u03a9\u0410-\u042f"
_LOWER = "a-z\u00df-\u00f6\u00f8-\u00ff\u0100-\u017f"
_PARTICLE = r"(?:van|von|der|den|de|del|della|di|da|du|dos|das|le|la|ter|ten|zu|al|el|bin|ibn|St\.)"
_SURNAME_WORD = rf"(?:O['’]|Mc|Mac|D['’])?[{_UPPER}][{_LOWER}'’]+(?:-[{_UPPER}][{_LOWER}'’]+)?"
_SURNAME = rf"(?:{_PARTICLE}\s+){{0,2}}{_SURNAME_WORD}"
_INITIAL = rf"[{_UPPER}](?:[{_LOWER}])?\.(?:-[{_UPPER}]\.)?"  # J.  Th.  M.-W.
_GIVEN = rf"[{_UPPER}][{_LOWER}]+(?:-[{_UPPER}]?[{_LOWER}]+)?"
_AFTER_NAME = r"(?:,|\s+and\b|\s*&|\s+et\s+al\b|\.\s+\(?(?:1[5-9]|20)\d\d)"
# Capitalised words that start venue names and title lines, never a given name.
_NOT_GIVEN = {"In", "Proceedings", "Proc", "Journal", "Advances", "Foundations", "Transactions", "Annual",
              "International", "Language", "Information", "Computer", "Computational", "Communications",
              "Neural", "Machine", "Artificial", "Science", "Nature", "Web", "Data", "Knowledge", "Natural",
              "Conference", "Workshop", "Symposium", "Technical", "Research", "Available", "Accessed",
              "Retrieved", "Online", "Springer", "Elsevier", "Lecture", "Notes", "Studies", "Pattern",
              "Intelligent", "Digital", "American", "European", "Association", "Society", "The", "A", "An"}
_AUTHOR_STARTS = [
    re.compile(rf"^{_SURNAME}(?:\s+{_SURNAME_WORD})?,\s+{_INITIAL}"),             # Smith, J.  /  Sparck Jones, K.
    re.compile(rf"^{_SURNAME},\s+{_GIVEN}(?:\s+(?:{_GIVEN}|{_INITIAL})){{0,3}}(?:,|\s+and\b|\.)"),  # Smith, John,
    re.compile(rf"^{_SURNAME}\s+[{_UPPER}]{{1,3}}[,.](?:\s|$)"),                 # Smith JA,
    re.compile(rf"^(?:{_INITIAL}\s*){{1,4}}(?:{_GIVEN}\s+)?{_SURNAME}{_AFTER_NAME}"),  # J. Smith,
]
_FULL_NAME = rf"{_GIVEN}(?:\s+(?:{_GIVEN}|{_INITIAL})){{0,3}}\s+{_SURNAME}"
# "John Smith, Kate Jones," / "John Smith and Kate Jones." / "John Smith. 2019." (ACM, Chicago's later names)
_FULL_NAME_RE = re.compile(rf"^({_GIVEN})(?:\s+(?:{_GIVEN}|{_INITIAL})){{0,3}}\s+{_SURNAME}"
                           rf"(?:,\s+{_FULL_NAME}(?:,|\s+and\b)|,?\s+and\s+{_FULL_NAME}[.,]"
                           rf"|\s+et\s+al\b|\.\s+\(?(?:1[5-9]|20)\d\d)")
_TERMINAL_RE = re.compile(r"(?:[.!?)\]]|[.!?][\"”’])$|(?:https?://|doi\.org/|doi:\s?|10\.\d{4,9}/)\S+$", re.IGNORECASE)
# Abbreviations that sit inside references (venues as in ISO 4, "pp."), never at their end.
_ABBREVIATIONS = ("proc|conf|int|intl|trans|comput|assoc|natl|acad|sci|eng|res|rev|lett|inf|retr|mach|learn|"
                  "intell|syst|netw|soc|am|lang|linguist|process|annu|symp|j|vol|no|pp|eds?|univ|dept|st|adv|"
                  "appl|commun|technol|stat|math|phys|knowl|manag|anal|artif|neural|biol|med|electron")
# A line ending like this goes on: a comma, a joining word, an abbreviation, an initial (no entry ends so).
_JOINING_END_RE = re.compile(rf"(?:[,;:&(/]|\b(?i:and|of|in|on|for|the|an|to|with|by|et|in:)"
                             rf"|\b(?i:{_ABBREVIATIONS})\.|(?:^|[\s,(])[{_UPPER}]\.)$")
_CONTINUATION_START_RE = re.compile(rf"^(?:[{_LOWER}]|[()\]}},.;:–—“-]|\d)")
_URL_END_RE = re.compile(r"(?:https?://|doi\.org/|doi:\s?|10\.\d{4,9}/)\S*$", re.IGNORECASE)
# written so that they take linear time: "1" * n + "!" and a long word backtracked quadratically
_URL_PIECE_RE = re.compile(r"^(?=[\w./\-~%?=&#;:]*[\d/._])[\w./\-~%?=&#;:]*(?=\s|$)")
_HYPHENATED_END_RE = re.compile(rf"(?<![{_UPPER}{_LOWER}0-9])([{_UPPER}{_LOWER}0-9]+)-$")
_WORD_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_COMPOUND_ENDINGS = {"based", "aware", "level", "scale", "specific", "driven", "free", "like", "oriented", "wise",
                     "term", "domain", "shot", "training", "trained", "supervised", "art", "end", "order",
                     "grained", "dimensional", "independent", "dependent", "time", "world", "making", "one",
                     "agnostic", "augmented", "sensitive", "centric", "efficient", "language", "lingual"}
_COMPOUND_PREFIXES = {"self", "non", "cross", "semi", "state", "co", "well", "two", "three", "multi"}


def decode_text(data: bytes) -> str:
    """Text from bytes: UTF-16 with its byte-order mark, or without one where its zero bytes show it (see
    `_utf16_without_mark`), else UTF-8, else Windows-1252 (older Windows editors)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    text = _utf16_without_mark(data)
    if text is not None:
        return text
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


UTF16_SAMPLE_BYTES = 4096
UTF16_MIN_ZERO_SHARE = 0.1  # of the bytes at one parity: the high bytes of ASCII letters, digits and spaces
UTF16_MAX_OTHER_ZERO_SHARE = 0.02  # ... and hardly any at the other parity


def _utf16_without_mark(data: bytes) -> str | None:
    """UTF-16 text written without a byte-order mark (some Windows tools do), else None.

    In UTF-16LE the high byte of every ASCII character is a zero at an odd position (big-endian: at an even
    one), so the first few KB of such a file have zeros at one parity and next to none at the other; UTF-8
    text has no zero bytes at all. The whole file must then decode strictly, without a NUL, and the sample
    must be clean text (control, unassigned and private-use characters under 1%): binary data with a similar
    pattern of zeros (arrays of small numbers) decodes to control characters and stays binary.
    """
    sample = data[:UTF16_SAMPLE_BYTES]
    if len(data) % 2 or len(sample) < 4 or 0 not in sample:
        return None
    pairs = len(sample) // 2
    even, odd = sample[0::2].count(0) / pairs, sample[1::2].count(0) / pairs
    if odd >= UTF16_MIN_ZERO_SHARE and even <= UTF16_MAX_OTHER_ZERO_SHARE:
        codec = "utf-16-le"
    elif even >= UTF16_MIN_ZERO_SHARE and odd <= UTF16_MAX_OTHER_ZERO_SHARE:
        codec = "utf-16-be"
    else:
        return None
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:  # a lone surrogate: not UTF-16
        return None
    head = text[:UTF16_SAMPLE_BYTES // 2]
    odd_chars = sum(1 for ch in head if unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs") and ch not in "\t\n\r\f\v")
    if "\x00" in text or odd_chars > MAX_CONTROL_SHARE * len(head):
        return None
    return text


def decode_reference_bytes(data: bytes) -> str:
    """The text of an uploaded reference file; a binary file (PDF, Word, image, ...) raises ValueError."""
    if data.startswith(b"%PDF"):
        raise ValueError("This is a PDF file, not a reference list. Open it, copy the reference list and paste "
                         "it here, or upload the list as a .bib or .txt file.")
    if data.startswith(b"PK\x03\x04"):
        raise ValueError("This is a zip-based document (such as .docx or .odt), not a plain-text reference list. "
                         "Copy the reference list out of it and paste it here, or save it as .txt or .bib.")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data)
    text = decode_text(data)
    check_is_text(text)
    return text


def check_is_text(text: str) -> None:
    """Raise ValueError when `text` holds binary data (NUL, other control characters, undecodable bytes).

    A few replacement characters are normal in text copied from a PDF (glyphs without a Unicode mapping).
    """
    controls = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f\v")
    replaced = text.count("\ufffd")
    if ("\x00" in text or controls > max(MIN_BAD_CHARS, MAX_CONTROL_SHARE * len(text))
            or replaced > max(MIN_BAD_CHARS, MAX_REPLACED_SHARE * len(text))):
        raise ValueError(f"The reference list does not look like text ({controls + replaced:,} of {len(text):,} "
                         "characters are control characters or undecodable bytes). Upload a .bib or .txt file, "
                         "or paste the list copied from the PDF.")


def split_entries(text: str, most: int | None = None) -> list[tuple[int, str]]:
    """(1-based line number where it starts, text) of each reference in a plain-text or `\\bibitem` list; the
    first `most` of them (all when None)."""
    if "\\bibitem" in text:
        return _split_bibitems(text)[:most]
    lines = [(number, clean_line(line)) for number, line in enumerate(text.splitlines(), start=1)]
    content: list[tuple[int, str, bool]] = []  # (line number, text, a blank line came before it)
    blank = False
    for number, line in lines:
        if not line:
            blank = bool(content)
        elif line.rstrip(":. ").casefold() not in _HEADINGS and not _PAGE_NUMBER_RE.match(line):
            content.append((number, line, blank))
            blank = False
    if not content:
        return []
    starts = _numbered_starts(content) or _unnumbered_starts(content)
    groups = [content[a:b] for a, b in zip(starts, starts[1:] + [len(content)])][:most]
    vocabulary = words_seen(text)
    return [(group[0][0], join_lines([line for _, line, _ in group], vocabulary)) for group in groups]


def clean_line(line: str) -> str:
    """One line with PDF artefacts undone: ligatures, soft hyphens, odd spaces and hyphens."""
    line = unicodedata.normalize("NFKC", line)
    line = line.replace("\u00ad", "").replace("\u200b", "").replace("\ufeff", "")
    line = line.replace("\u2010", "-").replace("\u2011", "-")
    return " ".join(line.split())


def join_lines(lines: list[str], vocabulary: frozenset[str] = frozenset()) -> str:
    """Lines of one entry joined, undoing end-of-line hyphenation; `vocabulary`: hyphenated words seen whole."""
    pieces = lines[:1]
    for line in lines[1:]:
        tail = pieces[-1].rsplit(" ", 1)[-1]  # the last word so far
        hyphen = _HYPHENATED_END_RE.search(tail)
        if hyphen and not tail.endswith("--"):
            pieces[-1] = pieces[-1][:-1]
            pieces.append(("-" if _keeps_hyphen(hyphen.group(1), line, vocabulary) else "") + line)
        elif tail.endswith(("–", "—")) or (_URL_END_RE.search(tail) and _URL_PIECE_RE.match(line)):
            pieces.append(line)
        else:
            pieces.append(" " + line)
    return "".join(pieces)


def strip_marker(text: str) -> str:
    """An entry without its leading number (`[3]`, `3.`, `(3)`, `3)`)."""
    return _MARKER_RE.sub("", text, count=1)


def entry_number(text: str) -> int | None:
    """The leading number of an entry (`[3]`, `3.`, `(3)`, `3)`), if it has one."""
    marker = _marker_number(text)
    return marker[0] if marker else None


def looks_like_entry_start(line: str) -> bool:
    """Does a line start like an author list of some citation style?"""
    line = line[:_START_CHARS]
    if any(pattern.match(line) for pattern in _AUTHOR_STARTS):
        return True
    full_name = _FULL_NAME_RE.match(line)
    return bool(full_name) and full_name.group(1) not in _NOT_GIVEN


def _gunzip(data: bytes) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(MAX_DECOMPRESSED_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"The gzip file is damaged ({exc}); upload the list uncompressed.") from exc
    if len(out) > MAX_DECOMPRESSED_BYTES:
        raise ValueError(f"The gzip file unpacks to more than {MAX_DECOMPRESSED_BYTES:,} bytes; "
                         "that is not a reference list.")
    return out


def _marker_number(line: str) -> tuple[int, bool] | None:
    """(number, written in brackets) of a line's leading entry number, if it has one."""
    match = _MARKER_RE.match(line)
    if not match:
        return None
    return int(match.group(1) or match.group(2) or match.group(3)), match.group(1) is not None


def _numbered_starts(content: list[tuple[int, str, bool]]) -> list[int]:
    """Indices of lines that start entries numbered in sequence (empty when fewer than two are)."""
    starts: list[int] = []
    expected = None
    for index, (_, line, _) in enumerate(content):
        marker = _marker_number(line)
        if marker is None:
            continue
        number, bracketed = marker
        if expected is None or number == expected or (bracketed and expected < number <= expected + 2):
            starts.append(index)
            expected = number + 1
    if len(starts) < 2:
        return []
    return starts if starts[0] == 0 else [0] + starts


def _unnumbered_starts(content: list[tuple[int, str, bool]]) -> list[int]:
    """Indices of lines that start entries of a list without sequence numbers."""
    width = max(len(line) for _, line, _ in content)
    decisions: list[bool | None] = []  # True: new entry, False: wrapped line, None: undecided
    for (_, previous, _), (_, line, blank) in zip(content, content[1:]):
        decisions.append(_break_kind(previous, line, blank))
    wraps = sum(1 for d in decisions if d is False)
    if sum(1 for d in decisions if d) >= 2:  # entries start like author lists: a line not ending one is wrapped
        wraps += sum(1 for (_, previous, _), d in zip(content, decisions)
                     if d is None and not _TERMINAL_RE.search(previous[-_START_CHARS:]))
    wrapped = wraps > 0 and wraps >= _WRAP_EVIDENCE_SHARE * len(decisions)
    starts = [0]
    for index, decision in enumerate(decisions, start=1):
        if decision is None:
            previous, line = content[index - 1][1], content[index][1]
            decision = not wrapped or len(previous) + 1 + len(line.split()[0]) < FULL_LINE_SHARE * width
        if decision:
            starts.append(index)
    return starts


def _break_kind(previous: str, line: str, blank: bool) -> bool | None:
    """True when `line` surely starts a new entry, False when it surely continues `previous`, else None."""
    previous = previous[-_START_CHARS:]
    if _HYPHENATED_END_RE.search(previous) or _JOINING_END_RE.search(previous):
        return False
    terminal = bool(_TERMINAL_RE.search(previous))
    if _marker_number(line) and terminal:
        return True
    if terminal and looks_like_entry_start(line):
        return True
    if _CONTINUATION_START_RE.match(line):
        return False
    return True if blank else None


def _keeps_hyphen(prefix: str, line: str, vocabulary: frozenset[str]) -> bool:
    """Whether a word broken as "prefix-" + the start of `line` is a real compound such as "BERT-based"."""
    suffix = re.match(rf"[{_UPPER}{_LOWER}0-9]*", line).group(0)
    if not suffix or not prefix[-1].islower() or not suffix[0].islower():
        return True
    compound = f"{prefix}-{suffix}".casefold()
    if compound in vocabulary:
        return True
    if (prefix + suffix).casefold() in vocabulary:
        return False
    return suffix.casefold() in _COMPOUND_ENDINGS or prefix.casefold() in _COMPOUND_PREFIXES


def words_seen(text: str) -> frozenset[str]:
    """Every word of a text, hyphenated compounds whole, except a word broken at a line end: tells
    `join_lines` whether "citation-" + "based" is the compound "citation-based" or "cita-" + "tion" one word."""
    words = set()
    for line in text.splitlines():
        found = _WORD_RE.findall(line)
        if found and line.rstrip().endswith("-"):
            found.pop()
        words.update(word.casefold() for word in found)
    return frozenset(words)


def bibitem_count(text: str, most: int) -> int:
    """The `\\bibitem` commands of a text, counted up to `most`."""
    return sum(1 for _ in islice(_BIBITEM_RE.finditer(text), most))


def _split_bibitems(text: str) -> list[tuple[int, str]]:
    """Entries of a LaTeX `thebibliography` list, as plain text."""
    from pylatexenc.latex2text import LatexNodes2Text

    decode = LatexNodes2Text(math_mode="verbatim").latex_to_text
    entries: list[tuple[int, str]] = []
    matches = list(_BIBITEM_RE.finditer(text))
    line_number, counted = 1, 0  # lines counted as the entries go (from the start for each: quadratic)
    for match, end in zip(matches, [m.start() for m in matches[1:]] + [len(text)]):
        body = _LATEX_BLOCK_RE.sub(" ", text[match.end():end])
        lines = [clean_line(line) for line in body.splitlines() if line.strip()]
        line_number += text.count("\n", counted, match.start())
        counted = match.start()
        if lines:
            entries.append((line_number, " ".join(decode(join_lines(lines)).split())))
    return entries
