"""Per-notebook Makefile prerequisites (scripts/notebook_deps.py and the Makefile rules using it).

A hand-made package and notebook pin the import reading (transitive, deferred, relative,
``from pkg import submodule``, parent packages, magics skipped, markdown ignored); the real
repository pins what post 01 and post 07 depend on; and GNU make itself, on a temporary copy
of the repository with fixed file times, shows that an edit to a module only post 07 imports
leaves post 01 up to date and makes post 07 stale. No notebook is executed (``make -q``/``-n``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "notebook_deps.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("notebook_deps", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["notebook_deps"] = module
    spec.loader.exec_module(module)
    return module


nd = _load_script()


def write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def notebook(path: Path, *cells: tuple[str, str]) -> Path:
    write(path, json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": source}
                                      for kind, source in cells],
                            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


@pytest.fixture
def tiny(tmp_path):
    """pkg: a -> (from pkg import b) -> b -> (deferred, relative) c; e -> pkg.sub.d; unused, f alone."""
    pkg = tmp_path / "pkg"
    write(pkg / "__init__.py")
    write(pkg / "a.py", "from pkg import b\n")
    write(pkg / "b.py", "def f():\n    from .c import x\n    return x\n")
    write(pkg / "c.py", "x = 1\n")
    write(pkg / "e.py", "import pkg.sub.d\n")
    write(pkg / "sub" / "__init__.py")
    write(pkg / "sub" / "d.py", "from ..c import x as y  # relative, two levels\n")
    write(pkg / "unused.py", "import pkg.a\n")
    write(pkg / "f.py", "VALUE = 2\n")
    write(pkg / "g.py", "from pkg.f import VALUE  # a name, not a submodule\n")
    return tmp_path


def rel(paths, base):
    return sorted(Path(p).relative_to(base).as_posix() for p in paths)


def test_transitive_deferred_and_submodule_imports(tiny):
    source = notebook(tiny / "src" / "01_x.ipynb",
                      ("code", "%matplotlib inline\nimport numpy as np\nfrom pkg import a\n"),
                      ("markdown", "import pkg.unused  (prose, not code)"),
                      ("code", ["!echo shell lines are skipped\n", "import pkg.e as e\n"]))
    modules = nd.package_modules(tiny / "pkg")
    found = nd.notebook_prerequisites(source, modules, nd.module_imports(modules))
    assert rel(found, tiny) == ["pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/e.py",
                                "pkg/sub/__init__.py", "pkg/sub/d.py"]


def test_from_import_of_a_name_counts_the_module_only(tiny):
    source = notebook(tiny / "src" / "02_y.ipynb", ("code", "from pkg.g import VALUE\n"))
    modules = nd.package_modules(tiny / "pkg")
    found = nd.notebook_prerequisites(source, modules, nd.module_imports(modules))
    assert rel(found, tiny) == ["pkg/__init__.py", "pkg/f.py", "pkg/g.py"]


def test_runner_imports_count_for_every_notebook(tiny):
    source = notebook(tiny / "src" / "03_z.ipynb", ("code", "import pkg.f\n"))
    modules = nd.package_modules(tiny / "pkg")
    found = nd.notebook_prerequisites(source, modules, nd.module_imports(modules), runner=("pkg.g",))
    assert rel(found, tiny) == ["pkg/__init__.py", "pkg/f.py", "pkg/g.py"]
    with pytest.raises(nd.NotebookDepsError, match="pkg.nothing"):
        nd.notebook_prerequisites(source, modules, nd.module_imports(modules), runner=("pkg.nothing",))


def test_fragment_has_one_rule_per_notebook_and_empty_module_rules(tiny, monkeypatch):
    monkeypatch.chdir(tiny)
    notebook(Path("src/01_x.ipynb"), ("code", "from pkg import b\n"))
    notebook(Path("src/02_y.ipynb"), ("code", "import pkg.f\n"))
    text = nd.make_fragment([Path("src/02_y.ipynb"), Path("src/01_x.ipynb")], Path("pkg"), Path("out"))
    rules = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert rules == ["out/01_x.ipynb: pkg/__init__.py pkg/b.py pkg/c.py",
                     "out/02_y.ipynb: pkg/__init__.py pkg/f.py",
                     "pkg/__init__.py:", "pkg/b.py:", "pkg/c.py:", "pkg/f.py:"]


def test_bad_cell_and_missing_package_are_clear_errors(tiny):
    source = notebook(tiny / "src" / "04_bad.ipynb", ("markdown", "x"), ("code", "def broken(:\n"))
    modules = nd.package_modules(tiny / "pkg")
    with pytest.raises(nd.NotebookDepsError, match=r"04_bad.ipynb: code cell 1 is not valid Python"):
        nd.notebook_prerequisites(source, modules, nd.module_imports(modules))
    with pytest.raises(nd.NotebookDepsError, match="not a package"):
        nd.package_modules(tiny / "src")
    assert nd.main([str(source), "--package", str(tiny / "pkg")]) == 1


def real_prerequisites(name: str) -> list[str]:
    modules = nd.package_modules(ROOT / "chunklab_core")
    found = nd.notebook_prerequisites(ROOT / "notebooks" / "src" / name, modules, nd.module_imports(modules))
    return rel(found, ROOT)


@pytest.mark.heavy
def test_real_post01_depends_on_its_report_module_not_post07s():
    post01 = real_prerequisites("01_chunking.ipynb")
    assert "chunklab_core/reports/post01/benchmark.py" in post01
    assert "chunklab_core/reports/post01/prose.md" in post01
    assert "chunklab_core/chunking/token_windows.py" in post01  # through the strategies registry
    assert "chunklab_core/reports/post07/tables.py" not in post01
    assert "chunklab_core/rerank/study.py" not in post01
    post07 = real_prerequisites("07_reranking.ipynb")
    assert "chunklab_core/reports/post07/tables.py" in post07
    assert "chunklab_core/reports/post01/benchmark.py" not in post07


def test_a_modules_prose_template_counts_with_it(tiny):
    write(tiny / "pkg" / "c.md", "<!-- t -->\nA sentence.\n")
    modules = nd.package_modules(tiny / "pkg")
    source = notebook(tiny / "nb.ipynb", ("code", "import pkg.a"))
    found = rel(nd.notebook_prerequisites(source, modules, nd.module_imports(modules)), tiny)
    assert "pkg/c.md" in found and "pkg/c.py" in found and "pkg/f.md" not in found


def test_real_post06_depends_on_its_templates():
    post06 = real_prerequisites("06_judge_audit.ipynb")
    assert "chunklab_core/reports/post06/reading.md" in post06
    assert "chunklab_core/reports/post06/reading_bias.md" in post06
    assert "chunklab_core/reports/post04/prose.md" not in post06


# ---- GNU make on a temporary copy of the repository (nothing executed: -q and -n only)

MPNET = ".cache/models/all-mpnet-base-v2/model.safetensors"


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory):
    """Makefile, scripts, notebook sources and package copied; sources old, executed posts new."""
    assert shutil.which("make"), "GNU make is required (the series is run by make)"
    copy = tmp_path_factory.mktemp("repo")
    shutil.copy2(ROOT / "Makefile", copy / "Makefile")
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    shutil.copytree(ROOT / "notebooks" / "src", copy / "notebooks" / "src")
    shutil.copytree(ROOT / "chunklab_core", copy / "chunklab_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    old, new = 1_700_000_000, 1_700_100_000
    for path in copy.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))
    for source in (copy / "notebooks" / "src").glob("[0-9][0-9]_*.ipynb"):
        write(copy / "notebooks" / source.name, "{}")
        os.utime(copy / "notebooks" / source.name, (new, new))
    write(copy / MPNET)
    os.utime(copy / MPNET, (new, new))
    return copy


def make(copy: Path, *args: str) -> subprocess.CompletedProcess:
    command = ["make", "--no-print-directory", "-o", ".venv/.installed", "-o", ".venv/.llm-installed",
               f"PYTHON_SYS={sys.executable}", *args]
    return subprocess.run(command, cwd=copy, capture_output=True, text=True, timeout=120)


POST01, POST07 = "notebooks/01_chunking.ipynb", "notebooks/07_reranking.ipynb"


def test_make_sees_both_posts_up_to_date(repo_copy):
    assert make(repo_copy, "-q", POST01).returncode == 0, make(repo_copy, "-n", POST01).stdout
    assert make(repo_copy, "-q", POST07).returncode == 0, make(repo_copy, "-n", POST07).stdout
    assert (repo_copy / ".cache" / "notebook-deps.mk").is_file()


@pytest.mark.heavy
@pytest.mark.parametrize("edited, stale, fresh", [
    ("chunklab_core/reports/post07/tables.py", [POST07], [POST01]),
    ("chunklab_core/rerank/study.py", [POST07], [POST01]),
    ("chunklab_core/reports/post01/prose.md", [POST01], [POST07]),
    ("notebooks/src/01_chunking.ipynb", [POST01], [POST07]),
    ("chunklab_core/core/paths.py", [POST01, POST07], []),
    ("chunklab_core/reports/notebook_run.py", [POST01, POST07], []),  # the runner of every post
])
def test_an_edit_makes_stale_exactly_the_posts_that_import_it(repo_copy, edited, stale, fresh):
    for post in stale:
        result = make(repo_copy, "-n", "-W", edited, post)
        assert f"notebooks/src/{Path(post).name} {post}" in result.stdout, (edited, post, result.stdout)
        assert make(repo_copy, "-q", "-W", edited, post).returncode == 1
    for post in fresh:
        result = make(repo_copy, "-q", "-W", edited, post)
        assert result.returncode == 0, (edited, post, make(repo_copy, "-n", "-W", edited, post).stdout)


def test_makefile_has_no_catch_all_package_prerequisite():
    text = (ROOT / "Makefile").read_text()
    assert "PKG_SRC" not in text
    assert "include $(NOTEBOOK_DEPS)" in text
