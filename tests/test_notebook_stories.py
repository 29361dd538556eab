"""Notebooks read as stories: no function or class defined in a notebook, and short code cells.

Every code cell of ``notebooks/src/*.ipynb`` is parsed with ``ast``; a ``def``, ``async def``,
``lambda`` or ``class`` anywhere in it fails (the code belongs in ``chunklab_core.reports``,
where it is tested). A code cell may hold at most ``MAX_CELL_LINES`` lines of code (blank and
comment-only lines not counted), the cell tagged ``parameters`` exempt (its length is the
post's list of knobs). Why 15: about one screen of a rendered post, enough for a section's
call into the report layer, the writes of its tables (one line each) and the table shown;
the longest cells that remain are import lists and such writes, while the cells this rule was
written against (a 25-line takeaways builder, 20-line inline plots) are well above it.

Writes go through the report layer: no ``.to_csv(``, ``savefig(`` or ``if WRITE_OUTPUTS`` in a
code cell (``reports.tables.save_table`` / ``save_compressed_table`` write a table,
``reports.plots.show_figure`` a figure, each taking ``WRITE_OUTPUTS``). A post's ``SEED``
parameter is the series' :data:`chunklab_core.core.seeds.DEFAULT_SEED`, except where
:data:`OWN_SEEDS` says why not.
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from chunklab_core.core.paths import NOTEBOOKS_DIR
from chunklab_core.core.seeds import DEFAULT_SEED

SOURCES = sorted((NOTEBOOKS_DIR / "src").glob("*.ipynb"))
MAX_CELL_LINES = 15
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
HAND_WRITES = (".to_csv(", "savefig(", "if WRITE_OUTPUTS")
OWN_SEEDS = {
    # Post 06 audits a fixed, already graded sample: its bootstrap intervals were drawn with
    # this seed when the audit was designed and are quoted in its committed tables; the
    # series' seed would redraw every interval of the audit.
    "06_judge_audit.ipynb": 20260806,
}


def code_cells(path):
    """(index, source) of every code cell that is not the parameters cell."""
    nb = nbformat.read(path, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])]


def definitions(source: str) -> list[str]:
    """Names (or kinds) of the functions, lambdas and classes defined anywhere in ``source``."""
    return [getattr(node, "name", "lambda") for node in ast.walk(ast.parse(source))
            if isinstance(node, DEFINITIONS)]


def code_lines(source: str) -> int:
    """Lines of ``source`` that are neither blank nor only a comment."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def test_the_rules_catch_what_they_forbid():
    assert definitions("def md(text):\n    display(text)") == ["md"]
    assert definitions("key = lambda row: row[0]") == ["lambda"]
    assert definitions("class Row:\n    pass") == ["Row"]
    assert definitions("for x in y:\n    async def f():\n        pass") == ["f"]
    assert definitions("md(text)\nf = functools.partial(g, 1)") == []
    assert code_lines("a = 1\n\n# a comment\n  # indented comment\nb = 2  # trailing\n") == 2


def hand_writes(source: str) -> list[str]:
    """The writes in ``source`` that bypass the report layer's table and figure helpers."""
    return [pattern for pattern in HAND_WRITES if pattern in source]


def parameter_value(path, name: str):
    """The literal assigned to ``name`` in the cell tagged ``parameters``; ``None`` when it has none."""
    nb = nbformat.read(path, as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])] or [None]
    if cell is None:
        return None
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def ends_with_a_write(source: str) -> bool:
    """True when the cell's last statement is a bare ``save_table(...)``: the cell would show the table it wrote."""
    body = ast.parse(source).body
    if not body or not isinstance(body[-1], ast.Expr) or not isinstance(body[-1].value, ast.Call):
        return False
    func = body[-1].value.func
    return getattr(func, "id", getattr(func, "attr", None)) in ("save_table", "save_compressed_table")


def test_the_write_rules_catch_what_they_forbid():
    assert ends_with_a_write('x = 1\nsave_table(t, "05_x", WRITE_OUTPUTS)')
    assert ends_with_a_write('tables.save_compressed_table(t, "02_x", WRITE_OUTPUTS)')
    assert not ends_with_a_write('t = save_table(t, "05_x", WRITE_OUTPUTS)\nt')
    assert not ends_with_a_write('save_tables({"05_x": t}, WRITE_OUTPUTS)')
    assert hand_writes('table.to_csv(DATA_DIR / "01_x.csv", index=False)') == [".to_csv("]
    assert hand_writes('if WRITE_OUTPUTS:\n    plots.save_figure(fig, "01_x")') == ["if WRITE_OUTPUTS"]
    assert hand_writes('fig.savefig("x.png")') == ["savefig("]
    assert hand_writes('save_table(table, "01_x", WRITE_OUTPUTS, float_format="%.6f")\n'
                       'plots.show_figure(fig, "01_x", WRITE_OUTPUTS)') == []


def test_there_are_notebook_sources():
    assert len(SOURCES) >= 9, [p.name for p in SOURCES]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_function_or_class_defined_in_a_notebook(path):
    found = {i: names for i, source in code_cells(path) if (names := definitions(source))}
    assert not found, f"{path.name}: definitions in code cells (index: names) {found}; move them into chunklab_core.reports"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_code_cells_are_short(path):
    long = {i: n for i, source in code_cells(path) if (n := code_lines(source)) > MAX_CELL_LINES}
    assert not long, f"{path.name}: code cells over {MAX_CELL_LINES} lines (index: lines) {long}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_setup_is_one_call_into_the_report_layer(path):
    sources = [source for _, source in code_cells(path)]
    first = sources[0]
    assert "start_post(" in first, f"{path.name}: the first code cell should call reports.notebook_setup.start_post"
    everything = "\n".join(sources)
    for boilerplate in ("warnings.filterwarnings", "pd.set_option", "Markdown("):
        assert boilerplate not in everything, f"{path.name}: {boilerplate!r} belongs in chunklab_core.reports"
    shown = [source for source in sources for node in ast.parse(source).body
             if isinstance(node, ast.Expr) and "package_versions(" in ast.unparse(node)]
    assert not shown, f"{path.name}: the versions table is shown by start_post, not by a cell of its own"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_writes_go_through_the_report_layer(path):
    found = {i: patterns for i, source in code_cells(path) if (patterns := hand_writes(source))}
    assert not found, (f"{path.name}: hand-written outputs in code cells (index: patterns) {found}; use "
                       "reports.tables.save_table / save_compressed_table and reports.plots.show_figure")


WITHOUT_SEED = {"own_documents.ipynb": "its seed comes from the user's config (own.config, default DEFAULT_SEED)"}


@pytest.mark.parametrize("path", [p for p in SOURCES if p.name not in WITHOUT_SEED], ids=lambda p: p.name)
def test_the_seed_is_the_series_seed(path):
    seed = parameter_value(path, "SEED")
    assert seed is not None, f"{path.name} has no SEED parameter (list it in WITHOUT_SEED with a reason)"
    assert seed == OWN_SEEDS.get(path.name, DEFAULT_SEED), (
        f"{path.name}: SEED = {seed}; the series' seed is core.seeds.DEFAULT_SEED = {DEFAULT_SEED}")


def test_every_own_seed_is_a_notebook_that_differs():
    names = {p.name for p in SOURCES}
    assert all(parameter_value(SOURCES[0].parent / name, "SEED") is None for name in WITHOUT_SEED)
    for name, seed in OWN_SEEDS.items():
        assert name in names and seed != DEFAULT_SEED


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_cell_ends_with_a_bare_write(path):
    found = [i for i, source in code_cells(path) if ends_with_a_write(source)]
    assert not found, (f"{path.name}: cells {found} end with save_table(...), which shows the table it wrote; "
                       "assign it, show a view of it, or use save_tables")
