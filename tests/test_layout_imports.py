"""The package's layout is a one-way pipeline: read every import (ast) and check it.

Stages, in the order data flows (``chunklab_core/<stage>/``; the package root counts as
``core``): core -> data -> chunking -> retrieval -> evaluation -> stats -> llm -> rerank ->
answers -> questions -> audit -> decision -> own -> evaluators -> reports. A module may import its own stage and the
stages before it, never one after it (an *upward* import); only ``reports`` imports
``reports``; and the module import graph has no cycle (imports inside functions count too:
they are deferred, not absent).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "chunklab_core"
STAGES = ["core", "data", "chunking", "retrieval", "evaluation", "stats", "llm", "rerank",
          "answers", "questions", "audit", "decision", "own", "evaluators", "reports"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def stage_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "core"  # the package root (only __version__)
    return parts[1]


def resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def known_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path, module: str, modules: dict[str, Path]) -> set[str]:
    """Every chunklab_core module ``path`` imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "chunklab_core")
        elif isinstance(node, ast.ImportFrom):
            target = resolve(module, path.name == "__init__.py", node)
            if target.split(".")[0] != "chunklab_core":
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in modules else target)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = known_modules()
    return {name: imports_of(path, name, modules) for name, path in modules.items()}


def test_every_module_lives_in_a_known_stage():
    strays = [m for m in known_modules() if m != "chunklab_core" and stage_of(m) not in STAGES]
    assert not strays, f"modules outside the stage subpackages {STAGES}: {sorted(strays)}"


def test_no_upward_import():
    upward = []
    for module, targets in import_graph().items():
        here = STAGES.index(stage_of(module))
        for target in targets:
            if STAGES.index(stage_of(target)) > here:
                upward.append(f"{module} -> {target}")
    assert not upward, "upward imports (a stage importing a later one):\n" + "\n".join(sorted(upward))


def test_only_reports_import_reports():
    offenders = [f"{m} -> {t}" for m, ts in import_graph().items() for t in ts
                 if stage_of(t) == "reports" and stage_of(m) != "reports"]
    assert not offenders, "\n".join(sorted(offenders))


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None (iterative DFS)."""
    colour = {m: 0 for m in graph}  # 0 new, 1 on the stack, 2 done
    for root in sorted(graph):
        if colour[root]:
            continue
        stack = [(root, iter(sorted(graph[root])))]
        path = [root]
        colour[root] = 1
        while stack:
            node, children = stack[-1]
            for child in children:
                if child not in graph:
                    continue
                if colour[child] == 1:
                    return path[path.index(child):] + [child]
                if colour[child] == 0:
                    colour[child] = 1
                    path.append(child)
                    stack.append((child, iter(sorted(graph[child]))))
                    break
            else:
                colour[node] = 2
                path.pop()
                stack.pop()
    return None


def test_no_import_cycle():
    graph = import_graph()
    # a package's __init__ importing its own submodules is how a package re-exports; a
    # submodule importing its package back for those names is the cycle we forbid
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"a2"}, "a2": set(), "b": {"b"}}, ["b", "b"]),
])
def test_find_cycle_on_hand_made_graphs(graph, expected):
    assert find_cycle(graph) == expected


def test_checker_sees_relative_and_deferred_imports(tmp_path):
    src = "from .bm25 import x\n\ndef f():\n    from chunklab_core.reports import post07\n"
    path = PACKAGE / "retrieval" / "example.py"
    tree_path = tmp_path / "example.py"
    tree_path.write_text(src)
    modules = {"chunklab_core.retrieval.bm25": path, "chunklab_core.reports.post07": path}
    found = imports_of(tree_path, "chunklab_core.retrieval.example", modules)
    assert found == {"chunklab_core.retrieval.bm25", "chunklab_core.reports.post07"}


def readme_stages() -> list[str]:
    """The stage names listed, in order, in the README's Architecture section."""
    readme = (PACKAGE.parent / "README.md").read_text()
    section = readme.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    return [line.split("`")[1] for line in section.splitlines() if line.startswith("- `")]


def test_readme_architecture_lists_every_stage_in_flow_order():
    subpackages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert readme_stages() == STAGES
    assert sorted(STAGES) == subpackages


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_docstring_names_its_stage_and_every_module(stage):
    """A newcomer reads a stage's ``__init__`` docstring first: it must name the stage's place in
    the flow and every module (and sub-package) in it, as ``name``."""
    import ast as _ast

    init = PACKAGE / stage / "__init__.py"
    doc = _ast.get_docstring(_ast.parse(init.read_text())) or ""
    assert doc.startswith(f"Stage {STAGES.index(stage)}, {stage}:"), doc[:60]
    members = sorted({p.stem for p in (PACKAGE / stage).glob("*.py") if p.stem != "__init__"}
                     | {p.parent.name for p in (PACKAGE / stage).glob("*/__init__.py")})
    missing = [m for m in members if f"``{m}``" not in doc and f"``{m}." not in doc]
    assert not missing, f"chunklab_core/{stage}/__init__.py does not name: {missing}"
