"""requirements/lock.txt covers pyproject.toml: every declared package is pinned, with a hash,
at a version the declaration admits (a stale lock fails here; `make lock` refreshes it)."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from chunklab_core.core.paths import PROJ_ROOT


def _pins(path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    pins = {canonicalize_name(n): v for n, v in re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+) \\$", text, flags=re.M)}
    blocks = re.split(r"^(?=[A-Za-z0-9_.\-]+==)", text, flags=re.M)[1:]
    assert all("--hash=sha256:" in block for block in blocks), "every pin carries a sha256"
    return pins


def test_lock_pins_every_declared_package_within_its_range():
    project = tomllib.loads((PROJ_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    pins = _pins(PROJ_ROOT / "requirements" / "lock.txt")
    declared = project["dependencies"] + extras["dev"] + extras["lab"]
    problems = []
    for line in declared:
        requirement = Requirement(line)
        pinned = pins.get(canonicalize_name(requirement.name))
        if pinned is None or not requirement.specifier.contains(pinned, prereleases=True):
            problems.append(f"{line}: locked {pinned}")
    assert not problems, f"requirements/lock.txt is stale (run `make lock`): {problems}"
    assert pins["torch"].endswith("+cpu")  # the CPU-only build, no CUDA packages
    assert not any(name.startswith("nvidia-") for name in pins)


def test_llm_lock_pins_llama_cpp_python_as_declared():
    project = tomllib.loads((PROJ_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins(PROJ_ROOT / "requirements" / "llm-lock.txt")
    for line in project["optional-dependencies"]["llm"]:
        requirement = Requirement(line)
        assert requirement.specifier.contains(pins[canonicalize_name(requirement.name)]), line


def test_cluster_lock_pins_ray_as_declared_and_moves_no_main_pin():
    project = tomllib.loads((PROJ_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins(PROJ_ROOT / "requirements" / "cluster-lock.txt")
    main = _pins(PROJ_ROOT / "requirements" / "lock.txt")
    for line in project["optional-dependencies"]["cluster"]:
        requirement = Requirement(line)
        assert requirement.specifier.contains(pins[canonicalize_name(requirement.name)]), line
    moved = {name: (version, main[name]) for name, version in pins.items() if name in main and main[name] != version}
    assert not moved, f"requirements/cluster-lock.txt changes main pins (constrain it with -c lock.txt): {moved}"
    assert "ray" not in main  # Ray stays out of the main lock
