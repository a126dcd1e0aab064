"""Citation markers in a passage's text, and the references each one points to.

Found, in this order (a later kind never overlaps an earlier one):
- LaTeX commands: `\\cite`, `\\citep`, `\\citet`, `\\parencite`, `\\textcite`, `\\autocite` ... with optional
  arguments; `\\cite{?}`, `\\cite{}` and `\\cite{TODO}` are placeholders;
- placeholders written in plain text: `[CIT]`, `[CITE]`, `[REF]`, `[?]`, `[??]`, `[citation needed]`;
- Pandoc citations: `[@key]`, `[see @a, p. 3; @b]`;
- numbers in brackets: `[12]`, `[3, 5–7]` (ranges expanded);
- author-year: `(Author, 2020)`, `(Author et al., 2020; Other 2019a)`, `Author et al. (2020)`.

Resolution: numbers to positions in a numbered list, keys to the BibTeX entry of that key, author and year to
the reference whose first author's surname and year agree.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from recommender.documents.model import Marker
from recommender.references.parse import ReferenceItem

PLACEHOLDER_KEYS = {"", "?", "??", "???", "todo", "tbd", "cit", "cite", "citation", "ref", "xxx", "missing"}
MAX_RANGE = 60  # a range "[3–70]" longer than this is no citation range
MAX_NUMBER = 999
PRINTED_SHARE = 0.8  # entries of a list that must print their number for numbers to be read as printed
_INNER_NUMBER_RE = re.compile(r"(?<=[.,;]\s)\[(\d{1,3})\]\s")  # "[13] " after an entry's end, inside another

_CITE_COMMAND_RE = re.compile(
    r"\\(?:[Cc]ite(?:p|t|alp|alt|author|year|yearpar|num|url)?|[Pp]arencite|[Tt]extcite|[Aa]utocite|[Ss]martcite|"
    r"[Ff]ootcite(?:text)?|[Ss]upercite|[Ff]ullcite)\*?(?:\s*\[[^\[\]]*\]){0,2}\s*\{([^{}]*)\}")
_PLACEHOLDER_RE = re.compile(r"\[(?:CIT|CITE|CITATION|REF|\?{1,3}|citation needed)\]", re.IGNORECASE)
_PANDOC_RE = re.compile(r"\[[^\[\]@]{0,40}@[\w:.#$%&+?<>~/-]+(?:[^\[\]]{0,80})\]")
_PANDOC_KEY_RE = re.compile(r"@([\w:.#$%&+?<>~/-]*[\w])")
_NUMBERS_RE = re.compile(r"\[\s*(\d{1,3}(?:\s*[-–—]\s*\d{1,3})?(?:\s*[,;]\s*\d{1,3}(?:\s*[-–—]\s*\d{1,3})?)*)\s*\]")
_RANGE_RE = re.compile(r"(\d+)\s*[-–—]\s*(\d+)")

_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0100-\u017f"
_PARTICLE = r"(?:van|von|der|den|de|del|della|di|da|du|dos|le|la|ter|ten|al|el)"
# possessive: a name never gives letters back (what follows it is no letter), so "Ab-Ab-…-Ab!" cannot backtrack
_NAME = rf"(?:{_PARTICLE}\s+){{0,2}}[{_UPPER}][^\W\d_]*+(?:['’-][^\W\d_]+)*+"
_AUTHORS = rf"{_NAME}(?:\s+et\s+al\.?|(?:,\s*{_NAME})*,?\s+(?:and|&)\s+{_NAME})?"
_YEAR = r"(?:1[5-9]\d\d|20\d\d)[a-z]?"
_YEARS = rf"{_YEAR}(?:\s*,\s*{_YEAR})*"
_PAREN_RE = re.compile(r"\(([^()]{6,400})\)")
# One citation inside parentheses: "e.g., Smith et al., 2020, p. 4"
_PAREN_PART_RE = re.compile(rf"^\s*(?:(?:e\.g\.|i\.e\.|see(?:\s+also)?|cf\.|also|but\s+see|for\s+example)[,:]?\s+)*"
                            rf"({_AUTHORS}),?\s+({_YEARS})(?:\s*,\s*(?:pp?|ch|chap|sec|§)\.?\s*[\d–-]+)?\s*$")
_NARRATIVE_AUTHORS = rf"{_NAME}(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_NAME})?"  # no lists: "Recently, A and B"
# a narrative citation starts at a word's start: tried inside every word, a long word took quadratic time
_NARRATIVE_RE = re.compile(rf"(?<![^\W\d_])(?<![^\W\d_]['’-])({_NARRATIVE_AUTHORS})\s+\(({_YEARS})"
                           rf"(?:\s*,\s*(?:pp?|ch|chap|sec)\.?\s*[\d–-]+)?\)")
_YEAR_RE = re.compile(rf"\b({_YEAR})\b")
_LETTERS_RE = re.compile(r"[^\W\d_]+")
_NAME_WORD_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_NOT_SURNAMES = {"et", "al", "and", "van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "dos",
                 "le", "la", "ter", "ten", "el"}


@dataclass(frozen=True)
class AuthorYear:
    """One author-year citation: the surnames written (first author first) and the year with its letter."""

    surnames: tuple[str, ...]
    year: str  # "2020" or "2020a"


def find_markers(text: str, references: "list[ReferenceItem] | Resolver" = ()) -> list[Marker]:
    """Every citation marker in `text`, in order, resolved to positions in `references` (a list, or the Resolver
    of one: a document's paragraphs share one, so that the list is read once, not once per paragraph)."""
    resolver = references if isinstance(references, Resolver) else Resolver(references)
    found: list[Marker] = []
    covered = bytearray(len(text))  # 1 where a marker already found lies: a new one may not overlap it

    def add(start: int, end: int, placeholder: bool, positions: list[int]) -> None:
        if covered.find(1, start, end) < 0:
            covered[start:end] = b"\x01" * (end - start)
            found.append(Marker(text=text[start:end], start=start, end=end, placeholder=placeholder,
                                references=positions))

    for match in _CITE_COMMAND_RE.finditer(text):
        keys = [key.strip() for key in match.group(1).split(",")]
        placeholder = all(key.casefold() in PLACEHOLDER_KEYS for key in keys)
        add(match.start(), match.end(), placeholder, [] if placeholder else resolver.keys(keys))
    for match in _PLACEHOLDER_RE.finditer(text):
        add(match.start(), match.end(), True, [])
    for match in _PANDOC_RE.finditer(text):
        keys = _PANDOC_KEY_RE.findall(match.group(0))
        if keys:
            add(match.start(), match.end(), False, resolver.keys(keys))
    for match in _NUMBERS_RE.finditer(text):
        numbers = expand_numbers(match.group(1))
        if numbers:
            add(match.start(), match.end(), False, resolver.numbers(numbers))
    for match in _PAREN_RE.finditer(text):
        cites = parse_parenthetical(match.group(1))
        if cites:
            add(match.start(), match.end(), False, resolver.author_years(cites))
    for match in _NARRATIVE_RE.finditer(text):
        cites = [AuthorYear(surnames_of(match.group(1)), year) for year in re.split(r"\s*,\s*", match.group(2))]
        if cites[0].surnames:
            add(match.start(), match.end(), False, resolver.author_years(cites))
    return sorted(found, key=lambda m: m.start)


def expand_numbers(spec: str) -> list[int]:
    """[3, 5, 6, 7] for "3, 5–7"; [] when it is no citation (a zero, a reversed or huge range)."""
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", spec.strip()):
        span = _RANGE_RE.fullmatch(part)
        if span:
            first, last = int(span.group(1)), int(span.group(2))
            if not first < last <= first + MAX_RANGE:
                return []
            numbers.extend(range(first, last + 1))
        elif part.isdigit():
            numbers.append(int(part))
        else:
            return []
    if any(not 1 <= n <= MAX_NUMBER for n in numbers):
        return []
    return numbers


def parse_parenthetical(inside: str) -> list[AuthorYear]:
    """The citations of "(Smith, 2020; Jones and Lee 2019a, 2021)"; [] when the parentheses hold no citation."""
    cites: list[AuthorYear] = []
    for part in inside.split(";"):
        match = _PAREN_PART_RE.match(part)
        if not match:
            if _YEAR_RE.search(part):
                return []  # a year that is no citation: "(founded in 2020; ...)"
            continue
        surnames = surnames_of(match.group(1))
        cites.extend(AuthorYear(surnames, year) for year in re.split(r"\s*,\s*", match.group(2)))
    return cites


def surnames_of(authors: str) -> tuple[str, ...]:
    """("smith", "jones") for "Smith and Jones"; particles and "et al." dropped, accents folded."""
    names = re.split(r",|\s+and\s+|\s*&\s*|\s+et\s+al\.?", authors)
    surnames = []
    for name in names:
        words = _NAME_WORD_RE.findall(fold_name(name))
        words = [w for w in words if w not in _NOT_SURNAMES] or words[-1:]  # "van der Berg", but "Le"
        if words:
            surnames.append(words[-1] if len(words) == 1 else " ".join(words))
    return tuple(surnames)


def fold_name(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


class Resolver:
    """Positions in a reference list for keys, numbers and author-year pairs."""

    def __init__(self, references: list[ReferenceItem]):
        self.references = list(references)
        self.by_key: dict[str, int] = {}
        for position, item in enumerate(self.references):
            if item.key:
                self.by_key.setdefault(item.key, position)
                self.by_key.setdefault(item.key.casefold(), position)
        self.by_number = _printed_numbers(self.references)
        # each entry's authors and years, and the entries of each year and of each word of their authors: read on
        # the first author-year citation (not once per paragraph, nor every entry for every citation)
        self._heads: list[tuple[str, set[str]]] = []
        self._by_year: dict[str, set[int]] = {}
        self._by_word: dict[str, set[int]] = {}

    def _candidates(self, year: str, surname: str) -> list[int]:
        """Positions of the references, in order, that write `year` (with or without a letter) and the first word
        of `surname` (folded) as a word of their authors."""
        if not self._heads and self.references:
            self._heads = [_author_head(item) for item in self.references]
            for position, (item, (head, years)) in enumerate(zip(self.references, self._heads)):
                for written in {y[:4] for y in years} | {str(item.year or "")[:4]}:
                    self._by_year.setdefault(written, set()).add(position)
                for word in set(_LETTERS_RE.findall(head)):
                    self._by_word.setdefault(word, set()).add(position)
        first = _LETTERS_RE.search(surname)
        if first is None:
            return sorted(self._by_year.get(year, ()))
        return sorted(self._by_year.get(year, set()) & self._by_word.get(first.group(0), set()))

    def keys(self, keys: list[str]) -> list[int]:
        positions = [self.by_key.get(key, self.by_key.get(key.casefold())) for key in keys]
        return _unique(p for p in positions if p is not None)

    def numbers(self, numbers: list[int]) -> list[int]:
        """By the number each entry printed when the list printed them (an entry lost or merged in reading then
        shifts no other), else by position."""
        if self.by_number:
            return _unique(p for n in numbers if (p := self.by_number.get(n)) is not None)
        return _unique(n - 1 for n in numbers if n <= len(self.references))

    def author_years(self, cites: list[AuthorYear]) -> list[int]:
        return _unique(p for cite in cites if (p := self.author_year(cite)) is not None)

    def author_year(self, cite: AuthorYear) -> int | None:
        """The reference whose first author is the cited one and whose year agrees (with its letter, if any)."""
        year, letter = cite.year[:4], cite.year[4:]
        best: tuple[int, int] | None = None  # (where the surname stands in the author list, position)
        for position in self._candidates(year, cite.surnames[0]):
            item, (head, years) = self.references[position], self._heads[position]
            if cite.year not in years and not (not letter and (year in years or str(item.year or "") == year)):
                continue
            where = _surname_at(head, cite.surnames[0])
            if where is None or any(_surname_at(head, other) is None for other in cite.surnames[1:]):
                continue
            if best is None or where < best[0]:
                best = (where, position)
        return best[1] if best else None


def _printed_numbers(references: list[ReferenceItem]) -> dict[int, int]:
    """{printed number: position} when most entries printed a distinct number, else {}. An entry that swallowed
    the next one in reading also answers for the number printed inside it ("... 2019. [13] B. Author ...")."""
    printed = [item.number for item in references if item.number is not None]
    if len(printed) < 2 or len(set(printed)) != len(printed) or len(printed) < PRINTED_SHARE * len(references):
        return {}
    found = {item.number: position for position, item in enumerate(references) if item.number is not None}
    for position, item in enumerate(references):
        for match in _INNER_NUMBER_RE.finditer(item.raw):
            found.setdefault(int(match.group(1)), position)
    return found


def _author_head(item: ReferenceItem) -> tuple[str, set[str]]:
    """(the folded text before the reference's title, the years written in the reference, with letters)."""
    raw = fold_name(item.raw)
    head = raw
    if item.title:
        at = raw.find(fold_name(item.title)[:30])
        if at > 0:
            head = raw[:at]
    years = {m.group(1) for m in _YEAR_RE.finditer(raw)}
    if item.year:
        years.add(str(item.year))
    return head, years


def _surname_at(head: str, surname: str) -> int | None:
    """Where `surname` (folded) stands as whole words in an author list, or None."""
    match = re.search(rf"(?<![^\W\d_]){re.escape(surname)}(?![^\W\d_])", head)
    return match.start() if match else None


def _unique(values) -> list[int]:
    return list(dict.fromkeys(values))  # (a list's `in` made "\\cite{k1,...,k50000}" quadratic)
