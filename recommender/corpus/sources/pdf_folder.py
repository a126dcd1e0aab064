"""A folder of PDFs (your papers, a reading list, a shared drive) as a corpus.

Each PDF, in the folder and its subfolders, is read with `recommender.documents.read_document` (title, abstract,
reference list); its authors, DOI and arXiv id come from its first page (`pdf_front`). A paper's id is its DOI,
else its arXiv id, else "pdf-" and the first 16 hex digits of the file's SHA-256, so the same file gets the same
id in every run. Each reference list is matched against the other PDFs of the folder (DOI, arXiv id, then title
checked against authors and year, as `recommender.references.match.ReferenceIndex` does for reviewers) to give the
citation links. PDFs that cannot be read (scanned, encrypted, damaged, no title or abstract) are reported and
skipped; a paper found twice (the same file, DOI or arXiv id) is kept once.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tqdm import tqdm

from recommender.corpus.sources.arxiv_snapshot import entry_year
from recommender.corpus.sources.corpus_file import ReferenceCount, Summary, write_corpus
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.pdf_front import read_front_matter
from recommender.documents.errors import DocumentError
from recommender.documents.read import read_document
from recommender.paper import Paper
from recommender.references.match import ReferenceIndex
from recommender.references.parse import ReferenceItem

SHOWN_SKIPS = 20


class Skipped(ValueError):
    """A PDF that gives no paper; the message says why, for the list of skipped files."""


def find_pdfs(folder: Path) -> list[Path]:
    """The PDFs under `folder` (by name, any case), hidden files and folders left out, in path order."""
    return sorted(p for p in folder.rglob("*") if p.suffix.casefold() == ".pdf" and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def read_pdf_paper(path: Path, folder: Path) -> tuple[dict[str, Any], list[ReferenceItem]]:
    """The corpus record of one PDF (references not yet linked) and its reference list; raises Skipped."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Skipped(f"cannot be read ({exc.strerror})") from None
    try:
        document = read_document(data, path.name)
    except DocumentError as exc:
        raise Skipped(_first_sentence(str(exc))) from None
    except Exception as exc:  # a reader's failure on one odd file must not end a run over hundreds
        raise Skipped(f"could not be read ({type(exc).__name__}: {exc})") from None
    if not (document.title or document.abstract):
        raise Skipped("no title or abstract was found on its first page")
    front = read_front_matter(data, document)
    digest = hashlib.sha256(data).hexdigest()
    record: dict[str, Any] = {
        "id": front.doi or front.arxiv or f"pdf-{digest[:16]}",
        "title": document.title,
        "abstract": document.abstract,
        "authors": front.authors,
        "year": entry_year({"id": front.arxiv}) if front.arxiv else None,
        "venue": "",
        "references": [],
        "file": path.relative_to(folder).as_posix(),
        "sha256": digest,
    }
    if front.doi:
        record["doi"] = front.doi
    if front.arxiv:
        record["arxiv"] = front.arxiv
    return record, document.references


def link_references(papers: list[tuple[dict[str, Any], list[ReferenceItem]]], count: ReferenceCount) -> None:
    """Fill each record's `references` with the ids of the folder's papers its reference list cites."""
    index = ReferenceIndex(Paper.from_dict(record) for record, _ in papers)
    for record, items in papers:
        linked: list[str] = []
        for item in items:
            found = sorted(index.match_item(item) - {record["id"]})
            linked += found
            if found:
                count.kept += len(found)
            else:
                count.outside += 1
        record["references"] = list(dict.fromkeys(linked))


def build_from_pdf_folder(folder: str | Path, out: str | Path, *, progress: bool = True) -> Summary:
    """Write the papers of the PDFs under `folder` to the corpus file `out`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SourceError(f"{folder}: no such folder (give the folder that holds your PDFs)")
    paths = find_pdfs(folder)
    if not paths:
        raise SourceError(f"{folder}: no PDF files in it or its subfolders")
    papers: list[tuple[dict[str, Any], list[ReferenceItem]]] = []
    seen: dict[str, str] = {}  # id or file hash -> the file that gave it
    skipped: list[str] = []
    duplicates: list[str] = []
    for path in tqdm(paths, desc="PDFs", unit=" PDFs", disable=not progress or None, dynamic_ncols=True):
        name = path.relative_to(folder).as_posix()
        try:
            record, references = read_pdf_paper(path, folder)
        except Skipped as exc:
            skipped.append(f"{name}: {exc}")
            continue
        first = seen.get(record["id"]) or seen.get(record["sha256"])
        if first is not None:
            duplicates.append(f"{name} (the same paper as {first})")
            continue
        seen[record["id"]] = seen[record["sha256"]] = name
        papers.append((record, references))
    if not papers:
        raise SourceError(f"{folder}: none of its {len(paths)} PDFs could be read"
                          + (f" (first: {skipped[0]})" if skipped else ""))
    count = ReferenceCount()
    link_references(papers, count)
    written = write_corpus((record for record, _ in papers), out)
    notes = []
    if skipped:
        notes.append(f"skipped {len(skipped)} of {len(paths)} PDFs that give no paper:")
        notes += [f"  {line}" for line in skipped[:SHOWN_SKIPS]]
        if len(skipped) > SHOWN_SKIPS:
            notes.append(f"  ... and {len(skipped) - SHOWN_SKIPS} more")
    if duplicates:
        notes.append(f"left out {len(duplicates)} duplicate{'' if len(duplicates) == 1 else 's'}: "
                     + "; ".join(duplicates[:SHOWN_SKIPS]) + (" ..." if len(duplicates) > SHOWN_SKIPS else ""))
    return Summary(str(out), written, count, notes=notes)


def _first_sentence(message: str) -> str:
    head, dot, _ = message.partition(". ")
    return head + ("." if dot else "")
