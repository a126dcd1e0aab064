"""Query sets for evaluation and training: query files of ../shared/data, split files, corpus papers as queries."""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recommender.paper import Paper
from recommender.query import Query


@dataclass
class EvalQuery:
    """A query and the ids of the corpus papers it should find."""

    qid: str
    query: Query
    relevant: set[str]


def _read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def queries_from_file(path: Path | str, index_ids: set[str]) -> list[EvalQuery]:
    """Query files of ../shared/data: qid, context, citing_title, citing_abstract, relevant, citing_id."""
    out = []
    for row in _read_jsonl(Path(path)):
        relevant = set(row.get("relevant") or []) & index_ids
        if not relevant:
            continue
        exclude = {row["citing_id"]} if row.get("citing_id") else set()
        query = Query(title=row.get("citing_title") or "", abstract=row.get("citing_abstract") or "",
                      context=row.get("context") or "", exclude=exclude)
        out.append(EvalQuery(str(row["qid"]), query, relevant))
    return out


def queries_from_split(spec: str, index) -> list[EvalQuery]:
    """`splits.json:NAME`: each listed paper of the index queries with its title+abstract; relevant = its
    references."""
    return queries_for_papers(index, split_positions(spec, index))


def split_positions(spec: str, index) -> list[int]:
    """Corpus positions of the papers listed under NAME in a `FILE:NAME` split file."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ValueError(f"--split takes FILE:NAME, got {spec!r}")
    splits = json.loads(Path(path).read_text(encoding="utf-8"))
    if name not in splits:
        raise ValueError(f"{path} has no split {name!r} (it has {sorted(splits)})")
    return [index.position[i] for i in splits[name] if i in index.position]


def citing_positions(index, limit: int | None = None, seed: int = 0) -> list[int]:
    """Corpus positions of the papers that cite other papers of the index (the queries of its own citation links),
    in corpus order; at most `limit` of them, drawn at random (`seed`) when there are more."""
    positions = np.flatnonzero(index.graph.cites.getnnz(axis=1) > 0)
    if limit is not None and len(positions) > limit:
        positions = np.sort(np.random.default_rng(seed).choice(positions, limit, replace=False))
    return positions.tolist()


def queries_for_papers(index, positions: list[int]) -> list[EvalQuery]:
    """Corpus papers as queries (`query_for_paper`); relevant = their in-corpus references. Papers without
    text or without such references are left out."""
    out = []
    for paper in index.papers(positions):
        relevant = {r for r in paper.references if r in index.position and r != paper.id}
        if relevant and paper.text:
            out.append(EvalQuery(paper.id, query_for_paper(paper), relevant))
    return out


def query_for_paper(paper: Paper) -> Query:
    """A corpus paper as a query: its title, abstract and authors; candidates dated no later than it (date,
    else year), never itself."""
    max_date = paper.extra.get("date") or (f"{paper.year}-12-31" if paper.year else None)
    return Query(title=paper.title, abstract=paper.abstract, authors=list(paper.authors), exclude={paper.id},
                 max_date=max_date)
