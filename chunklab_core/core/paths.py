"""Project paths, defined once (cookiecutter-data-science style).

Handles: the repository root, the committed folders (``data/``, ``figures/``) and the
gitignored cache (downloads, embeddings, model files). Not handled: anything about what goes
inside them.

``data/`` holds two kinds of files, kept apart:

- **irreplaceable inputs** (:data:`IRREPLACEABLE_DIRS`), committed and never written by a
  notebook: :data:`RECORDS_DIR` (``data/records/``: the recorded LLM calls, one JSONL file per
  stage, append-only; written only by the recorders, e.g. ``answers.study``, ``rerank.study``,
  ``questions.generation``, ``audit.retest``) and :data:`AUDIT_DIR` (``data/audit/``: the audit
  samples' populations, keys and the sheets graded by a person or a model; written only by
  ``audit.draw``, ``audit.topup`` and ``audit.terminal_grader``), and :data:`RUNS_DIR`
  (``data/runs/``: the recorded retrieval runs, written only by ``make runs``,
  ``retrieval.recorded_runs``; hours of encoding on 2 cores). Losing them loses work that no
  ``make`` target can redo without the models and the graders.
- **regenerated tables** (:data:`TABLES_DIR`, the top of ``data/``: ``NN_*.csv``), written by
  the notebooks; ``make all`` rewrites every one of them from the inputs above.

``CHUNKLAB_CACHE`` overrides the cache folder (useful when several clones share downloads).
"""

from __future__ import annotations

import os
from pathlib import Path

PROJ_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = PROJ_ROOT / "data"
TABLES_DIR = DATA_DIR
RECORDS_DIR = DATA_DIR / "records"
AUDIT_DIR = DATA_DIR / "audit"
# File-name prefixes of the series' audit in AUDIT_DIR (``<prefix>_sheet.csv``, ``_key.csv``,
# ``_population.csv``): names of recorded files, the defaults of the audit tools' options.
AUDIT_SAMPLE = "post05_v2"  # the blind grading sample
AUDIT_PILOT = "post05"  # the graded pilot it was planned from
RUNS_DIR = Path(os.environ.get("CHUNKLAB_RUNS_DIR", DATA_DIR / "runs")).resolve()  # tests point it elsewhere
IRREPLACEABLE_DIRS = (RECORDS_DIR, AUDIT_DIR, RUNS_DIR)
FIGURES_DIR = PROJ_ROOT / "figures"
NOTEBOOKS_DIR = PROJ_ROOT / "notebooks"
CACHE_DIR = Path(os.environ.get("CHUNKLAB_CACHE", PROJ_ROOT / ".cache")).resolve()
RAW_DIR = CACHE_DIR / "raw"
MODELS_DIR = CACHE_DIR / "models"


def irreplaceable_folder_of(path: str | os.PathLike) -> Path | None:
    """The folder of :data:`IRREPLACEABLE_DIRS` that holds ``path`` (or is it), else ``None``."""
    path = Path(path).resolve()
    for folder in IRREPLACEABLE_DIRS:
        folder = Path(folder).resolve()
        if path == folder or folder in path.parents:
            return folder
    return None


def ensure_dirs() -> None:
    """Create the output and cache folders if they are missing."""
    for folder in (DATA_DIR, FIGURES_DIR, CACHE_DIR, RAW_DIR, MODELS_DIR):
        folder.mkdir(parents=True, exist_ok=True)
