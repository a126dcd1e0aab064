"""`read_document`: one entry point for every format, chosen by what the file holds, then by its name.

PDF (by its `%PDF` signature), zip (a .docx, or a zipped LaTeX project: its main .tex is the one with
`\\documentclass`, its .bib files those named by `\\bibliography` / `\\addbibresource`, else all), a LaTeX project
as a tar archive, gzipped or not (arXiv's source download), a gzipped single file, LaTeX,
Markdown or plain text (by suffix, else by content). Every size is bounded while reading (`limits.py`): files
over MAX_BYTES are refused before they are read; images, spreadsheets, old Office files and binary data are
refused with a message saying what they are.
"""
from __future__ import annotations

import gzip
import os
import posixpath
import re
import tarfile
import zipfile
import zlib
from io import BytesIO
from pathlib import Path

from recommender.corpus.bibtex import holds_entry
from recommender.documents.decoding import SUPPORTED, decode
from recommender.documents.errors import DocumentError
from recommender.documents.limits import (MAX_ARCHIVE_BYTES, MAX_ARCHIVE_MEMBERS, MAX_BYTES, MAX_PROJECT_BIB_BYTES, MAX_TEXT_CHARS, check,
                     megabytes)
from recommender.documents.model import Document
from recommender.documents.project import ArchiveProject, FolderProject, check_project_size, project_kind

LATEX_SUFFIXES = {".tex", ".ltx", ".latex"}
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown", ".rmd", ".qmd"}
BINARY_SUFFIXES = {".pdf": "PDF", ".docx": "Word document", ".zip": "zip archive", ".gz": "gzip file",
                   ".tgz": "gzipped tar archive", ".tar": "tar archive"}
MAIN_NAMES = ("main", "paper", "ms", "manuscript", "article", "root")

_SIGNATURES = [  # (leading bytes, what the file is, what to do instead)
    (b"\x89PNG", "a PNG image", "If it is a scanned page, run OCR first"),
    (b"\xff\xd8\xff", "a JPEG image", "If it is a scanned page, run OCR first"),
    (b"GIF8", "a GIF image", ""),
    (b"II*\x00", "a TIFF image", "If it is a scan, run OCR first"),
    (b"MM\x00*", "a TIFF image", "If it is a scan, run OCR first"),
    (b"\xd0\xcf\x11\xe0", "an old Office file (.doc, .xls or .ppt)", "Save it as .docx or PDF"),
    (b"{\\rtf", "an RTF document", "Save it as .docx or PDF"),
    (b"%!PS", "a PostScript file", "Convert it to PDF"),
    (b"7z\xbc\xaf", "a 7-Zip archive", "Pack a LaTeX project as .zip"),
    (b"Rar!", "a RAR archive", "Pack a LaTeX project as .zip"),
]
_LATEX_RE = re.compile(r"\\documentclass\b|\\begin\{document\}|\\(?:sub)*section\*?\{|\\cite[a-z]*\*?(?:\[[^\[\]]*\])*\{")
# within one line ([ \t], not \s): "^\s*" searched over many blank lines takes quadratic time
_MARKDOWN_RE = re.compile(r"^(?:#{1,6}[ \t]+\S|---[ \t]*$|[ \t]*[-*][ \t]+\S.*$)", re.MULTILINE)
_DOCUMENTCLASS_RE = re.compile(r"^[^%\n]*\\documentclass\b", re.MULTILINE)


def read_document(source: str | os.PathLike | bytes, name: str = "", bib: str | bytes | None = None, *,
                  includes_outside: bool = False) -> Document:
    """Read a draft or submission into a Document.

    `source`: a path, or the file's bytes (then `name`, the file name, gives its suffix). `bib`: a .bib file's
    text for a LaTeX document. A LaTeX file on disk includes files from its own folder only, unless
    `includes_outside` (the command line's choice, never an upload's). Raises DocumentError (a ValueError) with a
    message for the user.
    """
    data, name = _load(source, name)
    if not data.strip():
        raise DocumentError(f"The document{' ' + name if name else ''} is empty.")
    if bib is not None and len(bib) > MAX_PROJECT_BIB_BYTES:
        raise DocumentError(f"The .bib file is over {megabytes(MAX_PROJECT_BIB_BYTES)}, the most read with a document.")
    bibs = [decode(bib, "the .bib file")] if bib is not None else []
    suffix = Path(name).suffix.casefold()
    if data.lstrip().startswith(b"%PDF-") or (suffix == ".pdf" and b"%PDF-" in data[:1024]):
        from recommender.documents.pdf import read_pdf
        return _with_bib_notice(read_pdf(data), bibs)
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _read_zip(data, bibs)
    if data.startswith(b"\x1f\x8b") and not _is_tar(_gunzip(data, name, limit=512)):
        inner = _gunzip(data, name)  # one gzipped file: read what it holds, by its name without .gz
        if inner.startswith(b"\x1f\x8b"):
            raise DocumentError("This gzip file holds another gzip file; unpack it first.")
        return read_document(inner, re.sub(r"\.gz$", "", name, flags=re.IGNORECASE), bib=bib)
    if data.startswith(b"\x1f\x8b") or _is_tar(data):
        return _read_tar(data, bibs)
    for signature, what, advice in _SIGNATURES:
        if data.startswith(signature):
            raise DocumentError(f"This file is {what}, not a document that can be read. "
                                f"{advice + '; or upload ' if advice else 'Upload '}{SUPPORTED}.")
    if suffix in BINARY_SUFFIXES:
        raise DocumentError(f"This file is named {suffix} but is no {BINARY_SUFFIXES[suffix]} (it lacks the "
                            "signature every such file starts with): it is damaged, or another kind of file "
                            f"renamed. Upload {SUPPORTED}.")
    check(len(data) // 4, MAX_TEXT_CHARS, "The document's text", "characters")  # no character takes more bytes
    text = decode(data, "the document")
    check(len(text), MAX_TEXT_CHARS, "The document's text")
    if holds_entry(text[:5000]) and not _LATEX_RE.search(text) and suffix not in LATEX_SUFFIXES:
        raise DocumentError("This is a BibTeX file, not a document. Give it as the bibliography of the .tex "
                            "(or zip the LaTeX project), or give the document itself.")
    if suffix in LATEX_SUFFIXES or (suffix not in MARKDOWN_SUFFIXES and _LATEX_RE.search(text)):
        from recommender.documents.latex import read_latex
        if isinstance(source, (bytes, bytearray, memoryview)):
            return read_latex(text, bibs)
        return read_latex(text, bibs, FolderProject(Path(source), outside=includes_outside))
    if suffix in MARKDOWN_SUFFIXES or (suffix not in (".txt", ".text") and len(_MARKDOWN_RE.findall(text)) >= 2):
        from recommender.documents.markdown import read_markdown
        return _with_bib_notice(read_markdown(text), bibs)
    from recommender.documents.text import read_text
    return _with_bib_notice(read_text(text), bibs)


def _load(source: str | os.PathLike | bytes, name: str) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        _check_size(len(data), name)
        return data, name
    path = Path(source)
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise DocumentError(f"{path}: no such file.") from exc
    if path.is_dir():
        raise DocumentError(f"{path} is a folder: give the document, or zip the LaTeX project.")
    _check_size(size, path.name)
    return path.read_bytes(), name or path.name


def _check_size(size: int, name: str) -> None:
    if size > MAX_BYTES:
        raise DocumentError(f"The document{' ' + name if name else ''} is {size / 1024 / 1024:.0f} MB; documents "
                            f"up to {megabytes(MAX_BYTES)} are read. Leave out images (or compress the PDF) and "
                            "try again.")


def _read_zip(data: bytes, bibs: list[str]) -> Document:
    try:
        archive = zipfile.ZipFile(BytesIO(data))
        names = archive.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise DocumentError(f"This zip file is damaged ({exc}).") from exc
    if "word/document.xml" in names:
        from recommender.documents.docx import read_docx
        return _with_bib_notice(read_docx(data), bibs)
    for marker, what in (("xl/workbook.xml", "an Excel workbook (.xlsx)"), ("ppt/presentation.xml",
                         "a PowerPoint presentation (.pptx)"), ("content.xml", "an OpenDocument file (.odt)")):
        if marker in names:
            raise DocumentError(f"This file is {what}, not a document that can be read. Save the text as .docx "
                                f"or PDF, or upload {SUPPORTED}.")
    return _read_latex_project(archive, bibs)


def _read_latex_project(archive: zipfile.ZipFile, bibs: list[str]) -> Document:
    """A zipped LaTeX project: the main .tex with its \\input files and .bib (or .bbl) files."""
    members = [info for info in archive.infolist() if not info.is_dir()]
    if len(members) > MAX_ARCHIVE_MEMBERS:
        raise DocumentError(f"The zip holds {len(members):,} files; a LaTeX project has far fewer "
                            f"(up to {MAX_ARCHIVE_MEMBERS:,} are read).")
    wanted = [info for info in members if project_kind(info.filename)]
    for kind in (".tex", ".bib"):  # the sizes the zip declares, which reading it holds to
        check_project_size(sum(info.file_size for info in wanted if project_kind(info.filename) == kind), "zip",
                           kind)
    files = {}
    for info in wanted:
        try:
            files[posixpath.normpath(info.filename)] = decode(archive.read(info), info.filename)
        except (zipfile.BadZipFile, OSError, RuntimeError) as exc:  # RuntimeError: an encrypted member
            raise DocumentError(f"{info.filename} in the zip cannot be unpacked ({exc}).") from exc
    return _latex_project(files, bibs, "zip")


def _read_tar(data: bytes, bibs: list[str]) -> Document:
    """A LaTeX project as a tar archive, gzipped or not (arXiv's source download), read as a stream: only its
    .tex, .bib and .bbl files are kept, and figures are skipped without being held."""
    stream = gzip.GzipFile(fileobj=BytesIO(data)) if data.startswith(b"\x1f\x8b") else BytesIO(data)
    files, members, sizes = {}, 0, {".tex": 0, ".bib": 0}
    try:
        with tarfile.open(fileobj=_Capped(stream, MAX_ARCHIVE_BYTES), mode="r|") as archive:
            for info in archive:
                if not info.isfile():
                    continue
                members += 1
                if members > MAX_ARCHIVE_MEMBERS:
                    raise DocumentError(f"The archive holds more than {MAX_ARCHIVE_MEMBERS:,} files; a LaTeX "
                                        "project has far fewer.")
                kind = project_kind(info.name)
                if not kind:
                    continue
                sizes[kind] += info.size  # the size in the member's header, which reading it holds to
                check_project_size(sizes[kind], "archive", kind)
                handle = archive.extractfile(info)
                files[posixpath.normpath(info.name)] = decode(handle.read() if handle else b"", info.name)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DocumentError(f"This archive is damaged ({exc}).") from exc
    return _latex_project(files, bibs, "archive")


class _Capped:
    """A read-only stream that refuses to give more than `limit` bytes (a small archive may unpack to gigabytes)."""

    def __init__(self, stream, limit: int):
        self.stream, self.limit, self.given = stream, limit, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        self.given += len(chunk)
        if self.given > self.limit:
            raise DocumentError(f"The archive unpacks to more than {megabytes(self.limit)}; that is no LaTeX "
                                "project.")
        return chunk


def _latex_project(files: dict[str, str], bibs: list[str], what: str) -> Document:
    """The main .tex of a project's files (path: text) read with its \\input files and its .bib or .bbl."""
    tex = {path: text for path, text in files.items() if path.casefold().endswith(".tex")}
    if not tex:
        raise DocumentError(f"This {what} holds no .tex file{' and no Word document' if what == 'zip' else ''}. "
                            f"Upload {SUPPORTED}.")
    main = _main_file(tex)
    from recommender.documents.latex import read_latex
    return read_latex(tex[main], bibs, ArchiveProject(files, main))


def _gunzip(data: bytes, name: str, limit: int | None = None) -> bytes:
    """What a gzip file holds: its first `limit` bytes, or (no limit) the whole of it, refused past MAX_BYTES."""
    try:
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, (limit or MAX_BYTES) + 1)
    except zlib.error as exc:
        raise DocumentError(f"The gzip file{' ' + name if name else ''} is damaged ({exc}).") from exc
    if limit is not None:
        return out[:limit]
    if len(out) > MAX_BYTES:
        raise DocumentError(f"The gzip file{' ' + name if name else ''} unpacks to more than "
                            f"{MAX_BYTES // 1024 // 1024} MB; documents up to that size are read.")
    return out


def _is_tar(data: bytes) -> bool:
    return data[257:262] == b"ustar"


def _main_file(tex: dict[str, str]) -> str:
    """The .tex that starts a document: with \\documentclass (and \\begin{document}); by name, then depth."""
    candidates = [path for path, text in tex.items() if _DOCUMENTCLASS_RE.search(text)]
    if not candidates:
        if len(tex) == 1:
            return next(iter(tex))
        raise DocumentError("None of the project's .tex files has a \\documentclass, so its main file is unknown. "
                            "Pack the project with its main .tex.")

    def preference(path: str) -> tuple:
        stem = posixpath.splitext(posixpath.basename(path))[0].casefold()
        return ("\\begin{document}" not in tex[path], stem not in MAIN_NAMES, path.count("/"), -len(tex[path]))

    return min(candidates, key=preference)


def _with_bib_notice(document: Document, bibs: list[str]) -> Document:
    if bibs:
        document.notices.append("A .bib file is read only with a LaTeX document; it was not used.")
    return document
