"""The README's links point at files the repository has, and its commands exist in the Makefile."""

from __future__ import annotations

import re

from chunklab_core.paths import PROJ_ROOT

README = (PROJ_ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (PROJ_ROOT / "Makefile").read_text(encoding="utf-8")


def test_linked_files_exist():
    links = re.findall(r"\]\(((?:notebooks|figures|data|examples)/[^)]+)\)", README)
    assert links, "the README links no post or figure"
    missing = [link for link in links if not (PROJ_ROOT / link).exists()]
    assert not missing, f"README links missing files: {missing}"


def test_make_targets_named_in_readme_exist():
    targets = set(re.findall(r"^([a-zA-Z0-9_.-]+):", MAKEFILE, flags=re.M))
    named = set(re.findall(r"`make ([a-z-]+)", README)) | set(re.findall(r"^make ([a-z-]+)", README, flags=re.M))
    assert named and named <= targets, f"README names make targets that do not exist: {named - targets}"
