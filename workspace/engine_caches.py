"""Freeing what this process caches of a corpus (its loaded index and engines) before the corpus is deleted or
reloaded.

The caches live with the app (`pages/ui/engines.py`) and register how they forget a corpus; whoever deletes or
retrains a corpus calls `release` without knowing where, or whether, its engines are cached."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

_FORGETTERS: dict[str, Callable[[str | Path], None]] = {}


def register(forget: Callable[[str | Path], None]) -> None:
    """Have `release` call `forget(directory)`; a function registered again under its name (a reloaded module)
    replaces the earlier one."""
    _FORGETTERS[f"{forget.__module__}.{forget.__qualname__}"] = forget


def release(directory: str | Path) -> None:
    """Forget the cached objects of every version of the corpus in `directory`."""
    for forget in list(_FORGETTERS.values()):
        forget(directory)
