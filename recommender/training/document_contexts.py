"""Citation contexts from whole papers (PDF, LaTeX, Word, Markdown or text): every paragraph that cites papers of
the index, and each citing sentence of a longer one, as rows of a context file for `train --contexts`
(`training/local.py`), so that an index learns from the full texts of its own field.

    found = contexts_from_files([Path("papers/")], index)        # one DocumentContexts per readable file
    write_contexts([row for doc in found for row in doc.rows], Path("contexts.jsonl"))

A citation counts when its marker resolves to an entry of the paper's reference list and that entry matches a
paper of the index (`references.ReferenceIndex`: DOI, arXiv id, or title checked against authors and year). In a
context every marker is written [CIT], as in the benchmark files; placeholders and unmatched citations stay [CIT]
without a cited paper. The citing paper's title and abstract are the context's draft.
"""
from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tqdm.auto import tqdm

from recommender.review.claims import split_sentences
from recommender.documents.errors import DocumentError
from recommender.documents.model import Document, Passage
from recommender.documents.read import BINARY_SUFFIXES, LATEX_SUFFIXES, MARKDOWN_SUFFIXES, read_document
from recommender.corpus.identifiers import normalize_title
from recommender.references.match import ReferenceIndex
from recommender.references.parse import ReferenceItem

DOCUMENT_SUFFIXES = {*BINARY_SUFFIXES, *LATEX_SUFFIXES, *MARKDOWN_SUFFIXES, ".txt"}


@dataclass
class DocumentContexts:
    """What one file gave: its context rows, how much of its reference list the index holds, what went wrong."""

    name: str
    rows: list[dict] = field(default_factory=list)
    references: int = 0  # entries in its reference list
    matched: int = 0     # entries matched to a paper of the index
    problem: str = ""    # why the file could not be read ("" when it was)
    notices: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line for people."""
        if self.problem:
            return f"{self.name}: skipped ({self.problem})"
        paragraphs = sum(row["granularity"] == "paragraph" for row in self.rows)
        return (f"{self.name}: {self.matched} of {self.references} references in the index; {paragraphs} paragraph "
                f"and {len(self.rows) - paragraphs} sentence contexts")


def document_contexts(document: Document, name: str, references: ReferenceIndex,
                      citing: str | None = None) -> DocumentContexts:
    """The contexts of one read document (`name` identifies it: its file name; `citing`: its `citing_id`, when
    already known)."""
    found = DocumentContexts(name, references=len(document.references), notices=list(document.notices))
    matched = [cited_papers(item, references) for item in document.references]
    found.matched = sum(bool(ids) for ids in matched)
    citing = citing or citing_id(document, name, references)
    draft = {"citing_title": document.title, "citing_abstract": document.abstract, "citing_id": citing}

    def cited(passage: Passage, start: int, end: int) -> set[str]:
        return {pid for marker in passage.markers if start <= marker.start and marker.end <= end
                for i in marker.references if i < len(matched) for pid in matched[i]} - {citing}

    for number, passage in enumerate(document.passages, start=1):
        relevant = cited(passage, 0, len(passage.text))
        if not relevant:
            continue
        where = {"source": name, **passage.where}
        found.rows.append({"qid": f"{name}#p{number}", "context": passage.render(marked=_every), "relevant":
                           sorted(relevant), **draft, "granularity": "paragraph", **where})
        sentences = split_sentences(passage.text)
        if len(sentences) < 2:
            continue
        for s, (start, end, _) in enumerate(sentences, start=1):
            relevant = cited(passage, start, end)
            if relevant:
                found.rows.append({"qid": f"{name}#p{number}s{s}", "context": passage.render(start, end, _every),
                                   "relevant": sorted(relevant), **draft, "granularity": "sentence", **where})
    return found


def contexts_from_files(paths: list[Path], index, progress: bool = True,
                        on_progress: Callable[[int, int], None] | None = None,
                        includes_outside: bool = False) -> list[DocumentContexts]:
    """The contexts of every document among `paths` (files, or folders searched for documents), in path order; a
    file that cannot be read is reported in its entry, not raised. ValueError when there is no document at all.
    `on_progress(done, total)` before each file; `includes_outside`: a LaTeX file may include files outside its
    folder (the command line's choice)."""
    files = document_files(paths)
    references = ReferenceIndex(index.all_papers())
    out, seen = [], {}
    by_name = len(files) == len({f.name for f in files})  # file names alone tell the papers apart
    for done, path in enumerate(tqdm(files, desc="reading papers", unit="paper", disable=not progress)):
        if on_progress:
            on_progress(done, len(files))
        name = path.name if by_name else str(path)
        try:
            document = read_document(path, includes_outside=includes_outside)
        except (DocumentError, OSError) as exc:
            out.append(DocumentContexts(name, problem=str(exc)))
            continue
        citing = citing_id(document, name, references)
        same = seen.setdefault(citing, name)
        if same != name:  # a second copy (the PDF and the LaTeX source of one paper) would count its contexts twice
            out.append(DocumentContexts(name, problem=f"the same paper as {same}"))
            continue
        out.append(document_contexts(document, name, references, citing))
    return out


def document_files(paths: list[Path]) -> list[Path]:
    """The files named, and the documents (by suffix) inside the folders named, sorted; in a folder a LaTeX file
    without \\documentclass is a part of a project, read with its main file. ValueError when a path does not
    exist or no document is found."""
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES
                            and not any(part.startswith(".") for part in p.relative_to(path).parts)
                            and not _latex_part(p))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path} does not exist")
    if not files:
        raise ValueError(f"no papers found in {', '.join(map(str, paths))} (looked for "
                         f"{', '.join(sorted(DOCUMENT_SUFFIXES))} files)")
    return list(dict.fromkeys(files))


def write_contexts(rows: list[dict], path: Path) -> None:
    """Write the rows as a context file (JSONL; gzipped when the name ends in .gz), all at once: an existing file
    is replaced only when the new one is complete."""
    path = Path(path)
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(gzip.compress(text) if path.suffix == ".gz" else text)
    os.replace(partial, path)


def cited_papers(item: ReferenceItem, references: ReferenceIndex) -> set[str]:
    """The papers of the index one reference cites; of several of one title (a paper and its reprint), those of
    the reference's year when it names one that some of them have."""
    ids = references.match_item(item)
    if len(ids) > 1 and item.year:
        dated = {pid for pid in ids if (facts := references.facts.get(pid)) and facts.year == item.year}
        return dated or ids
    return ids


def citing_id(document: Document, name: str, references: ReferenceIndex) -> str:
    """Who cites, the unit of cross-validation: the index's id of the document itself when the index holds it (by
    its title), else its title, else the file's name."""
    title = normalize_title(document.title)
    if not title:
        return f"file:{name}"
    ids = references.match_item(ReferenceItem(raw=document.title, title=document.title))
    return min(ids) if len(ids) == 1 else f"title:{title}"


def _latex_part(path: Path) -> bool:
    return path.suffix.lower() in LATEX_SUFFIXES and b"\\documentclass" not in path.read_bytes()


def _every(_marker) -> bool:
    return True
