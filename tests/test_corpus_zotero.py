"""The Zotero builder on a real SQLite file with the subset of Zotero's schema it reads, and on Zotero's exports."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from recommender.cli import main
from recommender.corpus.loaders import load_corpus
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.zotero import build_from_zotero

SCHEMA = """
CREATE TABLE libraries (libraryID INTEGER PRIMARY KEY, type TEXT NOT NULL, editable INT NOT NULL DEFAULT 1);
CREATE TABLE itemTypes (itemTypeID INTEGER PRIMARY KEY, typeName TEXT, templateItemTypeID INT, display INT DEFAULT 1);
CREATE TABLE fields (fieldID INTEGER PRIMARY KEY, fieldName TEXT, fieldFormatID INT);
CREATE TABLE items (itemID INTEGER PRIMARY KEY, itemTypeID INT NOT NULL,
    dateAdded TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, libraryID INT NOT NULL, key TEXT NOT NULL,
    version INT NOT NULL DEFAULT 0, synced INT NOT NULL DEFAULT 0, UNIQUE (libraryID, key));
CREATE TABLE itemDataValues (valueID INTEGER PRIMARY KEY, value UNIQUE);
CREATE TABLE itemData (itemID INT, fieldID INT, valueID, PRIMARY KEY (itemID, fieldID));
CREATE TABLE creators (creatorID INTEGER PRIMARY KEY, firstName TEXT, lastName TEXT, fieldMode INT);
CREATE TABLE creatorTypes (creatorTypeID INTEGER PRIMARY KEY, creatorType TEXT);
CREATE TABLE itemCreators (itemID INT NOT NULL, creatorID INT NOT NULL, creatorTypeID INT NOT NULL DEFAULT 1,
    orderIndex INT NOT NULL DEFAULT 0, PRIMARY KEY (itemID, creatorTypeID, orderIndex));
CREATE TABLE deletedItems (itemID INTEGER PRIMARY KEY, dateDeleted DEFAULT CURRENT_TIMESTAMP NOT NULL);
CREATE TABLE collections (collectionID INTEGER PRIMARY KEY, collectionName TEXT NOT NULL,
    parentCollectionID INT DEFAULT NULL, libraryID INT NOT NULL, key TEXT NOT NULL);
CREATE TABLE collectionItems (collectionID INT NOT NULL, itemID INT NOT NULL, orderIndex INT NOT NULL DEFAULT 0,
    PRIMARY KEY (collectionID, itemID));
CREATE TABLE itemAttachments (itemID INTEGER PRIMARY KEY, parentItemID INT, linkMode INT, contentType TEXT, path TEXT);
CREATE TABLE itemNotes (itemID INTEGER PRIMARY KEY, parentItemID INT, note TEXT, title TEXT);
"""
TYPES = ["journalArticle", "conferencePaper", "book", "attachment", "note", "annotation", "preprint"]
FIELDS = ["title", "abstractNote", "date", "publicationTitle", "proceedingsTitle", "DOI", "url", "extra"]
CREATOR_TYPES = ["author", "editor", "contributor"]


class Library:
    """Writes items the way Zotero stores them (values shared in itemDataValues, names in creators)."""

    def __init__(self, path: Path):
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)
        self.db.executemany("INSERT INTO libraries VALUES (?, ?, 1)", [(1, "user"), (4, "group")])
        self.db.executemany("INSERT INTO itemTypes (itemTypeID, typeName) VALUES (?, ?)", enumerate(TYPES, 1))
        self.db.executemany("INSERT INTO fields (fieldID, fieldName) VALUES (?, ?)", enumerate(FIELDS, 1))
        self.db.executemany("INSERT INTO creatorTypes VALUES (?, ?)", enumerate(CREATOR_TYPES, 1))

    def item(self, key, kind="journalArticle", creators=(), library=1, **values) -> int:
        cur = self.db.execute("INSERT INTO items (itemTypeID, libraryID, key) VALUES (?, ?, ?)",
                              (TYPES.index(kind) + 1, library, key))
        item = cur.lastrowid
        for name, value in values.items():
            self.db.execute("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", (value,))
            (value_id,) = self.db.execute("SELECT valueID FROM itemDataValues WHERE value = ?", (value,)).fetchone()
            self.db.execute("INSERT INTO itemData VALUES (?, ?, ?)", (item, FIELDS.index(name) + 1, value_id))
        for order, (role, first, last) in enumerate(creators):
            cid = self.db.execute("INSERT INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)",
                                  (first, last, 0 if first else 1)).lastrowid
            self.db.execute("INSERT INTO itemCreators VALUES (?, ?, ?, ?)",
                            (item, cid, CREATOR_TYPES.index(role) + 1, order))
        return item

    def collection(self, cid, name, parent=None, items=()):
        self.db.execute("INSERT INTO collections VALUES (?, ?, ?, 1, ?)", (cid, name, parent, f"C{cid}"))
        self.db.executemany("INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)",
                            [(cid, i) for i in items])

    def close(self):
        self.db.commit()
        self.db.close()


@pytest.fixture
def library(tmp_path) -> Path:
    path = tmp_path / "Zotero" / "zotero.sqlite"
    path.parent.mkdir()
    lib = Library(path)
    a = lib.item("AAAA1111", title="Citation  recommendation with\n graphs",
                 abstractNote="We walk the citation graph from the draft's nearest papers.", date="2019-05-00 May 2019",
                 publicationTitle="Fixture Journal", DOI="https://doi.org/10.5555/Z.1",
                 creators=[("author", "Ada", "Moreau"), ("author", "", "The Fixture Consortium"),
                           ("editor", "Ed", "Itor")])
    b = lib.item("BBBB2222", "conferencePaper", title="Local context for citations", date="2021-00-00 2021",
                 proceedingsTitle="Proceedings of the Fixture Conference", creators=[("editor", "Only", "Editors")])
    lib.item("CCCC3333", "attachment", title="Full Text PDF")
    lib.item("DDDD4444", "note")
    deleted = lib.item("EEEE5555", title="A paper in the trash", date="2020")
    lib.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (deleted,))
    lib.item("FFFF6666", "book", date="2018")  # no title, no abstract: not a usable record
    g = lib.item("GGGG7777", "preprint", library=4, title="A group library preprint", date="0000-00-00 n.d.",
                 url="https://example.org/preprint")
    lib.collection(1, "Thesis", items=[a])
    lib.collection(2, "Chapter 2", parent=1, items=[g])
    lib.collection(3, "Other", items=[b])
    lib.close()
    return path


def test_regular_items_from_a_copy_of_zotero_sqlite(library, tmp_path):
    out = tmp_path / "zotero.jsonl.gz"
    summary = build_from_zotero(library, out)
    loaded = load_corpus(out)
    assert not loaded.problems
    papers = {p.id: p for p in loaded.papers}
    assert list(papers) == ["AAAA1111", "BBBB2222", "L4-GGGG7777"] and summary.papers == 3
    a = papers["AAAA1111"]
    assert a.title == "Citation recommendation with graphs" and a.year == 2019 and a.venue == "Fixture Journal"
    assert a.authors == ["Ada Moreau", "The Fixture Consortium"]  # authors only, when there are authors
    assert a.doi == "10.5555/z.1" and a.extra["item_type"] == "journalArticle"
    b = papers["BBBB2222"]
    assert b.venue == "Proceedings of the Fixture Conference" and b.authors == ["Only Editors"] and b.year == 2021
    assert papers["L4-GGGG7777"].year is None and papers["L4-GGGG7777"].extra["url"] == "https://example.org/preprint"


def test_the_live_file_is_never_opened_and_may_be_locked(library, tmp_path):
    before = library.read_bytes()
    holder = sqlite3.connect(library)  # a running Zotero holds an exclusive lock on its database
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        journal = library.with_name("zotero.sqlite-journal")
        journal.write_bytes(b"")  # Zotero is in the middle of a write
        summary = build_from_zotero(library, tmp_path / "z.jsonl")
    finally:
        holder.rollback()
        holder.close()
    assert summary.papers == 3
    assert any("Zotero seems to be running" in note for note in summary.notes)
    assert library.read_bytes() == before


def test_a_collection_and_its_subcollections(library, tmp_path, capsys):
    out = tmp_path / "thesis.jsonl"
    assert main(["corpus", "zotero", str(library), "--collection", "thesis", "--out", str(out)]) == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["AAAA1111", "L4-GGGG7777"]
    assert main(["corpus", "zotero", str(library), "--collection", "Nope", "--out", str(out)]) == 2
    assert "no Zotero collection named 'Nope' (there are: Chapter 2, Other, Thesis)" in capsys.readouterr().err


def test_a_damaged_database_is_a_clear_error(tmp_path):
    broken = tmp_path / "zotero.sqlite"
    broken.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)
    with pytest.raises(SourceError, match="cannot read the copy of .*close Zotero"):
        build_from_zotero(broken, tmp_path / "z.jsonl")
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(SourceError, match="not a Zotero database"):
        build_from_zotero(other, tmp_path / "z.jsonl")


def test_exports_are_read_by_the_corpus_loaders(tmp_path, capsys):
    csl = tmp_path / "My Library.json"
    csl.write_text(json.dumps([
        {"id": "http://zotero.org/users/local/x/items/AAAA1111", "type": "article-journal",
         "title": "Citation recommendation with graphs", "container-title": "Fixture Journal",
         "author": [{"family": "Moreau", "given": "Ada"}], "issued": {"date-parts": [[2019, 5]]},
         "DOI": "10.5555/z.1", "abstract": "We walk the citation graph."},
        {"id": "item2", "type": "paper-conference", "title": "Local context for citations"}]), encoding="utf-8")
    out = tmp_path / "csl.jsonl"
    assert main(["corpus", "zotero", str(csl), "--out", str(out)]) == 0
    papers = load_corpus(out).papers
    assert [p.title for p in papers] == ["Citation recommendation with graphs", "Local context for citations"]
    assert papers[0].year == 2019 and papers[0].doi == "10.5555/z.1" and papers[0].authors == ["Ada Moreau"]

    bib = tmp_path / "My Library.bib"
    bib.write_text("@article{moreau2019, title={Citation recommendation with graphs}, author={Moreau, Ada}, "
                   "year={2019}}\n", encoding="utf-8")
    assert main(["corpus", "zotero", str(bib), "--out", str(tmp_path / "bib.jsonl")]) == 0
    assert "wrote 1 paper to" in capsys.readouterr().out

    assert main(["corpus", "zotero", str(bib), "--collection", "Thesis", "--out", str(out)]) == 2
    assert "--collection works with zotero.sqlite" in capsys.readouterr().err
    assert main(["corpus", "zotero", str(tmp_path / "missing.sqlite"), "--out", str(out)]) == 2
    assert "file not found" in capsys.readouterr().err
