"""Load a corpus file (JSONL, BibTeX, CSL-JSON or OpenAlex works) into validated `Paper` records.

Every format may be gzipped. Bad records are skipped and reported as `Problem`s naming the
file and the line or entry; with `strict=True` the first error raises `CorpusError` instead.
The loader only reads: it never writes anything.
"""
from recommender.corpus.loaders.load import FORMATS, detect_format, load_corpus
from recommender.corpus.loaders.records import CorpusError, LoadResult, Problem

__all__ = ["FORMATS", "CorpusError", "LoadResult", "Problem", "detect_format", "load_corpus"]
