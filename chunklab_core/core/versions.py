"""The package versions a notebook ran with, printed in its first code cell."""

from __future__ import annotations

import platform
from importlib import metadata

import pandas as pd

DEFAULT_PACKAGES = (
    "chunklab_core", "numpy", "pandas", "scipy", "scikit-learn", "matplotlib", "tiktoken",
    "rapidfuzz", "sentence-transformers", "torch", "papermill",
)


def package_versions(packages=DEFAULT_PACKAGES) -> pd.DataFrame:
    """One row per package with its installed version ("not installed" when absent)."""
    rows = [{"package": "python", "version": platform.python_version()}]
    for name in packages:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        rows.append({"package": name, "version": version})
    return pd.DataFrame(rows).set_index("package").T
