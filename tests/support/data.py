"""The real benchmark data sets, beside the checkout (`../shared/data`), for the tests that check them."""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def shared_data(name: str) -> Path:
    """Path of a benchmark data set beside the checkout, or skip the test when it is absent."""
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(f"benchmark data {path} is not present on this machine")
    return path
