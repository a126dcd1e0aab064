"""The state file of a download in progress (`OUT.partial`): the records so far and where to continue.

One JSON object per line: first the download's settings, then for each completed request its records
(`{"record": ..., "hop": ...}`) followed by a checkpoint (`{"state": ...}`) saying where the next request
starts. Each checkpoint is flushed to disk before the next request, so after an interruption (network down,
Ctrl-C, a killed process) rerunning the same command drops whatever follows the last checkpoint and
continues from it: nothing is fetched twice and no record is written twice.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from tqdm import tqdm

from recommender.corpus.sources.errors import SourceError


Stage = Callable[["PartialDownload", dict[str, Any]], dict[str, Any]]


def run_stages(partial: "PartialDownload", state: dict[str, Any], stages: dict[str, Stage], label: str,
               progress: bool, finish: Callable[["PartialDownload"], Any]) -> Any:
    """Call the stage `state["stage"]` names, each returning the next state, until the stage is "done" (a
    progress bar, `label` saying what is counted, shows the records saved); then `finish(partial)`'s result.
    The state file is closed afterwards, also on failure."""
    try:
        with tqdm(desc=label, unit=f" {label.split()[-1]}", initial=len(partial.seen),
                  disable=not progress or None, dynamic_ncols=True) as bar:
            while state["stage"] != "done":
                before = len(partial.seen)
                state = stages[state["stage"]](partial, state)
                bar.update(len(partial.seen) - before)
        return finish(partial)
    finally:
        partial.close()


def partial_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


class PartialDownload:
    """Resumable storage of one download's records, keyed by the download's settings."""

    def __init__(self, out: Path, settings: dict[str, Any]):
        self.path = partial_path(out)
        self.settings = json.loads(json.dumps(settings))  # as it reads back from the file
        self.seen: set[str] = set()
        self.hops: Counter = Counter()
        self._handle = None

    def open(self) -> dict[str, Any] | None:
        """Start or continue the download; the last checkpoint's state, or None when starting afresh."""
        if self.path.exists():
            state = self._recover()
        else:
            state = None
            with self.path.open("w", encoding="utf-8") as handle:
                handle.write(json.dumps({"settings": self.settings}) + "\n")
        self._handle = self.path.open("a", encoding="utf-8")
        return state

    def save(self, records: Iterable[dict[str, Any]], hop: str, state: dict[str, Any]) -> int:
        """Append the records not saved before and a checkpoint; returns how many were new."""
        lines, new = [], 0
        for record in records:
            if record["id"] in self.seen:
                continue
            self.seen.add(record["id"])
            self.hops[hop] += 1
            new += 1
            lines.append(json.dumps({"record": record, "hop": hop}, ensure_ascii=False))
        lines.append(json.dumps({"state": state}))
        self._handle.write("\n".join(lines) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        return new

    def records(self, hop: str | None = None) -> Iterator[dict[str, Any]]:
        """The saved records (of one hop, or all) in the order they were saved."""
        if self._handle is not None:
            self._handle.flush()
        with self.path.open("r", encoding="utf-8") as handle:
            next(handle)
            for line in handle:
                entry = json.loads(line)
                if "record" in entry and (hop is None or entry["hop"] == hop):
                    yield entry["record"]

    def expansion_room(self, records: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
        """The records not saved yet, cut to what `limit` (papers added by expansion, None: no limit) leaves."""
        fresh = [r for r in records if r["id"] not in self.seen]
        if limit is None:
            return fresh
        return fresh[: max(0, limit - self.hops["ref"] - self.hops["cite"])]

    def expansion_full(self, limit: int | None, notes: list[str]) -> bool:
        """Whether expansion has added `limit` papers (never, without a limit); if so, `notes` says it once."""
        full = limit is not None and self.hops["ref"] + self.hops["cite"] >= limit
        note = f"the expansion stopped at --expand-limit {limit} papers"
        if full and note not in notes:
            notes.append(note)
        return full

    def parts(self) -> dict[str, int]:
        """How many records each hop added, named for the summary."""
        return {"seeds": self.hops["seed"], "referenced": self.hops["ref"], "citing": self.hops["cite"]}

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def _recover(self) -> dict[str, Any] | None:
        """Read an earlier run's file; cut off what follows its last checkpoint."""
        state, keep_bytes, pending = None, 0, []
        with self.path.open("rb") as handle:
            header = handle.readline()
            try:
                settings = json.loads(header)["settings"]
            except (ValueError, KeyError, TypeError):
                raise SourceError(f"{self.path} is not the state file of a download: delete it and run again") from None
            if settings != self.settings:
                raise SourceError(f"{self.path} belongs to a download with other settings "
                                  f"({_differences(settings, self.settings)}): run that command again to finish it, "
                                  "or delete the file to start this one")
            keep_bytes = handle.tell()
            for line in handle:
                if not line.endswith(b"\n"):
                    break  # cut short while it was written
                try:
                    entry = json.loads(line)
                except ValueError:
                    break
                if "state" in entry:
                    for record_id, hop in pending:
                        self.seen.add(record_id)
                        self.hops[hop] += 1
                    pending, state, keep_bytes = [], entry["state"], handle.tell()
                else:
                    pending.append((entry["record"]["id"], entry["hop"]))
        if keep_bytes < self.path.stat().st_size:
            with self.path.open("r+b") as handle:
                handle.truncate(keep_bytes)
        return state


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    names = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return ", ".join(f"{k}: {old.get(k)!r} then, {new.get(k)!r} now" for k in names[:3])
