"""Export papers as BibTeX, RIS, CSL-JSON (what Zotero imports) or CSV; every function returns a string."""
from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from typing import Any, Callable, Sequence

from .paper import Paper

_KEY_STOPWORDS = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "at", "by", "from", "is"}
_PARTICLES = {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "la", "le", "dos", "das", "ten", "ter"}
_PROCEEDINGS_RE = re.compile(r"\b(proc|proceedings|conference|symposium|workshop)\b", re.IGNORECASE)
_BOOKTITLE_TYPES = {"inproceedings", "incollection", "conference", "inbook"}
_BIBTEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "&": r"\&", "%": r"\%", "$": r"\$",
    "#": r"\#", "_": r"\_", "~": r"\textasciitilde{}",
}
_BIBTEX_SPECIALS_RE = re.compile("|".join(re.escape(ch) for ch in _BIBTEX_SPECIALS))
CSV_COLUMNS = ("key", "id", "title", "authors", "year", "venue", "doi", "abstract", "keywords")


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


# --------------------------------------------------------------------------- BibTeX


def _bibtex_escape(text: str) -> str:
    return _BIBTEX_SPECIALS_RE.sub(lambda m: _BIBTEX_SPECIALS[m.group(0)], " ".join(str(text).split()))


def _is_proceedings(paper: Paper) -> bool:
    return bool(_PROCEEDINGS_RE.search(paper.venue))


def _bibtex_type(paper: Paper) -> str:
    entry_type = str(paper.extra.get("entry_type") or "")
    if re.fullmatch(r"[a-z]+", entry_type):
        return entry_type
    if not paper.venue:
        return "misc"
    return "inproceedings" if _is_proceedings(paper) else "article"


def _bibtex_name(name: str) -> str:
    given, family = split_name(name)
    return f"{family}, {given}" if given else f"{{{family}}}" if " " in family else family


def _keywords(paper: Paper) -> list[str]:
    value = paper.extra.get("keywords") or []
    return [str(k) for k in value] if isinstance(value, list) else [k.strip() for k in str(value).split(",") if k.strip()]


def to_bibtex(papers: Sequence[Paper]) -> str:
    """BibTeX entries (UTF-8; LaTeX specials escaped) keyed by `citation_keys`."""
    entries = []
    for key, paper in zip(citation_keys(papers), papers):
        entry_type = _bibtex_type(paper)
        venue_field = "booktitle" if entry_type in _BOOKTITLE_TYPES else "journal"
        fields = [
            ("title", paper.title),
            ("author", " and ".join(_bibtex_name(a) for a in paper.authors)),
            (venue_field, paper.venue),
            ("year", "" if paper.year is None else str(paper.year)),
            ("doi", paper.doi),
            ("abstract", paper.abstract),
            ("keywords", ", ".join(_keywords(paper))),
        ]
        body = ",\n".join(f"  {name} = {{{_bibtex_escape(value)}}}" for name, value in fields if value)
        entries.append(f"@{entry_type}{{{key},\n{body}\n}}\n")
    return "\n".join(entries)


# --------------------------------------------------------------------------- RIS


def to_ris(papers: Sequence[Paper]) -> str:
    """RIS records (TY ... ER), one tag per line, names as "Last, First"."""
    lines = []
    for key, paper in zip(citation_keys(papers), papers):
        ris_type = "CONF" if paper.venue and _is_proceedings(paper) else "JOUR" if paper.venue else "GEN"
        tags: list[tuple[str, Any]] = [("TY", ris_type), ("ID", key), ("TI", paper.title)]
        tags += [("AU", ", ".join(p for p in reversed(split_name(a)) if p)) for a in paper.authors]
        tags += [("PY", paper.year), ("T2", paper.venue), ("DO", paper.doi), ("AB", paper.abstract)]
        tags += [("KW", k) for k in _keywords(paper)]
        lines += [f"{tag}  - {' '.join(str(value).split())}" for tag, value in tags if value not in (None, "")]
        lines += ["ER  - ", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- CSL-JSON


def _csl_item(key: str, paper: Paper) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": key,
        "citation-key": key,
        "type": "paper-conference" if paper.venue and _is_proceedings(paper) else
                "article-journal" if paper.venue else "article",
        "title": paper.title,
    }
    authors = []
    for name in paper.authors:
        given, family = split_name(name)
        authors.append({"family": family, "given": given} if given else {"literal": family})
    if authors:
        item["author"] = authors
    if paper.venue:
        item["container-title"] = paper.venue
    if paper.year is not None:
        item["issued"] = {"date-parts": [_date_parts(paper)]}
    if paper.doi:
        item["DOI"] = paper.doi
    if paper.abstract:
        item["abstract"] = paper.abstract
    if _keywords(paper):
        item["keyword"] = ", ".join(_keywords(paper))
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


def to_csv(papers: Sequence[Paper]) -> str:
    """A CSV table with a header row; authors and keywords joined with "; "."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for key, paper in zip(citation_keys(papers), papers):
        writer.writerow([key, paper.id, paper.title, "; ".join(paper.authors),
                         "" if paper.year is None else paper.year, paper.venue, paper.doi,
                         paper.abstract, "; ".join(_keywords(paper))])
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
