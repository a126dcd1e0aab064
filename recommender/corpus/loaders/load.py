"""The entry point: detect a corpus file's format, read its records, validate them into papers."""
from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any, Callable, Iterator

from recommender.corpus.bibtex import holds_entry
from recommender.corpus.loaders.bibtex import from_bibtex, read_bibtex
from recommender.corpus.loaders.csl import from_csl
from recommender.corpus.loaders.files import read_head, refuse_binary
from recommender.corpus.loaders.json_readers import read_json_any, read_jsonl
from recommender.corpus.loaders.openalex import OPENALEX_PREFIX, from_openalex, looks_openalex
from recommender.corpus.loaders.records import CorpusError, LoadResult, RawRecord
from recommender.corpus.loaders.validate import Validator

FORMATS = ("jsonl", "bibtex", "csl-json", "openalex")
FORMAT_ALIASES = {"bib": "bibtex", "csl": "csl-json", "csljson": "csl-json", "ndjson": "jsonl"}
JSONL_EXTENSIONS = (".jsonl", ".ndjson")


def load_corpus(path: str | Path, strict: bool = False, fmt: str | None = None) -> LoadResult:
    """Read and validate a corpus file; see the module docstring."""
    path = Path(path)
    fmt = check_file(path, fmt)
    result = LoadResult(path=str(path), format=fmt)
    validator = Validator(result, strict)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # many small long-lived objects: collection passes only cost time here
    try:
        for raw in reader_for(path, fmt)(path):
            validator.add(raw, CONVERTERS[fmt])
    finally:
        if gc_was_enabled:
            gc.enable()
    validator.finish()
    return result


def check_file(path: Path, fmt: str | None = None) -> str:
    """The format of a corpus file that exists and is not binary (`CorpusError` otherwise)."""
    if not path.exists():
        raise CorpusError(f"{path}: corpus file not found")
    if not path.is_file():
        raise CorpusError(f"{path}: not a file")
    refuse_binary(path)
    return _resolve_format(path, fmt)


def detect_format(path: str | Path) -> str:
    """The format of a corpus file, from its extension and, where that is ambiguous, its content."""
    path = Path(path)
    ext = _base_extension(path)
    if ext in (".bib", ".bibtex"):
        return "bibtex"
    head = read_head(path)
    if head[:1] in ("[", "{"):
        sample = _first_json_object(head[1:] if head[0] == "[" else head)
        if isinstance(sample, dict) and isinstance(sample.get("results"), list):
            sample = sample["results"][0] if sample["results"] else None
        if looks_openalex(sample) or (sample is None and OPENALEX_PREFIX in head):
            return "openalex"
        if ext in JSONL_EXTENSIONS or _looks_native(sample) or (head[0] == "{" and ext != ".json"):
            return "jsonl"
        return "csl-json"
    if holds_entry(head):
        return "bibtex"
    if ext in JSONL_EXTENSIONS:
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


def reader_for(path: Path, fmt: str) -> Callable[[Path], Iterator[RawRecord]]:
    """Line-by-line for `.jsonl` files (a bad line never hides the rest), else by format."""
    if fmt == "bibtex":
        return read_bibtex
    return read_jsonl if _base_extension(path) in JSONL_EXTENSIONS else read_json_any


def _resolve_format(path: Path, fmt: str | None) -> str:
    if fmt is None:
        return detect_format(path)
    name = FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if name not in FORMATS:
        raise CorpusError(f"unknown corpus format {fmt!r}; use one of {', '.join(FORMATS)}")
    return name



def _first_json_object(text: str) -> Any:
    try:
        return json.JSONDecoder().raw_decode(text.lstrip())[0]
    except ValueError:
        return None



def _looks_native(obj: Any) -> bool:
    """A record in this project's own schema rather than CSL-JSON."""
    return isinstance(obj, dict) and bool({"authors", "venue", "year", "references"} & obj.keys()) \
        and not {"author", "issued", "container-title"} & obj.keys()



CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "jsonl": lambda record: record,
    "bibtex": from_bibtex,
    "csl-json": from_csl,
    "openalex": from_openalex,
}
