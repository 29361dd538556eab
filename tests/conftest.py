"""Shared fixtures: the data mirror (``../shared/data`` next to the repository unless set)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chunklab_core.core.paths import PROJ_ROOT

DEFAULT_MIRROR = PROJ_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The data mirror folder; tests that need real data skip with a reason when absent."""
    folder = Path(os.environ.get("CHUNKLAB_DATA_MIRROR", DEFAULT_MIRROR))
    if not (folder / "squad-v1.1-dev.json.gz").is_file():
        pytest.skip(f"no data mirror at {folder} (set CHUNKLAB_DATA_MIRROR)")
    return folder


@pytest.fixture
def use_mirror(mirror, monkeypatch) -> Path:
    monkeypatch.setenv("CHUNKLAB_DATA_MIRROR", str(mirror))
    return mirror
