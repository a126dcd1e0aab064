"""A Zotero library as a corpus: from a copy of `zotero.sqlite`, or from Zotero's CSL-JSON or BibTeX export.

The database is copied to a temporary folder first and only the copy is opened, read-only: the live file is
never opened with SQLite, so a running Zotero is never disturbed. Items are the regular ones (no attachments,
notes, annotations, or items in the trash), optionally of one collection and its subcollections. Ids are
Zotero item keys (prefixed with the library for group libraries). Exports are read by `recommender.corpus.loaders`.
"""
from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Iterator

from recommender.corpus.identifiers import normalize_doi
from recommender.corpus.loaders import CorpusError, load_corpus
from recommender.corpus.sources.corpus_file import ReferenceCount, Summary, write_corpus
from recommender.corpus.sources.errors import SourceError

NOT_REFERENCES = ("attachment", "note", "annotation")
VENUE_FIELDS = ("publicationTitle", "proceedingsTitle", "conferenceName", "bookTitle", "websiteTitle",
                "repository", "university", "institution")
_SHOWN_PROBLEMS = 5


def build_from_zotero(path: str | Path, out: str | Path, *, collection: str | None = None) -> Summary:
    """Write the library in `path` (zotero.sqlite, or a CSL-JSON / BibTeX export) to the corpus file `out`."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"{path}: file not found (give zotero.sqlite from Zotero's data folder, or an export)")
    with path.open("rb") as handle:
        try:
            is_sqlite = handle.read(16) == b"SQLite format 3\x00"
        except OSError as exc:
            raise SourceError(f"{path}: cannot read it ({exc.strerror})") from None
    if is_sqlite:
        return _from_database(path, Path(out), collection)
    if collection:
        raise SourceError("--collection works with zotero.sqlite; an export holds what was exported")
    return _from_export(path, Path(out))


def _from_export(path: Path, out: Path) -> Summary:
    try:
        result = load_corpus(path)
    except CorpusError as exc:
        raise SourceError(str(exc)) from None
    if result.format not in ("csl-json", "bibtex"):
        raise SourceError(f"{path}: not a Zotero export (read as {result.format}); export the library as "
                          "CSL JSON or BibTeX, or give zotero.sqlite")
    notes = [str(p) for p in result.problems[:_SHOWN_PROBLEMS]]
    if len(result.problems) > _SHOWN_PROBLEMS:
        notes.append(f"... and {len(result.problems) - _SHOWN_PROBLEMS} more problems")
    written = write_corpus((p.to_dict() for p in result.papers), out)
    return Summary(str(out), written, ReferenceCount(), notes=[result.summary(), *notes])


def _from_database(path: Path, out: Path, collection: str | None) -> Summary:
    with tempfile.TemporaryDirectory(prefix="zotero-copy-") as folder:
        copy = Path(folder) / "zotero.sqlite"
        try:
            shutil.copyfile(path, copy)
        except PermissionError:
            raise SourceError(f"{path} is locked (Zotero is running?): close Zotero and run again, or export the "
                              "library as CSL JSON and give that file") from None
        except OSError as exc:
            raise SourceError(f"{path}: cannot copy it ({exc.strerror})") from None
        notes = []
        if path.with_name(path.name + "-wal").exists() or path.with_name(path.name + "-journal").exists():
            notes.append("Zotero seems to be running: changes it has not yet written to zotero.sqlite are missing; "
                         "close Zotero for a complete copy")
        db = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        try:
            written = write_corpus(zotero_items(db, collection), out)
        except sqlite3.DatabaseError as exc:
            raise SourceError(f"cannot read the copy of {path} ({exc}): Zotero was probably writing to it; close "
                              "Zotero and run again, or export the library as CSL JSON") from None
        finally:
            db.close()
    return Summary(str(out), written, ReferenceCount(), notes=notes)


def zotero_items(db: sqlite3.Connection, collection: str | None = None) -> Iterator[dict[str, Any]]:
    """The library's regular items as corpus records, in the order they were added."""
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if not {"items", "itemData", "itemDataValues"} <= tables:
        raise SourceError("not a Zotero database (it has no items/itemData tables)")
    item_types = "itemTypesCombined" if "itemTypesCombined" in tables else "itemTypes"
    fields = "fieldsCombined" if "fieldsCombined" in tables else "fields"
    where, params = [f"t.typeName NOT IN ({', '.join('?' * len(NOT_REFERENCES))})"], list(NOT_REFERENCES)
    if "deletedItems" in tables:
        where.append("i.itemID NOT IN (SELECT itemID FROM deletedItems)")
    if collection:
        ids = _collection_ids(db, collection)
        where.append(f"i.itemID IN (SELECT itemID FROM collectionItems WHERE collectionID IN "
                     f"({', '.join('?' * len(ids))}))")
        params += ids
    items = db.execute(f"SELECT i.itemID, i.key, i.libraryID, t.typeName FROM items i "
                       f"JOIN {item_types} t ON t.itemTypeID = i.itemTypeID WHERE {' AND '.join(where)} "
                       f"ORDER BY i.itemID", params).fetchall()
    values = _field_values(db, fields)
    creators = _creators(db, tables)
    for item_id, key, library_id, type_name in items:
        record = _record(key if library_id == 1 else f"L{library_id}-{key}", type_name,
                         values.get(item_id, {}), creators.get(item_id, []))
        if record is not None:
            yield record


def _record(item_key: str, type_name: str, data: dict[str, str], creators: list[tuple[str, str]]) -> dict | None:
    title, abstract = " ".join(data.get("title", "").split()), " ".join(data.get("abstractNote", "").split())
    if not (title or abstract):
        return None
    authors = [name for kind, name in creators if kind == "author"] or [name for _, name in creators]
    record: dict[str, Any] = {
        "id": item_key,
        "title": title,
        "abstract": abstract,
        "authors": authors,
        "year": _year(data.get("date", "")),
        "venue": next((data[f] for f in VENUE_FIELDS if data.get(f)), ""),
        "references": [],
        "zotero_key": item_key,
        "item_type": type_name,
    }
    if data.get("DOI"):
        record["doi"] = normalize_doi(data["DOI"])
    if data.get("url"):
        record["url"] = data["url"]
    return record


def _year(date: str) -> int | None:
    """Zotero stores dates as "2019-05-00 May 2019" (SQL form, then the text as typed)."""
    head = date[:4]
    return int(head) if head.isdigit() and head != "0000" else None


def _field_values(db: sqlite3.Connection, fields: str) -> dict[int, dict[str, str]]:
    values: dict[int, dict[str, str]] = {}
    for item_id, name, value in db.execute(
            f"SELECT d.itemID, f.fieldName, v.value FROM itemData d JOIN {fields} f ON f.fieldID = d.fieldID "
            "JOIN itemDataValues v ON v.valueID = d.valueID"):
        values.setdefault(item_id, {})[name] = str(value)
    return values


def _creators(db: sqlite3.Connection, tables: set[str]) -> dict[int, list[tuple[str, str]]]:
    """Each item's (creator type, "First Last") in Zotero's order."""
    if not {"creators", "itemCreators", "creatorTypes"} <= tables:
        return {}
    found: dict[int, list[tuple[str, str]]] = {}
    for item_id, kind, first, last in db.execute(
            "SELECT ic.itemID, ct.creatorType, c.firstName, c.lastName FROM itemCreators ic "
            "JOIN creators c ON c.creatorID = ic.creatorID JOIN creatorTypes ct ON ct.creatorTypeID = ic.creatorTypeID "
            "ORDER BY ic.itemID, ic.orderIndex"):
        name = " ".join(" ".join(p.split()) for p in (first or "", last or "") if p and p.strip())
        if name:
            found.setdefault(item_id, []).append((kind, name))
    return found


def _collection_ids(db: sqlite3.Connection, name: str) -> list[int]:
    """The collection named `name` (any case) and all collections under it."""
    rows = db.execute("SELECT collectionID, collectionName, parentCollectionID FROM collections").fetchall()
    wanted = " ".join(name.split()).casefold()
    chosen = [cid for cid, cname, _ in rows if " ".join(cname.split()).casefold() == wanted]
    if not chosen:
        names = sorted({cname for _, cname, _ in rows})
        shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
        raise SourceError(f"no Zotero collection named {name!r}" + (f" (there are: {shown})" if names else
                                                                     " (the library has no collections)"))
    children: dict[int, list[int]] = {}
    for cid, _, parent in rows:
        if parent is not None:
            children.setdefault(parent, []).append(cid)
    found, stack = [], list(chosen)
    while stack:
        cid = stack.pop()
        if cid not in found:
            found.append(cid)
            stack.extend(children.get(cid, []))
    return found
