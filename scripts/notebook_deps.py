"""Per-notebook Makefile prerequisites: each post depends on the modules it really imports.

Usage (what the Makefile runs; the standard library only, so the system python3 runs it
before the virtualenv exists)::

    python3 scripts/notebook_deps.py --package chunklab_core --out .cache/notebook-deps.mk \\
        [--runner chunklab_core.reports.notebook_run] notebooks/src/01_chunking.ipynb ...

For every notebook source ``notebooks/src/NAME.ipynb`` it reads the code cells, follows the
imports of the package named by ``--package`` through the package's modules (``ast``,
transitively), and writes one make rule without a recipe::

    notebooks/NAME.ipynb: chunklab_core/__init__.py chunklab_core/reports/post01/benchmark.py ...

GNU make merges these prerequisites with the Makefile's own rule for that notebook (the one
with the recipe), so an edit to a module re-executes exactly the posts whose imports reach it.

What counts as an import:
- ``import a.b.c`` and ``from a.b import c`` anywhere in the file, including inside functions
  (a deferred import is still run when the post calls that function) and relative imports;
- ``from pkg import name`` counts ``pkg.name`` when that is a module (a submodule), else ``pkg``;
- importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` too, so those count;
- ``--runner MODULE``: a module that executes every notebook (the Makefile's papermill
  wrapper); its closure is added to every notebook, since it shapes every executed file.

A module's prose template (``reading.md`` beside ``reading.py``) counts with the module: the
module reads it at run time, so an edited sentence re-executes the posts that show it.

Not handled (said, not guessed): imports built at run time (``importlib.import_module`` with a
computed name, ``__import__``), files read at run time (data, the Makefile lists those itself),
and IPython magics or shell lines (``%...``, ``!...``), which are skipped. A code cell that is
not valid Python after skipping them is an error naming the notebook and the cell.

The output also gives every module an empty rule (like ``gcc -MP``), so deleting a module
does not leave make asking for a file that no longer exists.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path


class NotebookDepsError(ValueError):
    """A notebook or module that cannot be read (bad JSON, a cell that is not Python, ...)."""


def package_modules(package_dir: Path) -> dict[str, Path]:
    """Every module of the package in ``package_dir``: dotted name -> file (``__init__`` = package)."""
    package_dir = Path(package_dir)
    if not (package_dir / "__init__.py").is_file():
        raise NotebookDepsError(f"{package_dir} is not a package (no __init__.py)")
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _absolute_target(importer: str, importer_is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name a (possibly relative) ``from ... import`` statement names."""
    if not node.level:
        return node.module or ""
    base = importer.split(".") if importer_is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(tree: ast.AST, modules: dict[str, Path], importer: str = "",
                     importer_is_package: bool = False) -> set[str]:
    """The package modules that the code in ``tree`` imports directly (anywhere in it).

    ``importer`` is the dotted name of the module the code belongs to ("" for a notebook),
    needed only to resolve relative imports. Names outside ``modules`` are ignored.
    """
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level and not importer:
                raise NotebookDepsError("a relative import outside a package module")
            target = _absolute_target(importer, importer_is_package, node)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return {name for name in found if name in modules} - {importer}


def with_parent_packages(name: str, modules: dict[str, Path]) -> set[str]:
    """``name`` and every package above it (importing ``a.b.c`` runs ``a`` and ``a.b`` first)."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & set(modules)


def module_imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """The direct import graph of the package: module -> package modules it imports."""
    graph = {}
    for name, path in modules.items():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as error:
            raise NotebookDepsError(f"{path}: not valid Python ({error})") from error
        graph[name] = imported_modules(tree, modules, name, path.name == "__init__.py")
    return graph


def closure(roots: set[str], graph: dict[str, set[str]], modules: dict[str, Path]) -> set[str]:
    """Every module that importing ``roots`` runs: the transitive imports plus parent packages."""
    seen: set[str] = set()
    todo = [parent for root in roots for parent in with_parent_packages(root, modules)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for target in graph[name]:
            todo.extend(with_parent_packages(target, modules) - seen)
    return seen


def _without_magics(code: str) -> str:
    """The cell's code with IPython magic and shell lines blanked (line numbers kept)."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                     for line in code.splitlines())


def notebook_tree(path: Path) -> ast.Module:
    """The code cells of the notebook at ``path`` as one ``ast`` module (cells in order)."""
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise NotebookDepsError(f"{path}: cannot read the notebook ({error})") from error
    body: list[ast.stmt] = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        code = "".join(source) if isinstance(source, list) else source
        try:
            body.extend(ast.parse(_without_magics(code), filename=f"{path} cell {index}").body)
        except SyntaxError as error:
            raise NotebookDepsError(f"{path}: code cell {index} is not valid Python ({error})") from error
    return ast.Module(body=body, type_ignores=[])


def notebook_prerequisites(notebook: Path, modules: dict[str, Path], graph: dict[str, set[str]],
                           runner: tuple[str, ...] = ()) -> list[Path]:
    """The module files that executing ``notebook`` imports, sorted (its own file not included),
    with each module's prose template ``<module>.md`` beside it when there is one
    (:mod:`chunklab_core.reports.templates`: the module reads it when the post runs)."""
    unknown = [name for name in runner if name not in modules]
    if unknown:
        raise NotebookDepsError(f"runner module(s) not in the package: {', '.join(unknown)}")
    roots = imported_modules(notebook_tree(notebook), modules) | set(runner)
    files = [modules[name] for name in closure(roots, graph, modules)]
    templates = [path.with_suffix(".md") for path in files if path.with_suffix(".md").is_file()]
    return sorted(files + templates)


def executed_notebook(source: Path, out_dir: Path) -> Path:
    """Where the Makefile writes the executed copy of ``source`` (``notebooks/src/X`` -> ``notebooks/X``)."""
    return Path(out_dir) / Path(source).name


def make_fragment(notebooks: list[Path], package_dir: Path, out_dir: Path,
                  runner: tuple[str, ...] = ()) -> str:
    """The make rules: one line of prerequisites per notebook, then an empty rule per module."""
    modules = package_modules(package_dir)
    graph = module_imports(modules)
    lines = ["# Generated by scripts/notebook_deps.py (the Makefile remakes it); do not edit.",
             "# Each executed post depends on the package modules its code imports, transitively."]
    used: set[Path] = set()
    for source in sorted(notebooks):
        files = notebook_prerequisites(source, modules, graph, runner)
        used.update(files)
        lines.append(f"{executed_notebook(source, out_dir).as_posix()}: "
                     + " ".join(path.as_posix() for path in files))
    lines.append("# a deleted module must not stop make (empty rules, as gcc -MP writes)")
    lines.extend(f"{path.as_posix()}:" for path in sorted(used))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="notebook sources (notebooks/src/*.ipynb)")
    parser.add_argument("--package", type=Path, default=Path("chunklab_core"), help="the package folder")
    parser.add_argument("--out-dir", type=Path, default=Path("notebooks"),
                        help="folder of the executed notebooks (the make targets)")
    parser.add_argument("--runner", action="append", default=[],
                        help="a module that executes every notebook (its imports count for each)")
    parser.add_argument("--out", type=Path, default=None, help="the make fragment to write (default stdout)")
    args = parser.parse_args(argv)
    try:
        text = make_fragment(args.notebooks, args.package, args.out_dir, tuple(args.runner))
    except NotebookDepsError as error:
        print(f"notebook_deps: {error}", file=sys.stderr)
        return 1
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_name(f".{args.out.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
