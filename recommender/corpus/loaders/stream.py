"""Corpus files read twice from disk instead of held in memory, for indexes larger than the memory's papers.

`CorpusStream(paths)` reads every file once: it validates each record and reports problems as `load_corpus`
does, and learns which ids exist. Iterating it reads the files again and yields each id's first valid paper
(a later file's repeat is skipped, as the command line's `index` has always done), with references to ids in
no file dropped; those are counted (`dangling`) instead of reported paper by paper. Papers to be added to an
index also keep their references to the index's papers (`known`: the index's ids).
"""
from __future__ import annotations

from pathlib import Path
from typing import Container, Iterator

from recommender.corpus.loaders.load import CONVERTERS, reader_for, check_file
from recommender.corpus.loaders.records import CorpusError, LoadResult, Problem, RecordError, shown
from recommender.corpus.loaders.validate import to_paper
from recommender.paper import Paper


class CorpusStream:
    """The papers of corpus files, validated once and read again on every iteration (see the module)."""

    def __init__(self, paths: list[str | Path], strict: bool = False, known: Container[str] = frozenset()):
        self.known = known
        self.files = [(Path(path), check_file(Path(path))) for path in paths]
        self.results: list[LoadResult] = []
        self.ids: set[str] = set()
        self.dangling = 0
        for path, fmt in self.files:
            result, kept = LoadResult(path=str(path), format=fmt), 0
            for paper in _valid_papers(path, fmt, result, strict):
                self.ids.add(paper.id)
                kept += 1
            if not result.read:
                result.problems.append(Problem(str(path), "file", "no records found", "warning"))
            self.results.append(_Counted(result, kept))

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[Paper]:
        given: set[str] = set()
        self.dangling = 0
        for path, fmt in self.files:
            for paper in _valid_papers(path, fmt, LoadResult(path=str(path), format=fmt), strict=False):
                if paper.id in given:
                    continue
                given.add(paper.id)
                kept = [ref for ref in paper.references if ref in self.ids or ref in self.known]
                self.dangling += len(paper.references) - len(kept)
                paper.references = kept
                yield paper


class _Counted(LoadResult):
    """A file's problems and counts, without its papers."""

    def __init__(self, result: LoadResult, kept: int):
        super().__init__(path=result.path, format=result.format, problems=result.problems, read=result.read)
        self._kept = kept

    @property
    def kept(self) -> int:
        return self._kept


def _valid_papers(path: Path, fmt: str, result: LoadResult, strict: bool) -> Iterator[Paper]:
    """Each valid record of the file as a paper, in file order; bad records and repeated ids go into `result`
    (the first one raises `CorpusError` when `strict`)."""
    seen: set[str] = set()
    convert = CONVERTERS[fmt]
    for raw in reader_for(path, fmt)(path):
        result.read += 1
        try:
            if raw.error:
                raise RecordError(raw.error)
            paper = to_paper(convert(raw.data))
            if paper.id in seen:
                raise RecordError(f"duplicate id {shown(paper.id)}")
        except RecordError as exc:
            if strict:
                raise CorpusError(f"{path}: {raw.location}: {exc}") from exc
            result.problems.append(Problem(str(path), raw.location, str(exc)))
            continue
        seen.add(paper.id)
        yield paper
