"""Export papers as BibTeX, RIS, CSL-JSON (what Zotero imports) or CSV; every function returns a string.

Entry types follow `publication_kind` (conference paper, journal article, arXiv preprint, ...); DOI, arXiv id
and URL are written when known; a summary that is not the published abstract (the demo corpus's, marked by
`summary_source`) goes into a note, never into `abstract`; so does the mark of a retracted paper ("RETRACTED: ...",
from `extra["retraction"]` or the record's `is_retracted` flag).
"""
from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from typing import Any, Callable, Sequence

from recommender.corpus.publication_kind import arxiv_id, publication_kind
from recommender.paper import Paper

_KEY_STOPWORDS = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "at", "by", "from", "is"}
_PARTICLES = {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "la", "le", "dos", "das", "ten", "ter"}
_BIBTEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$",
    "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}",
}
_BIBTEX_SPECIALS_RE = re.compile("|".join(re.escape(ch) for ch in _BIBTEX_SPECIALS))
_VERBATIM_UNSAFE_RE = re.compile(r"[{}\\\s]")
_URL_RE = re.compile(r"https?://\S+")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_SIGNS = ("=", "+", "-", "@")  # also their fullwidth and small forms (the same under NFKC)
# kind (publication_kind.KINDS) -> (BibTeX entry type, field of the venue)
_BIBTEX_TYPES = {
    "conference": ("inproceedings", "booktitle"), "journal": ("article", "journal"),
    "preprint": ("misc", "howpublished"), "book": ("book", "publisher"), "chapter": ("incollection", "booktitle"),
    "report": ("techreport", "institution"), "thesis": ("phdthesis", "school"), "other": ("misc", "howpublished"),
}
# kind -> (RIS type, tag of the venue)
_RIS_TYPES = {
    "conference": ("CONF", "T2"), "journal": ("JOUR", "T2"), "preprint": ("GEN", "PB"), "book": ("BOOK", "PB"),
    "chapter": ("CHAP", "T2"), "report": ("RPRT", "PB"), "thesis": ("THES", "PB"), "other": ("GEN", "T2"),
}
# kind -> (CSL type, field of the venue)
_CSL_TYPES = {
    "conference": ("paper-conference", "container-title"), "journal": ("article-journal", "container-title"),
    "preprint": ("article", "publisher"), "book": ("book", "publisher"), "chapter": ("chapter", "container-title"),
    "report": ("report", "publisher"), "thesis": ("thesis", "publisher"), "other": ("document", "container-title"),
}
CSV_COLUMNS = ("key", "id", "kind", "title", "authors", "year", "venue", "doi", "arxiv", "url", "abstract", "note",
               "keywords")


# --------------------------------------------------------------------------- names and keys


def split_name(name: str) -> tuple[str, str]:
    """(given, family) of a name written "First Last", "First von Last", "F.Last" or "Last, First"."""
    name = " ".join(name.split())
    if "," in name:
        family, given = (part.strip() for part in name.split(",", 1))
        return given, family
    words = name.split(" ")
    if len(words) == 1:
        initials, dot, rest = name.rpartition(".")
        return (initials + dot, rest) if initials and rest else ("", name)
    for i, word in enumerate(words[1:-1], start=1):
        if word.lower() in _PARTICLES:
            return " ".join(words[:i]), " ".join(words[i:])
    return " ".join(words[:-1]), words[-1]


def _ascii_word(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return re.sub(r"[^a-z0-9]", "", decomposed.encode("ascii", "ignore").decode().lower())


def _base_key(paper: Paper) -> str:
    family = split_name(paper.authors[0])[1] if paper.authors else ""
    surname = _ascii_word(family) or "anon"
    words = [_ascii_word(w) for w in re.split(r"[\s\-/:]+", paper.title)]
    words = [w for w in words if w]
    word = next((w for w in words if w not in _KEY_STOPWORDS), words[0] if words else "")
    return f"{surname}{paper.year if paper.year is not None else ''}{word}"


def _suffixes() -> Any:
    """a, b, ..., z, aa, ab, ..."""
    n = 0
    while True:
        n += 1
        value, letters = n, ""
        while value:
            value, rest = divmod(value - 1, 26)
            letters = chr(ord("a") + rest) + letters
        yield letters


def citation_keys(papers: Sequence[Paper]) -> list[str]:
    """One unique ASCII key per paper: surname + year + first title word, with a/b/c on clashes.

    Clashing papers get their suffixes in order of paper id, so the keys depend on the set of
    papers, not on their order.
    """
    bases = [_base_key(p) for p in papers]
    groups: dict[str, list[int]] = {}
    for index, base in enumerate(bases):
        groups.setdefault(base, []).append(index)
    keys = [""] * len(papers)
    taken = {base for base, members in groups.items() if len(members) == 1}
    for base, members in groups.items():
        if len(members) == 1:
            keys[members[0]] = base
    for base in sorted(b for b, members in groups.items() if len(members) > 1):
        suffixes = _suffixes()
        for index in sorted(groups[base], key=lambda i: papers[i].id):
            key = base + next(suffixes)
            while key in taken:
                key = base + next(suffixes)
            taken.add(key)
            keys[index] = key
    return keys


# --------------------------------------------------------------------------- fields shared by the formats


def _keywords(paper: Paper) -> list[str]:
    value = paper.extra.get("keywords") or []
    return [str(k) for k in value] if isinstance(value, list) else [k.strip() for k in str(value).split(",") if k.strip()]


def _summary_note(paper: Paper) -> str:
    """A summary that is not the published abstract (the record names its `summary_source`), as a note."""
    source = str(paper.extra.get("summary_source") or "")
    if not (source and paper.abstract):
        return ""
    return f"Summary (source: {source}), not the published abstract: {paper.abstract}"


def _retraction_note(paper: Paper) -> str:
    """"RETRACTED: ..." for a retracted paper: its mark (`pipeline.retracted`), or the corpus record's flag."""
    mark = str(paper.extra.get("retraction") or "")
    if not mark and paper.extra.get("is_retracted") is True:
        mark = "flagged as retracted in the corpus record"
    return f"RETRACTED: {mark}" if mark else ""


def _note(paper: Paper) -> str:
    """The entry's note: a retraction first, then a summary that is not the published abstract."""
    return " ".join(part for part in (_retraction_note(paper), _summary_note(paper)) if part)


def _published_abstract(paper: Paper) -> str:
    return "" if paper.extra.get("summary_source") else paper.abstract


def _url(paper: Paper) -> str:
    """The record's own http(s) URL, else its arXiv page; "" when neither is known."""
    url = str(paper.extra.get("url") or "").strip()
    if _URL_RE.fullmatch(url):
        return url
    arxiv = arxiv_id(paper)
    return f"https://arxiv.org/abs/{arxiv}" if arxiv else ""


def _shows_venue(paper: Paper, kind: str) -> bool:
    """A preprint's venue ("arXiv preprint") is left out when its arXiv id says it all."""
    return bool(paper.venue) and not (kind == "preprint" and arxiv_id(paper))


# --------------------------------------------------------------------------- BibTeX


def _bibtex_escape(text: str) -> str:
    r"""A field value in LaTeX: whitespace joined, LaTeX specials escaped, braces balanced.

    BibTeX finds where a field ends by counting { and }, backslash or not, so `\{` and `\}` are safe only
    in pairs: a lone "}" written `\}` would end the field early. A brace of the text that pairs with a later
    one (as brackets nest) is written `\{` ... `\}`; one without a partner as `	extbraceleft{}` or
    `	extbraceright{}`, which LaTeX prints as the same brace and whose own braces balance. So every value
    counts out even, and the text still reads the same in LaTeX (and back through `bibtex.latex_text`).
    """
    text = " ".join(str(text).split())
    pieces, start = [], 0
    for position in _unpaired_braces(text):
        pieces.append(_BIBTEX_SPECIALS_RE.sub(_bibtex_special, text[start:position]))
        pieces.append(r"\textbraceleft{}" if text[position] == "{" else r"\textbraceright{}")
        start = position + 1
    pieces.append(_BIBTEX_SPECIALS_RE.sub(_bibtex_special, text[start:]))
    return "".join(pieces)


def _bibtex_special(match: re.Match) -> str:
    return _BIBTEX_SPECIALS[match.group(0)]


def _unpaired_braces(text: str) -> list[int]:
    """Positions of the braces in `text` that have no partner when they are matched as nested brackets."""
    if "{" not in text and "}" not in text:
        return []
    opened: list[int] = []
    lone: list[int] = []
    for position, char in enumerate(text):
        if char == "{":
            opened.append(position)
        elif char == "}":
            if opened:
                opened.pop()
            else:
                lone.append(position)
    return sorted(lone + opened)


def _bibtex_verbatim(text: str) -> str:
    """DOI, URL and eprint are verbatim in biblatex: written as they are, with braces and backslashes and
    whitespace percent-encoded so that the entry stays well formed."""
    return _VERBATIM_UNSAFE_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode()), text.strip())


def _bibtex_name(name: str) -> str:
    """"Family, Given" escaped; a family name of several words without a given name in braces (one name)."""
    given, family = (_bibtex_escape(part) for part in split_name(name))
    return f"{family}, {given}" if given else f"{{{family}}}" if " " in family else family


def to_bibtex(papers: Sequence[Paper]) -> str:
    """BibTeX entries (UTF-8; LaTeX specials escaped) keyed by `citation_keys`; the entry type and the venue's
    field follow `publication_kind` (a record's own BibTeX entry type is kept)."""
    entries = []
    for key, paper in zip(citation_keys(papers), papers):
        kind = publication_kind(paper)
        entry_type = str(paper.extra.get("entry_type") or "")
        entry_type = entry_type if re.fullmatch(r"[a-z]+", entry_type) else _BIBTEX_TYPES[kind][0]
        arxiv = arxiv_id(paper)
        fields = [
            ("title", _bibtex_escape(paper.title)),
            ("author", " and ".join(_bibtex_name(a) for a in paper.authors)),  # each name escaped on its own
            (_BIBTEX_TYPES[kind][1], _bibtex_escape(paper.venue) if _shows_venue(paper, kind) else ""),
            ("year", "" if paper.year is None else str(paper.year)),
        ]
        text = [(name, value) for name, value in fields if value]
        text += [(name, _bibtex_verbatim(value)) for name, value in
                 (("doi", paper.doi), ("eprint", arxiv), ("archivePrefix", "arXiv" if arxiv else ""),
                  ("url", _url(paper))) if value]
        text += [(name, _bibtex_escape(value)) for name, value in
                 (("abstract", _published_abstract(paper)), ("note", _note(paper)),
                  ("keywords", ", ".join(_keywords(paper)))) if value]
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in text)
        entries.append(f"@{entry_type}{{{key},\n{body}\n}}\n")
    return "\n".join(entries)


# --------------------------------------------------------------------------- RIS


def to_ris(papers: Sequence[Paper]) -> str:
    """RIS records, `TY  - ` first and `ER  - ` last, one tag per line, names as "Last, First"; the type
    (CONF, JOUR, GEN, ...) and the venue's tag follow `publication_kind`."""
    lines = []
    for key, paper in zip(citation_keys(papers), papers):
        kind = publication_kind(paper)
        ris_type, venue_tag = _RIS_TYPES[kind]
        arxiv = arxiv_id(paper)
        tags: list[tuple[str, Any]] = [("TY", ris_type), ("ID", key), ("TI", paper.title)]
        tags += [("AU", ", ".join(p for p in reversed(split_name(a)) if p)) for a in paper.authors]
        tags += [("PY", paper.year), (venue_tag, paper.venue if _shows_venue(paper, kind) else ""),
                 ("DO", paper.doi), ("UR", _url(paper)), ("AN", f"arXiv:{arxiv}" if arxiv else ""),
                 ("AB", _published_abstract(paper)), ("N1", _note(paper))]
        tags += [("KW", k) for k in _keywords(paper)]
        lines += [f"{tag}  - {' '.join(str(value).split())}" for tag, value in tags if value not in (None, "")]
        lines += ["ER  - ", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- CSL-JSON


def _csl_item(key: str, paper: Paper) -> dict[str, Any]:
    kind = publication_kind(paper)
    csl_type, venue_field = _CSL_TYPES[kind]
    item: dict[str, Any] = {"id": key, "citation-key": key, "type": csl_type, "title": paper.title}
    authors = []
    for name in paper.authors:
        given, family = split_name(name)
        authors.append({"family": family, "given": given} if given else {"literal": family})
    if authors:
        item["author"] = authors
    if _shows_venue(paper, kind):
        item[venue_field] = paper.venue
    if paper.year is not None:
        item["issued"] = {"date-parts": [_date_parts(paper)]}
    arxiv = arxiv_id(paper)
    if kind == "preprint" and arxiv:  # how Zotero writes an arXiv preprint
        item.update({"publisher": "arXiv", "number": f"arXiv:{arxiv}"})
    for name, value in (("DOI", paper.doi), ("URL", _url(paper)), ("abstract", _published_abstract(paper)),
                        ("note", _note(paper)), ("keyword", ", ".join(_keywords(paper)))):
        if value:
            item[name] = value
    return item


def _date_parts(paper: Paper) -> list[int]:
    """[year] or [year, month, day] when `extra["date"]` is an ISO date of the same year."""
    match = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?", str(paper.extra.get("date") or ""))
    if match and int(match.group(1)) == paper.year:
        return [int(part) for part in match.groups() if part]
    return [paper.year]


def to_csl_json(papers: Sequence[Paper]) -> str:
    """A CSL-JSON array; `id` is the citation key."""
    items = [_csl_item(key, paper) for key, paper in zip(citation_keys(papers), papers)]
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


# --------------------------------------------------------------------------- CSV


def spreadsheet_safe(cell: Any) -> str:
    """A CSV cell a spreadsheet shows as text: one that Excel, LibreOffice or Google Sheets could run as a
    formula gets a leading apostrophe. That is a cell starting with a tab or carriage return, or whose first
    character after any leading whitespace and invisible format characters (zero-width space, byte-order mark,
    word joiner, bidi marks) is =, +, - or @, in ASCII or in a fullwidth or small form (＝ ＋ － ＠, ﹦ ﹢ ﹣ ﹫:
    the same signs under NFKC, as some spreadsheets read them); spreadsheets may trim such a start before
    they look for a formula."""
    text = "" if cell is None else str(cell)
    if text.startswith(_FORMULA_STARTS):
        return "'" + text
    start = next((ch for ch in text if not (ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc"))), "")
    return "'" + text if unicodedata.normalize("NFKC", start) in _FORMULA_SIGNS else text


def to_csv(papers: Sequence[Paper]) -> str:
    """A CSV table with a header row; authors and keywords joined with "; "; formula-like cells neutralised. Rows
    end in CRLF (RFC 4180), so that the writer quotes a cell holding a carriage return as well as one holding a
    newline: an unquoted "\r" would end the row there for a spreadsheet."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for key, paper in zip(citation_keys(papers), papers):
        row = [key, paper.id, publication_kind(paper), paper.title, "; ".join(paper.authors), paper.year,
               paper.venue, paper.doi, arxiv_id(paper), _url(paper), _published_abstract(paper),
               _note(paper), "; ".join(_keywords(paper))]
        writer.writerow([spreadsheet_safe(cell) for cell in row])
    return out.getvalue()


EXPORTERS: dict[str, Callable[[Sequence[Paper]], str]] = {
    "bibtex": to_bibtex, "ris": to_ris, "csl-json": to_csl_json, "csv": to_csv,
}


def export(papers: Sequence[Paper], fmt: str) -> str:
    """Export in one of `EXPORTERS` ("bibtex", "ris", "csl-json", "csv")."""
    try:
        return EXPORTERS[fmt.lower()](papers)
    except KeyError:
        raise ValueError(f"unknown export format {fmt!r}; use one of {', '.join(EXPORTERS)}") from None
