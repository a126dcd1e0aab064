"""Where benchmarks read and write, relative to this checkout (never the folders of one particular machine).

Defaults: the shared benchmark data beside the checkout (`../shared/data`), indexes a benchmark builds for itself
under `.index/bench/` and derived files under `.cache/bench/` (both ignored by git), results in `bench/results/`.
Indexes a benchmark only reads (trained, pooled, built by another script) have no default: the script asks for
them on its command line. A path that is not there stops the script with a message naming the option to pass
(exit code 2), so that nothing else is read in its place.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "results"
INDEXES = ROOT / ".index" / "bench"
SCRATCH = ROOT / ".cache" / "bench"


def need(parser: argparse.ArgumentParser, path: Path | str | None, option: str, what: str) -> Path:
    """`path` when it exists; else the parser stops (exit code 2) with a message naming `option`."""
    if path is None or str(path) == "":
        parser.error(f"give {option} {what}")
    if not Path(path).exists():
        parser.error(f"{path}: not found; pass {option} {what}")
    return Path(path)


def write_json(path: Path, report: dict, *, say: bool = True, **dumps) -> None:
    """Write `report` as indented JSON (folders made as needed) and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, **{"indent": 1, **dumps}), encoding="utf-8")
    if say:
        print(f"\nresults written to {path}", flush=True)
