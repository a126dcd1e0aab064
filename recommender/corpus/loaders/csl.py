"""CSL-JSON items (Zotero's and citation managers' export) as corpus records."""
from __future__ import annotations

import re
from typing import Any

from recommender.corpus.identifiers import normalize_doi
from recommender.corpus.loaders.records import RecordError, type_name
from recommender.corpus.loaders.validate import WHOLE_NUMBER_RE, parse_year

YEAR_IN_TEXT_RE = re.compile(r"\b\d{4}\b")

def from_csl(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise RecordError(f"expected a CSL item object, got {type_name(item)}")
    record: dict[str, Any] = {
        "id": item.get("id"),
        "title": _first_string(item.get("title"), "title"),
        "abstract": _first_string(item.get("abstract"), "abstract"),
        "authors": _csl_names(item.get("author")),
        "venue": _first_string(item.get("container-title"), "container-title"),
        "references": item.get("references"),
    }
    year, date = _csl_date(item.get("issued"))
    record["year"] = year
    if date:
        record["date"] = date
    if item.get("DOI"):
        record["doi"] = normalize_doi(str(item["DOI"]))
    if isinstance(item.get("keyword"), str):
        record["keywords"] = [k.strip() for k in re.split(r"[,;]", item["keyword"]) if k.strip()]
    skip = {"id", "title", "abstract", "author", "container-title", "references", "issued", "DOI", "keyword"}
    for name, value in item.items():
        if name not in skip and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            record[name.lower()] = value
    return record


def _first_string(value: Any, name: str) -> str | None:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value[0]
    if value is None or isinstance(value, str):
        return value
    raise RecordError(f"{name} must be a string, got {type_name(value)}")


_CSL_NAME_PARTS = ("given", "non-dropping-particle", "dropping-particle", "family", "suffix", "literal")


def _csl_names(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(f"author must be a list of CSL name objects, got {type_name(value)}")
    names = []
    for i, person in enumerate(value):
        if not isinstance(person, dict):
            raise RecordError(f"author[{i}] must be a CSL name object ({{family, given}}), got {type_name(person)}")
        for key in _CSL_NAME_PARTS:
            if person.get(key) is not None and not isinstance(person[key], str):
                raise RecordError(f"author[{i}].{key} must be a string, got {type_name(person[key])}")
        parts = [person.get(k) for k in ("given", "non-dropping-particle", "family", "suffix")]
        name = " ".join(p.strip() for p in parts if p and p.strip()) or (person.get("literal") or "").strip()
        if name:
            names.append(name)
    return names


def _csl_date(value: Any) -> tuple[Any, str]:
    """(year, ISO date or "") of a CSL date object."""
    if value is None:
        return None, ""
    if not isinstance(value, dict):
        raise RecordError(f"issued must be a CSL date object, got {type_name(value)}")
    parts = value.get("date-parts")
    if parts is not None:
        if not (isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]):
            raise RecordError("issued.date-parts must be a list like [[2020, 5, 1]]")
        first = parts[0]
        year = parse_year(first[0])
        if len(first) > 1 and all(WHOLE_NUMBER_RE.match(str(p)) for p in first[1:3]):
            return year, "-".join([f"{year:04d}", *(f"{int(p):02d}" for p in first[1:3])])
        return year, ""
    text = str(value.get("raw") or value.get("literal") or "")
    match = YEAR_IN_TEXT_RE.search(text)
    return (int(match.group(0)) if match else None), ""

