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


@pytest.fixture(autouse=True)
def fresh_judgment_memo():
    """Each test starts with an empty judge-once memo (``slot_metrics.JUDGMENTS``), so counts of
    judgments made in a test do not depend on which tests ran before it in the process."""
    import sys

    module = sys.modules.get("chunklab_core.evaluation.slot_metrics")
    if module is not None:
        module.JUDGMENTS.clear()
    yield


@pytest.fixture(autouse=True)
def registries_scoped():
    """Every test runs inside the registries' scoped contexts: a strategy variant a parsed config
    registers, or a member a test adds, is gone after it (no leak into the next test)."""
    from contextlib import ExitStack

    from chunklab_core.chunking import STRATEGIES
    from chunklab_core.evaluation.measures import MEASURES
    from chunklab_core.retrieval.registry import RETRIEVER_SPECS

    with ExitStack() as stack:
        for registry in (STRATEGIES, RETRIEVER_SPECS, MEASURES):
            stack.enter_context(registry.scoped())
        yield
