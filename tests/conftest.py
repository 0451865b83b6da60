"""Shared fixtures: where ../shared is, and skipping dataset tests cleanly when absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DICEPAD_SHARED", REPO.parent / "shared"))
DATASETS = SHARED / "datasets"


@pytest.fixture(scope="session")
def datasets_dir() -> Path:
    if not (DATASETS / "README.md").exists():
        pytest.skip(f"real photo datasets not found at {DATASETS}")
    return DATASETS
