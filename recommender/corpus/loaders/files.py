"""Reading a corpus file's bytes: gzip or plain, damaged files in words, binary files refused, bad UTF-8 lines found."""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from recommender.corpus.loaders.records import CorpusError, RawRecord

READ_ERRORS = (OSError, EOFError, zlib.error)  # what reading a damaged (gzip) file raises
HEAD_BYTES = 65536
NOT_TEXT_SHARE = 0.05  # a head with more undecodable or control bytes than this is not a text file
BINARY_SIGNATURES = ((b"%PDF", "a PDF document"), (b"PK\x03\x04", "a ZIP archive (.zip, .docx, .xlsx, ...)"),
                      (b"\xff\xfe", "UTF-16 text"), (b"\xfe\xff", "UTF-16 text"),
                      (b"SQLite format 3\x00", "an SQLite database"), (b"\x89PNG", "a PNG image"),
                      (b"\xff\xd8\xff", "a JPEG image"))


def open_binary(path: Path):
    with path.open("rb") as handle:
        magic = handle.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else path.open("rb")


def read_failure(path: Path, exc: BaseException, after_line: int | None = None) -> CorpusError:
    """A damaged or unreadable file, in words (never the raw bytes some library messages quote)."""
    if isinstance(exc, EOFError):
        reason = "the compressed data ends early (the file was cut short)"
    elif isinstance(exc, gzip.BadGzipFile):
        reason = "not a valid gzip file (a damaged header, or extra data after its end)"
    elif isinstance(exc, zlib.error):
        reason = "the compressed data is damaged"
    else:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
    where = f" after line {after_line}" if after_line is not None else ""
    return CorpusError(f"{path}: cannot read the file{where}: {reason}; nothing from it was used "
                       "(copy or download it again)")


def head_bytes(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first `size` bytes of the (decompressed) file."""
    try:
        with open_binary(path) as handle:
            return handle.read(size)
    except READ_ERRORS as exc:
        raise read_failure(path, exc) from exc


def read_head(path: Path) -> str:
    return head_bytes(path).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")


def refuse_binary(path: Path) -> None:
    """A clear error for a file that is not text at all (a PDF, an archive, random bytes)."""
    head = head_bytes(path)
    kind = next((name for magic, name in BINARY_SIGNATURES if head.startswith(magic)), None)
    if kind is None:
        text = head.decode("utf-8", errors="replace")
        odd = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in "\t\n\r\f\v"))
        if "\x00" not in text and odd <= NOT_TEXT_SHARE * max(len(text), 1):
            return
        kind = "binary data"
    raise CorpusError(f"{path}: not a text corpus file: {kind} (not UTF-8 text at byte {_first_non_text(head)}); "
                      "give a JSONL, BibTeX, CSL-JSON or OpenAlex file")


def _first_non_text(data: bytes) -> int:
    """The offset of the first byte that is not part of UTF-8 text (NUL and control bytes count as not text)."""
    try:
        data.decode("utf-8")
        end = len(data)
    except UnicodeDecodeError as exc:
        end = exc.start
    for pos, byte in enumerate(data[:end]):
        if byte < 32 and byte not in b"\t\n\r\f\v":
            return pos
    return end


def read_text(path: Path) -> tuple[str, dict[int, str]]:
    """The whole file as text, and the 1-based lines that held bytes that are not UTF-8."""
    try:
        with open_binary(path) as handle:
            data = handle.read()
    except READ_ERRORS as exc:
        raise read_failure(path, exc) from exc
    try:
        return data.decode("utf-8").lstrip("\ufeff"), {}
    except UnicodeDecodeError:
        pass
    bad_lines = {}
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad_lines[number] = f"non-UTF-8 bytes on line {number} (column {exc.start + 1})"
    return data.decode("utf-8", errors="replace").lstrip("\ufeff"), bad_lines



def with_bad_bytes(raw: RawRecord, bad_lines: dict[int, str]) -> RawRecord:
    """Mark a record unreadable when one of its lines held non-UTF-8 bytes."""
    if not raw.error:
        for line in range(raw.first_line, raw.last_line + 1):
            if line in bad_lines:
                raw.error = bad_lines[line]
                break
    return raw

