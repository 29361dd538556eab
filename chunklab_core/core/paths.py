"""Project paths, defined once (cookiecutter-data-science style).

Handles: the repository root, the committed output folders (``data/``, ``figures/``) and the
gitignored cache (downloads, embeddings, model files). Not handled: anything about what goes
inside them.

``CHUNKLAB_CACHE`` overrides the cache folder (useful when several clones share downloads).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJ_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = PROJ_ROOT / "data"
FIGURES_DIR = PROJ_ROOT / "figures"
NOTEBOOKS_DIR = PROJ_ROOT / "notebooks"
CACHE_DIR = Path(os.environ.get("CHUNKLAB_CACHE", PROJ_ROOT / ".cache")).resolve()
RAW_DIR = CACHE_DIR / "raw"
MODELS_DIR = CACHE_DIR / "models"


def ensure_dirs() -> None:
    """Create the output and cache folders if they are missing."""
    for folder in (DATA_DIR, FIGURES_DIR, CACHE_DIR, RAW_DIR, MODELS_DIR):
        folder.mkdir(parents=True, exist_ok=True)
