"""Load a corpus file (JSONL, BibTeX, CSL-JSON or OpenAlex works) into validated `Paper` records.

Every format may be gzipped. Bad records are skipped and reported as `Problem`s naming the
file and the line or entry; with `strict=True` the first error raises `CorpusError` instead.
The loader only reads: it never writes anything.
"""
from __future__ import annotations

import gc
import gzip
import json
import re
import unicodedata
import zlib
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .paper import CORE_FIELDS, Paper
from .references import normalize_doi

FORMATS = ("jsonl", "bibtex", "csl-json", "openalex")
_FORMAT_ALIASES = {"bib": "bibtex", "csl": "csl-json", "csljson": "csl-json", "ndjson": "jsonl"}
_OPENALEX_PREFIX = "https://openalex.org/"
_INT_RE = re.compile(r"^\s*[+-]?\d+\s*$")
_YEAR_IN_TEXT_RE = re.compile(r"\b\d{4}\b")
_MAX_LISTED_REFS = 5
_JSONL_EXTENSIONS = (".jsonl", ".ndjson")
_BIB_ENTRY_RE = re.compile(r"^\s*@[A-Za-z]+\s*[{(]", re.MULTILINE)
_READ_ERRORS = (OSError, EOFError, zlib.error)  # what reading a damaged (gzip) file raises
_HEAD_BYTES = 65536
_MAX_SHOWN = 60  # characters of a bad value quoted in a message
_NOT_TEXT_SHARE = 0.05  # a head with more undecodable or control bytes than this is not a text file
_BINARY_SIGNATURES = ((b"%PDF", "a PDF document"), (b"PK\x03\x04", "a ZIP archive (.zip, .docx, .xlsx, ...)"),
                      (b"\xff\xfe", "UTF-16 text"), (b"\xfe\xff", "UTF-16 text"),
                      (b"SQLite format 3\x00", "an SQLite database"), (b"\x89PNG", "a PNG image"),
                      (b"\xff\xd8\xff", "a JPEG image"))


class CorpusError(ValueError):
    """A corpus file that cannot be used (or, in strict mode, holds a bad record)."""


@dataclass(frozen=True)
class Problem:
    """Something wrong with one place of a corpus file."""

    file: str
    location: str  # e.g. "line 12", "entry smith2020 (line 3)", "item 4 (line 20)"
    message: str
    severity: str = "error"  # "error": the record was skipped; "warning": it was kept

    def __str__(self) -> str:
        return f"{self.file}: {self.location}: {self.severity}: {self.message}"


@dataclass
class LoadResult:
    """The papers that passed validation, what was wrong with the others, and counts."""

    path: str
    format: str
    papers: list[Paper] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    read: int = 0  # records seen, good or bad

    @property
    def kept(self) -> int:
        return len(self.papers)

    @property
    def skipped(self) -> int:
        return self.read - self.kept

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def summary(self) -> str:
        return (f"{self.path} ({self.format}): read {self.read}, kept {self.kept}, skipped {self.skipped}, "
                f"{len(self.errors)} errors, {len(self.warnings)} warnings")


class _RecordError(Exception):
    """A bad record; the message says what is wrong with it."""


@dataclass
class _Raw:
    """One record as read from the file, before validation."""

    location: str
    first_line: int
    last_line: int
    data: Any = None
    error: str = ""  # set when the record could not even be read


# --------------------------------------------------------------------------- entry point


def load_corpus(path: str | Path, strict: bool = False, fmt: str | None = None) -> LoadResult:
    """Read and validate a corpus file; see the module docstring."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: corpus file not found")
    if not path.is_file():
        raise CorpusError(f"{path}: not a file")
    _refuse_binary(path)
    fmt = _resolve_format(path, fmt)
    result = LoadResult(path=str(path), format=fmt)
    validator = _Validator(result, strict)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # many small long-lived objects: collection passes only cost time here
    try:
        for raw in _reader_for(path, fmt)(path):
            validator.add(raw, _CONVERTERS[fmt])
    finally:
        if gc_was_enabled:
            gc.enable()
    validator.finish()
    return result


def detect_format(path: str | Path) -> str:
    """The format of a corpus file, from its extension and, where that is ambiguous, its content."""
    path = Path(path)
    ext = _base_extension(path)
    if ext in (".bib", ".bibtex"):
        return "bibtex"
    head = _read_head(path)
    if head[:1] in ("[", "{"):
        sample = _first_json_object(head[1:] if head[0] == "[" else head)
        if isinstance(sample, dict) and isinstance(sample.get("results"), list):
            sample = sample["results"][0] if sample["results"] else None
        if _looks_openalex(sample) or (sample is None and _OPENALEX_PREFIX in head):
            return "openalex"
        if ext in _JSONL_EXTENSIONS or _looks_native(sample) or (head[0] == "{" and ext != ".json"):
            return "jsonl"
        return "csl-json"
    if _BIB_ENTRY_RE.search(head):
        return "bibtex"
    if ext in _JSONL_EXTENSIONS:
        return "jsonl"
    if ext == ".json":
        return "csl-json"
    raise CorpusError(f"{path}: cannot tell the corpus format; pass fmt= one of {', '.join(FORMATS)}")


def _base_extension(path: Path) -> str:
    """The extension that names the format, under any `.gz`."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def _reader_for(path: Path, fmt: str) -> Callable[[Path], Iterator[_Raw]]:
    """Line-by-line for `.jsonl` files (a bad line never hides the rest), else by format."""
    if fmt == "bibtex":
        return _read_bibtex
    return _read_jsonl if _base_extension(path) in _JSONL_EXTENSIONS else _read_json_any


def _resolve_format(path: Path, fmt: str | None) -> str:
    if fmt is None:
        return detect_format(path)
    name = _FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if name not in FORMATS:
        raise CorpusError(f"unknown corpus format {fmt!r}; use one of {', '.join(FORMATS)}")
    return name


# --------------------------------------------------------------------------- validation


class _Validator:
    """Turns raw records into papers in file order, tracking ids and problems."""

    def __init__(self, result: LoadResult, strict: bool):
        self.result = result
        self.strict = strict
        self.first_seen: dict[str, str] = {}
        self.locations: list[str] = []

    def report(self, location: str, message: str, severity: str = "error") -> None:
        problem = Problem(self.result.path, location, message, severity)
        if self.strict and severity == "error":
            raise CorpusError(f"{problem.file}: {problem.location}: {problem.message}")
        self.result.problems.append(problem)

    def add(self, raw: _Raw, convert: Callable[[Any], dict[str, Any]]) -> None:
        self.result.read += 1
        try:
            if raw.error:
                raise _RecordError(raw.error)
            paper = _to_paper(convert(raw.data))
            if paper.id in self.first_seen:
                raise _RecordError(f"duplicate id {_shown(paper.id)} (first seen at {self.first_seen[paper.id]})")
        except _RecordError as exc:
            self.report(raw.location, str(exc))
            return
        self.first_seen[paper.id] = raw.location
        self.result.papers.append(paper)
        self.locations.append(raw.location)

    def finish(self) -> None:
        """Drop references to ids that are not in the corpus, with a warning per paper."""
        known = set(self.first_seen)
        for paper, location in zip(self.result.papers, self.locations):
            dangling = [ref for ref in paper.references if ref not in known]
            if not dangling:
                continue
            paper.references = [ref for ref in paper.references if ref in known]
            shown = ", ".join(dangling[:_MAX_LISTED_REFS]) + (", ..." if len(dangling) > _MAX_LISTED_REFS else "")
            self.report(location, f"dropped {len(dangling)} reference(s) to ids not in the corpus: {shown}",
                        severity="warning")
        if self.result.read == 0:
            self.report("file", "no records found", severity="warning")


def _to_paper(record: Any) -> Paper:
    """Check the types of a normalized record and build the paper."""
    if not isinstance(record, dict):
        raise _RecordError(f"expected a JSON object, got {_type_name(record)}")
    paper_id = record.get("id")
    if paper_id is None or (isinstance(paper_id, str) and not paper_id.strip()):
        raise _RecordError("missing id")
    if isinstance(paper_id, bool) or not isinstance(paper_id, (str, int)):
        raise _RecordError(f"id must be a string, got {_type_name(paper_id)}")
    title, abstract = _text_field(record, "title"), _text_field(record, "abstract")
    if not title.strip() and not abstract.strip():
        raise _RecordError("has neither title nor abstract")
    if not isinstance(record.get("keywords"), str):  # indexed with title and abstract: text or a list of texts
        _string_list(record.get("keywords"), "keywords")
    return Paper(
        id=str(paper_id).strip(),
        title=title,
        abstract=abstract,
        authors=_string_list(record.get("authors"), "authors"),
        venue=_text_field(record, "venue"),
        year=_year(record.get("year")),
        references=_string_list(record.get("references"), "references", allow_int=True),
        extra={k: v for k, v in record.items() if k not in CORE_FIELDS},
    )


def _text_field(record: dict, name: str) -> str:
    value = record.get(name)
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise _RecordError(f"{name} must be a string, got {_type_name(value)}")


def _string_list(value: Any, name: str, allow_int: bool = False) -> list[str]:
    if type(value) is list and all(type(item) is str for item in value):
        return value
    if value is None:
        return []
    if not isinstance(value, list):
        raise _RecordError(f"{name} must be a list of strings, got {_type_name(value)}")
    allowed = (str, int) if allow_int else (str,)
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, allowed):
            raise _RecordError(f"{name}[{i}] must be a string, got {_type_name(item)}")
    return [str(item) for item in value]


def _year(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_RE.match(value):
        return int(value)
    raise _RecordError(f"year must be a whole number, got {_shown(value)}")


def _shown(value: Any) -> str:
    """A value quoted for a message: printable characters only, cut to a readable length."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(value))
    return f"“{text[:_MAX_SHOWN]}{'…' if len(text) > _MAX_SHOWN else ''}”"


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__)


# --------------------------------------------------------------------------- reading bytes


def _open_binary(path: Path):
    with path.open("rb") as handle:
        magic = handle.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else path.open("rb")


def _read_failure(path: Path, exc: BaseException, after_line: int | None = None) -> CorpusError:
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


def _head_bytes(path: Path, size: int = _HEAD_BYTES) -> bytes:
    """The first `size` bytes of the (decompressed) file."""
    try:
        with _open_binary(path) as handle:
            return handle.read(size)
    except _READ_ERRORS as exc:
        raise _read_failure(path, exc) from exc


def _read_head(path: Path) -> str:
    return _head_bytes(path).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")


def _refuse_binary(path: Path) -> None:
    """A clear error for a file that is not text at all (a PDF, an archive, random bytes)."""
    head = _head_bytes(path)
    kind = next((name for magic, name in _BINARY_SIGNATURES if head.startswith(magic)), None)
    if kind is None:
        text = head.decode("utf-8", errors="replace")
        odd = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in "\t\n\r\f\v"))
        if "\x00" not in text and odd <= _NOT_TEXT_SHARE * max(len(text), 1):
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


def _read_text(path: Path) -> tuple[str, dict[int, str]]:
    """The whole file as text, and the 1-based lines that held bytes that are not UTF-8."""
    try:
        with _open_binary(path) as handle:
            data = handle.read()
    except _READ_ERRORS as exc:
        raise _read_failure(path, exc) from exc
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


def _first_json_object(text: str) -> Any:
    try:
        return json.JSONDecoder().raw_decode(text.lstrip())[0]
    except ValueError:
        return None


def _looks_openalex(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    return str(obj.get("id", "")).startswith(_OPENALEX_PREFIX) or "abstract_inverted_index" in obj \
        or "authorships" in obj


def _looks_native(obj: Any) -> bool:
    """A record in this project's own schema rather than CSL-JSON."""
    return isinstance(obj, dict) and bool({"authors", "venue", "year", "references"} & obj.keys()) \
        and not {"author", "issued", "container-title"} & obj.keys()


def _with_bad_bytes(raw: _Raw, bad_lines: dict[int, str]) -> _Raw:
    """Mark a record unreadable when one of its lines held non-UTF-8 bytes."""
    if not raw.error:
        for line in range(raw.first_line, raw.last_line + 1):
            if line in bad_lines:
                raw.error = bad_lines[line]
                break
    return raw


# --------------------------------------------------------------------------- JSON readers


def _read_jsonl(path: Path) -> Iterator[_Raw]:
    """One JSON object per line, streamed; a damaged file (e.g. a truncated gzip) is refused as a whole."""
    number = 0
    try:
        handle = _open_binary(path)
    except _READ_ERRORS as exc:
        raise _read_failure(path, exc) from exc
    with handle:
        lines = iter(handle)
        while True:
            try:
                line = next(lines)
            except StopIteration:
                return
            except _READ_ERRORS as exc:
                raise _read_failure(path, exc, after_line=number) from exc
            number += 1
            if line.strip():
                yield _jsonl_record(line, number)


def _jsonl_record(line: bytes, number: int) -> _Raw:
    location = f"line {number}"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Raw(location, number, number, error=f"non-UTF-8 bytes (column {exc.start + 1})")
    try:
        return _Raw(location, number, number, data=json.loads(text.lstrip("\ufeff") if number == 1 else text))
    except json.JSONDecodeError as exc:
        return _Raw(location, number, number, error=f"not valid JSON: {exc.msg} (column {exc.colno})")


def _read_json_any(path: Path) -> Iterator[_Raw]:
    """JSON records as an array, an API page with a `results` array, a single object, or JSONL."""
    first_line = _first_line(path)
    try:
        first = json.loads(first_line) if first_line.strip() else None
    except ValueError:
        first = None
    stripped = first_line.strip()
    if stripped.startswith("[") or stripped == "{" or (isinstance(first, dict) and "results" in first):
        yield from _read_json_document(path)
    else:
        yield from _read_jsonl(path)


def _first_line(path: Path, limit: int = 1 << 24) -> str:
    try:
        with _open_binary(path) as handle:
            return handle.readline(limit).decode("utf-8", errors="replace").lstrip("\ufeff")
    except _READ_ERRORS as exc:
        raise _read_failure(path, exc) from exc


def _read_json_document(path: Path) -> Iterator[_Raw]:
    """The items of one JSON document, each located by its first line.

    A syntax error ends the reading: the rest cannot be resynchronised, so the file is refused as a whole
    rather than indexed in part.
    """
    text, bad_lines = _read_text(path)
    starts = _line_starts(text)
    decoder = json.JSONDecoder()

    def raw_at(pos: int, end: int, label: str, data: Any) -> _Raw:
        first, last = bisect_right(starts, pos), bisect_right(starts, max(end - 1, pos))
        return _with_bad_bytes(_Raw(f"{label} (line {first})", first, last, data=data), bad_lines)

    pos = _skip_ws(text, 0)
    if pos >= len(text):
        return
    top_is_object = text[pos] == "{"
    try:
        if top_is_object:
            whole, end = decoder.raw_decode(text, pos)
            if not isinstance(whole.get("results"), list):
                yield raw_at(pos, end, "item 1", whole)
                _expect_end(text, end)
                return
            pos = _results_array_start(text, pos)
        if text[pos] != "[":
            raise json.JSONDecodeError("expected a JSON array of records", text, pos)
        pos = _skip_ws(text, pos + 1)
        number = 0
        while text[pos] != "]":
            number += 1
            item, end = decoder.raw_decode(text, pos)
            yield raw_at(pos, end, f"item {number}", item)
            pos = _skip_ws(text, end)
            if text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
            elif text[pos] != "]":
                raise json.JSONDecodeError("expected ',' or ']' after an item", text, pos)
        if not top_is_object:
            _expect_end(text, pos + 1)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno}); the rest "
                          f"of the file cannot be read, so nothing from it was used") from None
    except IndexError:
        raise CorpusError(f"{path}: line {len(starts)}: not valid JSON: the file ends too early (cut short?); "
                          f"nothing from it was used") from None


def _expect_end(text: str, pos: int) -> None:
    if _skip_ws(text, pos) < len(text):
        raise json.JSONDecodeError("extra data after the JSON document", text, _skip_ws(text, pos))


def _results_array_start(text: str, pos: int) -> int:
    """Position of the `results` array in the top-level object that starts at `pos`."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, pos + 1)
    while text[pos] == '"':
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past the colon
        if key == "results":
            return pos
        pos = _skip_ws(text, decoder.raw_decode(text, pos)[1])
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    raise json.JSONDecodeError("no results array", text, pos)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    pos = find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = find("\n", pos + 1)
    return starts


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


# --------------------------------------------------------------------------- BibTeX


def _read_bibtex(path: Path) -> Iterator[_Raw]:
    """BibTeX entries, in file order, with syntax errors and duplicate keys as unreadable records."""
    import bibtexparser
    from bibtexparser import middlewares as mw
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ParsingFailedBlock

    text, bad_lines = _read_text(path)
    library = bibtexparser.parse_string(text, append_middleware=[mw.NormalizeFieldKeys()])
    blocks = sorted(library.blocks, key=lambda b: b.start_line)
    first_line_of: dict[str, int] = {}
    for index, block in enumerate(blocks):
        first = block.start_line + 1
        last = blocks[index + 1].start_line if index + 1 < len(blocks) else text.count("\n") + 1
        if isinstance(block, DuplicateBlockKeyBlock):
            yield _Raw(f"entry {block.key} (line {first})", first, last,
                       error=f"duplicate id {_shown(block.key)} (first seen at line {first_line_of.get(block.key, '?')})")
        elif isinstance(block, ParsingFailedBlock):
            yield _Raw(f"line {first}", first, last, error=f"BibTeX syntax error: {_bib_error(block)}")
        elif isinstance(block, Entry):
            first_line_of.setdefault(block.key, first)
            yield _with_bad_bytes(_Raw(f"entry {block.key} (line {first})", first, last, data=block), bad_lines)


def _bib_error(block) -> str:
    error = block.error
    message = str(getattr(error, "abort_reason", "") or error or "").strip()
    return message.splitlines()[0] if message else "the entry could not be parsed"


_BIB_TEXT_FIELDS = {"title", "abstract", "journal", "booktitle", "keywords", "series", "publisher", "note"}
_BIB_RAW_FIELDS = {"doi", "url", "eprint", "file", "isbn", "issn", "pages", "volume", "number", "month"}


def _from_bibtex(entry) -> dict[str, Any]:
    fields = {f.key: f.value for f in entry.fields}
    record: dict[str, Any] = {
        "id": entry.key,
        "title": _latex_text(fields.pop("title", "")),
        "abstract": _latex_text(fields.pop("abstract", "")),
        "authors": _bib_names(fields.pop("author", "")),
        "venue": _latex_text(fields.pop("journal", "") or fields.pop("booktitle", "")),
        "year": _strip_braces(str(fields.pop("year", ""))),
        "entry_type": entry.entry_type.lower(),
    }
    fields.pop("booktitle", None)
    if "doi" in fields:
        record["doi"] = normalize_doi(_strip_braces(str(fields.pop("doi"))))
    if "keywords" in fields:
        record["keywords"] = [k.strip() for k in re.split(r"[,;]", _latex_text(fields.pop("keywords"))) if k.strip()]
    for name, value in fields.items():
        if isinstance(value, str) and name != "editor":
            record[name] = _strip_braces(value) if name in _BIB_RAW_FIELDS else _latex_text(value)
    return record


# An accent command and the letter it marks: \'e, \'{e}, \"{\i}, \v{S}, \v S (a letter-named accent needs a
# brace or a space before its letter: \textbf is not \t + "extbf").
_ACCENTED_RE = re.compile(r"""\\[`'^"~=.]\s*(?:\{\s*\\?[A-Za-z]\s*\}|\\[ij](?![A-Za-z])|[A-Za-z])"""
                          r"|\\[uvHckrbdt](?:\s*\{\s*\\?[A-Za-z]\s*\}|\s+(?:\\[ij](?![A-Za-z])|[A-Za-z]))")
# A letter command (\L, \o, \ss, ...) with the empty group or space that ends it (a space before "and"
# separates names, so it stays).
_LETTER_RE = re.compile(r"\\(?:AE|ae|OE|oe|AA|aa|ss|[LlOoij])(?![A-Za-z])(?:\{\}|[ \t]+(?=[a-z])(?!and\b))?")


def _bib_names(value: Any) -> list[str]:
    r"""A BibTeX author field as names "First von Last Jr", LaTeX decoded (\v{S}koda: Škoda).

    Accented letters are decoded before the field is split into names and parts, so that a command such as
    `\v S` or `\L{}` is never taken for a word or dropped by the splitter.
    """
    from bibtexparser.middlewares.names import (InvalidNameError, parse_single_name_into_parts,
                                                split_multiple_persons_names)

    decoded = _LETTER_RE.sub(_decode_match, _ACCENTED_RE.sub(_decode_match, str(value or "")))
    names = []
    for number, name in enumerate(split_multiple_persons_names(decoded), start=1):
        try:
            parts = parse_single_name_into_parts(name)
        except InvalidNameError as exc:
            reason = str(exc).rsplit(":", 1)[-1].strip()
            raise _RecordError(f"author {number}: cannot split the name {_shown(name)} into parts ({reason})") from None
        text = _latex_text(" ".join([*parts.first, *parts.von, *parts.last, *parts.jr]))
        if text:
            names.append(text)
    return names


def _decode_match(match: re.Match) -> str:
    return unicodedata.normalize("NFC", _latex_text(match.group(0)))


_latex_decoder = None


def _latex_text(value: Any) -> str:
    """Decode LaTeX (accents, letters, text commands) and drop braces; a bare % or & is text, not LaTeX syntax."""
    text = str(value or "")
    if not text:
        return ""
    if "\\" not in text and "{" not in text and "~" not in text and "--" not in text and "`" not in text:
        return " ".join(text.split())
    escaped = re.sub(r"(?<!\\)([%&#])", r"\\\1", text)
    return " ".join(_decoder().latex_to_text(escaped).split())


def _decoder():
    """pylatexenc's LaTeX-to-text converter, taught the commands titles use that it would drop."""
    global _latex_decoder
    if _latex_decoder is None:
        from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

        context = get_default_latex_context_db()
        context.add_context_category("bibliography", prepend=True, macros=[
            MacroTextSpec("mbox", "%s"), MacroTextSpec("url", "%s"), MacroTextSpec("LaTeX", "LaTeX"),
            MacroTextSpec("TeX", "TeX"), MacroTextSpec("BibTeX", "BibTeX")])
        _latex_decoder = LatexNodes2Text(math_mode="verbatim", latex_context=context)
    return _latex_decoder


def _strip_braces(value: str) -> str:
    return " ".join(value.replace("{", "").replace("}", "").split())


# --------------------------------------------------------------------------- CSL-JSON and OpenAlex


def _from_jsonl(obj: Any) -> Any:
    return obj


def _from_csl(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _RecordError(f"expected a CSL item object, got {_type_name(item)}")
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
    raise _RecordError(f"{name} must be a string, got {_type_name(value)}")


_CSL_NAME_PARTS = ("given", "non-dropping-particle", "dropping-particle", "family", "suffix", "literal")


def _csl_names(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _RecordError(f"author must be a list of CSL name objects, got {_type_name(value)}")
    names = []
    for i, person in enumerate(value):
        if not isinstance(person, dict):
            raise _RecordError(f"author[{i}] must be a CSL name object ({{family, given}}), got {_type_name(person)}")
        for key in _CSL_NAME_PARTS:
            if person.get(key) is not None and not isinstance(person[key], str):
                raise _RecordError(f"author[{i}].{key} must be a string, got {_type_name(person[key])}")
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
        raise _RecordError(f"issued must be a CSL date object, got {_type_name(value)}")
    parts = value.get("date-parts")
    if parts is not None:
        if not (isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]):
            raise _RecordError("issued.date-parts must be a list like [[2020, 5, 1]]")
        first = parts[0]
        year = _year(first[0])
        if len(first) > 1 and all(_INT_RE.match(str(p)) for p in first[1:3]):
            return year, "-".join([f"{year:04d}", *(f"{int(p):02d}" for p in first[1:3])])
        return year, ""
    text = str(value.get("raw") or value.get("literal") or "")
    match = _YEAR_IN_TEXT_RE.search(text)
    return (int(match.group(0)) if match else None), ""


def _from_openalex(work: Any) -> dict[str, Any]:
    if not isinstance(work, dict):
        raise _RecordError(f"expected an OpenAlex work object, got {_type_name(work)}")
    raw_id = work.get("id")
    record: dict[str, Any] = {
        "id": _openalex_short(raw_id) if isinstance(raw_id, str) else raw_id,
        "title": work.get("display_name") or work.get("title"),
        "abstract": _rebuild_abstract(work.get("abstract_inverted_index")),
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
    keywords = work.get("keywords")
    if keywords is not None and not isinstance(keywords, list):
        raise _RecordError(f"keywords must be a list, got {_type_name(keywords)}")
    names = [k.get("display_name") for k in keywords or [] if isinstance(k, dict)]
    if any(isinstance(name, str) and name.strip() for name in names):
        record["keywords"] = [name.strip() for name in names if isinstance(name, str) and name.strip()]
    return record


def _openalex_short(value: str) -> str:
    return value[len(_OPENALEX_PREFIX):] if value.startswith(_OPENALEX_PREFIX) else value


def _rebuild_abstract(index: Any) -> str:
    """The abstract text from OpenAlex's {word: [positions]} inverted index."""
    if index is None:
        return ""
    if not isinstance(index, dict):
        raise _RecordError(f"abstract_inverted_index must be an object, got {_type_name(index)}")
    placed: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(isinstance(p, int) and p >= 0 for p in positions):
            raise _RecordError(f"abstract_inverted_index[{_shown(word)}] must be a list of word positions")
        for position in positions:
            placed[position] = word
    return " ".join(placed[p] for p in sorted(placed))


def _openalex_authors(authorships: Any) -> list[str]:
    if authorships is None:
        return []
    if not isinstance(authorships, list):
        raise _RecordError(f"authorships must be a list, got {_type_name(authorships)}")
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


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "jsonl": _from_jsonl,
    "bibtex": _from_bibtex,
    "csl-json": _from_csl,
    "openalex": _from_openalex,
}
