"""Metrics files read back: every table of methods by ranking metrics in a JSON the project writes.

`evaluate --json` writes one table at the top ({method: {metric: value}}); the benchmarks nest theirs under
query sets, pools or backends (`bench/results/*.json`: `sets.dev.metrics`, `sets.X.rows`, `pools.demo.runs`, ...).
A table is a mapping whose rows are mappings holding at least one ranking metric (MRR, MAP, nDCG@k, recall@k,
precision@k, F1@k; also spelled R@k, P@k, nDCG@k, MRR@k).
"""
from __future__ import annotations

import re

Table = dict[str, dict[str, float]]  # row (method) -> metric -> value

_METRIC_RE = re.compile(r"^(mrr|map)(@\d+)?$|^(ndcg|recall|precision|f1|r|p)@\d+$", re.IGNORECASE)
_SHORT = {"r": "recall", "p": "precision"}
CONTAINERS = {"sets", "metrics", "rows", "results", "methods", "query_sets", "runs", "backends", "pools"}
MAX_DEPTH = 8
MAX_TABLES = 100
MAX_METHODS = 200  # rows of one table: each is a trace of the page's charts
MAX_METRICS = 500  # numbers of one row
MAX_ENTRIES = 100_000  # keys and list items looked at in the whole file


class TooLarge(ValueError):
    """A metrics file with more of something than is read; the message says what."""


def metric_name(key: str) -> str:
    """A ranking metric's name as `evaluate` writes it (`R@10` -> `recall@10`, `nDCG@10` -> `ndcg@10`); other
    keys unchanged."""
    if not _METRIC_RE.match(key):
        return key
    family, _, k = key.lower().partition("@")
    return f"{_SHORT.get(family, family)}@{k}" if k else family


def _row(value: object) -> dict[str, float] | None:
    """A table row: the numbers of a mapping that holds at least one ranking metric."""
    if not isinstance(value, dict):
        return None
    if len(value) > MAX_METRICS and any(_METRIC_RE.match(str(k)) for k in value):
        raise TooLarge(f"a method has {len(value):,} metrics; up to {MAX_METRICS:,} are read")
    numbers = {metric_name(str(k)): float(v) for k, v in value.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return numbers if any(_METRIC_RE.match(k) for k in numbers) else None


def metric_tables(data: object) -> dict[str, Table]:
    """The tables of a metrics file by name: the path to each, without container keys such as `sets` or
    `metrics` (`"paragraphs"` for `sets.paragraphs.metrics`); "" for a table at the top.

    TooLarge when the file has more than MAX_ENTRIES keys and items (to the depth read), a table more than
    MAX_METHODS methods or a method more than MAX_METRICS metrics."""
    found: dict[tuple[str, ...], Table] = {}
    seen = 0

    def walk(value: object, path: tuple[str, ...]) -> None:
        nonlocal seen
        if len(found) >= MAX_TABLES or len(path) > MAX_DEPTH:
            return
        children = (value.items() if isinstance(value, dict)
                    else ((f"[{i}]", v) for i, v in enumerate(value)) if isinstance(value, list) else ())
        children = list(children)
        seen += len(children)
        if seen > MAX_ENTRIES:
            raise TooLarge(f"it holds more than {MAX_ENTRIES:,} keys and list items; up to {MAX_ENTRIES:,} are read")
        rows = {str(k): row for k, v in children if (row := _row(v)) is not None}
        if len(rows) > MAX_METHODS:
            raise TooLarge(f"a table ({' › '.join(path) or 'at the top'}) has {len(rows):,} methods; up to "
                           f"{MAX_METHODS:,} are read")
        if rows:
            found[path] = rows
        for key, child in children:
            walk(child, path + (str(key),))

    walk(data, ())
    short = {path: " › ".join(p for p in path if p not in CONTAINERS) for path in found}
    unique = len(set(short.values())) == len(short)
    return {(short[path] if unique else " › ".join(path)): table for path, table in found.items()}
