"""The files a LaTeX document may pull in (`\\input`, `\\include`, `\\bibliography`), found only inside its project.

A project is an uploaded archive's members, or the folder of a .tex on disk. A name that leaves the project
(absolute, `../` past its top, or a link pointing out of the folder) is never opened nor looked at: the reader is
told only that it is outside, so a document cannot read the server's files or learn whether a path exists there.
Only the command line may allow it (`review --includes-outside`).
"""
from __future__ import annotations

import posixpath
from pathlib import Path

from recommender.documents.decoding import decode
from recommender.documents.errors import DocumentError
from recommender.documents.limits import MAX_PROJECT_BIB_BYTES, MAX_PROJECT_TEX_BYTES, megabytes

OUTSIDE_NOTICE = "An included file outside the project was ignored."


class Outside(Exception):
    """The name leads out of the project."""


class LatexProject:
    """The .tex, .bib and .bbl files of one project, by path relative to the project's top."""

    may_leave = False  # names may lead out of the project

    def __init__(self, main: str):
        self.main = main  # the main file's path

    def find(self, name: str, suffixes: tuple[str, ...] = ("", ".tex")) -> tuple[str, str] | None:
        """(path, text) of the file `name` (as LaTeX would look for it: beside the main file, with each of
        `suffixes` added), None when the project has no such file; Outside when `name` leaves the project."""
        base, outside = posixpath.dirname(self.main), True
        for suffix in suffixes:
            for path in dict.fromkeys((_join(base, name + suffix), _join("", name + suffix))):
                if "\x00" in path or (_leaves(path) and not self.may_leave):
                    continue
                outside = False
                text = self._read(path)
                if text is not None:
                    return path, text
        if outside:
            raise Outside(name)
        return None

    def bibs(self, names: list[str]) -> tuple[list[str], bool]:
        """The texts of the .bib files named (by `\\bibliography` or `\\addbibresource`), else those the project
        offers unnamed (an archive's), and whether a name led outside the project."""
        found, outside = [], False
        for name in names:
            try:
                hit = self.find(name, ("",) if name.casefold().endswith(".bib") else (".bib", ""))
            except Outside:
                outside = True
                continue
            if hit is not None and hit[1] not in found:
                found.append(hit[1])
        return found or self.unnamed_bibs(), outside

    def unnamed_bibs(self) -> list[str]:
        """The .bib files read when the document names none the project holds."""
        return []

    def bbl(self) -> str:
        """The main file's compiled bibliography (.bbl), or ""."""
        hit = self.find(posixpath.splitext(posixpath.basename(self.main))[0], (".bbl",))
        return hit[1] if hit else ""

    def _read(self, path: str) -> str | None:
        """The text of the file at `path` (inside the project), None when there is none."""
        raise NotImplementedError


class ArchiveProject(LatexProject):
    """An uploaded archive's project files, already read (path: text); names outside it are not there."""

    def __init__(self, files: dict[str, str], main: str):
        super().__init__(main)
        self.files = files

    def _read(self, path: str) -> str | None:
        if path in self.files:
            return self.files[path]
        by_name = [p for p in self.files if posixpath.basename(p) == posixpath.basename(path)]
        if path.casefold().endswith(".bib") and by_name:  # \bibliography{refs} with refs.bib in another folder
            return self.files[sorted(by_name)[0]]
        return None

    def unnamed_bibs(self) -> list[str]:
        """Every .bib file of the archive."""
        return [text for path, text in sorted(self.files.items()) if path.casefold().endswith(".bib")]


class FolderProject(LatexProject):
    """The folder of a .tex on disk, read lazily; `outside` lets names leave it (the command line's choice)."""

    def __init__(self, main_file: Path, outside: bool = False):
        super().__init__(main_file.name)
        self.folder = main_file.parent.resolve()
        self.may_leave = outside
        self.sizes = {".tex": 0, ".bib": 0}  # bytes read, by project_kind
        self.texts: dict[Path, str | None] = {}  # each file read once, however often it is included

    def _read(self, path: str) -> str | None:
        try:
            target = (self.folder / path).resolve()
            if not self.may_leave and not target.is_relative_to(self.folder):  # a link pointing out of the folder
                raise Outside(path)
            if target in self.texts:
                return self.texts[target]
            if not target.is_file():
                return None
            size = target.stat().st_size
        except (OSError, RuntimeError):  # unreadable, or a loop of links
            return None
        kind = project_kind(path) or ".tex"  # \input{macros.sty} counts with the .tex files
        self.sizes[kind] += size
        check_project_size(self.sizes[kind], "project", kind)
        try:
            self.texts[target] = decode(target.read_bytes(), path)
        except OSError:
            self.texts[target] = None
        return self.texts[target]


def project_kind(name: str) -> str:
    """".tex" for a LaTeX file of a project, ".bib" for its .bib and .bbl files, "" for the rest."""
    suffix = posixpath.splitext(name)[1].casefold()
    if "__MACOSX" in name or suffix not in (".tex", ".bib", ".bbl"):
        return ""
    return ".tex" if suffix == ".tex" else ".bib"


def check_project_size(size: int, what: str, kind: str) -> None:
    """DocumentError when a project's files of one kind (`project_kind`) come to more than their limit; `what`:
    "zip", "archive" or "project"."""
    limit, files = ((MAX_PROJECT_TEX_BYTES, ".tex files") if kind == ".tex" else
                    (MAX_PROJECT_BIB_BYTES, ".bib and .bbl files"))
    if size > limit:
        raise DocumentError(f"The {what}'s {files} come to more than {megabytes(limit)} (the limit for one LaTeX "
                            "project); leave out generated or data files and try again.")


def _join(base: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(base, name.strip()))


def _leaves(path: str) -> bool:
    return path.startswith("/") or path == ".." or path.startswith("../")
