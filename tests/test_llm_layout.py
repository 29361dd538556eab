"""The llm package's own layering, as its docstring states it: read every import (ast).

Inside ``chunklab_core.llm`` the modules form a chain (``MODULE_ORDER``, the order of the
package docstring): a module imports only modules before it, ``chunklab_core.core``, and no
later stage (``assemble``, the ``chunklab-models`` command, also assembles the embedding
model through ``retrieval.model_assembly``, an earlier stage); ``base`` knows no backend. Imports inside functions count (deferred, not absent).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import chunklab_core.llm as llm

LLM_DIR = Path(llm.__file__).resolve().parent
MODULE_ORDER = ("base", "models", "assemble", "llamacpp_backend", "ollama_backend", "openai_backend", "testing",
                "local_server", "record_schema", "records", "pool", "wiring", "answering", "judges",
                "relevance")
# imports from earlier stages other than core, by module (each one named, none implied)
EARLIER_STAGE_IMPORTS = {"assemble": {"chunklab_core.retrieval.model_assembly"}}


def chunklab_imports(path: Path) -> set[str]:
    """Every ``chunklab_core`` module ``path`` imports, as written (absolute imports only)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("chunklab_core"))
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{path.name}: relative import (the package uses absolute ones)"
            if node.module == "chunklab_core.llm":  # `from chunklab_core.llm import models`
                found.update(f"chunklab_core.llm.{a.name}" for a in node.names)
            elif node.module and node.module.startswith("chunklab_core"):
                found.add(node.module)
    return found


def test_module_order_lists_every_module():
    on_disk = {p.stem for p in LLM_DIR.glob("*.py")} - {"__init__"}
    assert sorted(on_disk) == sorted(MODULE_ORDER)


@pytest.mark.parametrize("name", MODULE_ORDER)
def test_module_imports_only_earlier_llm_modules_and_core(name):
    earlier = {f"chunklab_core.llm.{m}" for m in MODULE_ORDER[: MODULE_ORDER.index(name)]}
    for target in chunklab_imports(LLM_DIR / f"{name}.py"):
        if target.startswith("chunklab_core.llm."):
            assert target in earlier, f"llm.{name} imports {target}, listed after it (or itself)"
        elif target not in EARLIER_STAGE_IMPORTS.get(name, set()):
            assert target == "chunklab_core.core" or target.startswith("chunklab_core.core."), \
                f"llm.{name} imports {target}: llm may use only chunklab_core.core below it"


def test_base_knows_no_backend():
    assert chunklab_imports(LLM_DIR / "base.py") == set()


def test_package_init_imports_nothing():
    """``chunklab_core.llm`` re-exports nothing, so importing one llm module (``judges`` for its
    labels) does not load every backend, and a notebook's prerequisites stay narrow."""
    init = ast.parse((LLM_DIR / "__init__.py").read_text())
    assert all(isinstance(node, ast.Expr) for node in init.body), "llm/__init__.py holds more than its docstring"
