"""Notebook hygiene: one parameters cell of literals, committed outputs free of errors."""

from __future__ import annotations

import ast

import nbformat
import pytest

from chunklab_core.core.paths import NOTEBOOKS_DIR

SOURCES = sorted((NOTEBOOKS_DIR / "src").glob("*.ipynb"))
EXECUTED = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def test_there_are_notebooks():
    assert SOURCES, "no notebook sources under notebooks/src"


@pytest.mark.parametrize("path", SOURCES + EXECUTED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_exactly_one_parameters_cell_of_literals(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: {len(tagged)} cells tagged 'parameters'"
    tree = ast.parse(tagged[0].source)
    for node in tree.body:
        assert isinstance(node, ast.Assign), f"{path.name}: parameters cell may only assign literals"
        ast.literal_eval(node.value)  # raises if not a literal


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_sources_carry_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.name)
def test_executed_notebooks_have_no_errors(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", f"{path.name}: a cell raised {output.get('ename')}"
    assert (NOTEBOOKS_DIR / "src" / path.name).is_file(), f"{path.name} has no source in notebooks/src"


@pytest.mark.parametrize("path", EXECUTED, ids=lambda p: p.name)
def test_executed_notebooks_were_executed_from_their_current_source(path):
    """A committed post shows what its source says now: every cell (papermill's injected
    parameters aside) equals the source's, so a source edited without `make all` fails here."""
    source = NOTEBOOKS_DIR / "src" / path.name
    assert source.exists(), f"{path.name}: no source notebooks/src/{path.name}"

    def cells(p):
        return [(c.cell_type, c.source) for c in nbformat.read(p, as_version=4).cells
                if "injected-parameters" not in c.metadata.get("tags", [])]

    executed, current = cells(path), cells(source)
    stale = [i for i, (a, b) in enumerate(zip(executed, current)) if a != b]
    assert len(executed) == len(current) and not stale, (
        f"{path.name} was executed from an older source (cells {stale or 'count'} differ): re-execute it with "
        f"make all")


@pytest.mark.parametrize("path", sorted((NOTEBOOKS_DIR / "src").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_source_cell_carries_its_own_id(path):
    """A source cell without an id is given a random one at every execution, so a re-executed post
    differs from the committed one in its ids alone and a fresh clone's `make all` leaves the tree
    changed: every source cell carries a fixed, unique id."""
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    missing = [i for i, cell in enumerate(cells) if "id" not in cell]
    assert not missing, f"{path.name}: cells {missing} have no id"
    ids = [cell["id"] for cell in cells]
    assert len(set(ids)) == len(ids), f"{path.name}: repeated cell ids"
