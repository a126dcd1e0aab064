"""OpenAlex work objects (an API page or a snapshot) as corpus records."""
from __future__ import annotations

from typing import Any

from recommender.corpus.identifiers import normalize_doi
from recommender.corpus.loaders.records import RecordError, shown, type_name

OPENALEX_PREFIX = "https://openalex.org/"


def looks_openalex(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    return str(obj.get("id", "")).startswith(OPENALEX_PREFIX) or "abstract_inverted_index" in obj \
        or "authorships" in obj



def from_openalex(work: Any) -> dict[str, Any]:
    if not isinstance(work, dict):
        raise RecordError(f"expected an OpenAlex work object, got {type_name(work)}")
    raw_id = work.get("id")
    record: dict[str, Any] = {
        "id": _openalex_short(raw_id) if isinstance(raw_id, str) else raw_id,
        "title": work.get("display_name") or work.get("title"),
        "abstract": rebuild_abstract(work.get("abstract_inverted_index")),
        "authors": _openalex_authors(work.get("authorships")),
        "venue": _openalex_venue(work),
        "year": work.get("publication_year"),
        "references": _openalex_refs(work.get("referenced_works")),
    }
    if isinstance(raw_id, str):
        record["openalex"] = raw_id
    if work.get("doi"):
        record["doi"] = normalize_doi(str(work["doi"]))
    if work.get("publication_date"):
        record["date"] = work["publication_date"]
    for name in ("type", "cited_by_count", "language"):
        if work.get(name) is not None:
            record[name] = work[name]
    if isinstance(work.get("is_retracted"), bool):  # kept: the reference check and the recommender read it
        record["is_retracted"] = work["is_retracted"]
    keywords = work.get("keywords")
    if keywords is not None and not isinstance(keywords, list):
        raise RecordError(f"keywords must be a list, got {type_name(keywords)}")
    names = [k.get("display_name") for k in keywords or [] if isinstance(k, dict)]
    if any(isinstance(name, str) and name.strip() for name in names):
        record["keywords"] = [name.strip() for name in names if isinstance(name, str) and name.strip()]
    return record


def _openalex_short(value: str) -> str:
    return value[len(OPENALEX_PREFIX):] if value.startswith(OPENALEX_PREFIX) else value


def rebuild_abstract(index: Any) -> str:
    """The abstract text from OpenAlex's {word: [positions]} inverted index."""
    if index is None:
        return ""
    if not isinstance(index, dict):
        raise RecordError(f"abstract_inverted_index must be an object, got {type_name(index)}")
    placed: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(isinstance(p, int) and p >= 0 for p in positions):
            raise RecordError(f"abstract_inverted_index[{shown(word)}] must be a list of word positions")
        for position in positions:
            placed[position] = word
    return " ".join(placed[p] for p in sorted(placed))


def _openalex_authors(authorships: Any) -> list[str]:
    if authorships is None:
        return []
    if not isinstance(authorships, list):
        raise RecordError(f"authorships must be a list, got {type_name(authorships)}")
    names = []
    for entry in authorships:
        author = entry.get("author") if isinstance(entry, dict) else None
        name = author.get("display_name") if isinstance(author, dict) else None
        if isinstance(name, str) and name.strip():
            names.append(name.strip())
    return names


def _openalex_venue(work: dict) -> str | None:
    for holder in (work.get("primary_location"), work.get("host_venue")):
        if isinstance(holder, dict):
            source = holder.get("source") if "source" in holder else holder
            if isinstance(source, dict) and isinstance(source.get("display_name"), str):
                return source["display_name"]
    return None


def _openalex_refs(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [_openalex_short(v) if isinstance(v, str) else v for v in value]

