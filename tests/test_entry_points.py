"""The command-line entry points of pyproject.toml ([project.scripts]) and the README's use of them.

Every target is imported (no installation needed: the names are resolved the way the console
scripts resolve them), must be a ``main(argv)`` returning an exit code, and ``--help`` must exit
0 with a usage line. The README tells a person to run the commands by these names, never by the
``python -m`` module path they stand for.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
# the README and the pages of docs/ it links: the documentation a person reads
README = "\n".join(path.read_text() for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])

# the tools the issue names (grader, audit draw, blank sheet, data fetch, model assembly,
# recording) must each have a command
REQUIRED = {"chunklab-grade", "chunklab-audit-draw", "chunklab-blank-sheet", "chunklab-data",
            "chunklab-models", "chunklab-record-answers", "chunklab-record-rerank",
            "chunklab-record-questions", "chunklab-trec", "chunklab-own"}


def target(spec: str):
    module_name, _, attribute = spec.partition(":")
    return importlib.import_module(module_name), attribute


def test_the_tools_a_person_runs_have_commands():
    assert REQUIRED <= set(SCRIPTS), sorted(REQUIRED - set(SCRIPTS))
    assert all(re.fullmatch(r"chunklab-[a-z-]+", name) for name in SCRIPTS), sorted(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_entry_point_is_a_main_taking_argv(name):
    module, attribute = target(SCRIPTS[name])
    main = getattr(module, attribute)
    assert callable(main)
    assert attribute == "main"
    parameters = list(inspect.signature(main).parameters.values())
    assert parameters and parameters[0].name == "argv" and parameters[0].default is None


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_help_exits_zero(name, capsys):
    module, attribute = target(SCRIPTS[name])
    with pytest.raises(SystemExit) as exited:
        getattr(module, attribute)(["--help"])
    assert exited.value.code in (0, None)
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_readme_runs_the_command_by_its_name(name):
    module_name = SCRIPTS[name].partition(":")[0]
    assert f"python -m {module_name}" not in README, f"README: use `{name}`, not python -m {module_name}"
    assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", README), f"README never names `{name}`"


def test_models_command_expands_all_and_refuses_unknown_names():
    from chunklab_core.llm import assemble, models

    assert assemble.chosen(["all"]) == ["mpnet", *models.MODELS]
    assert assemble.chosen(["qwen-0.5b", "all", "mpnet"]) == ["qwen-0.5b", "mpnet",
                                                              *[m for m in models.MODELS if m != "qwen-0.5b"]]
    with pytest.raises(ValueError, match="unknown model.*bogus"):
        assemble.chosen(["mpnet", "bogus"])


def test_data_command_refuses_unknown_keys(capsys):
    from chunklab_core.data import registry

    with pytest.raises(SystemExit) as exited:
        registry.main(["no-such-file"])
    assert exited.value.code == 2
    assert "unknown data file(s) no-such-file" in capsys.readouterr().err


def test_blank_sheet_command_writes_a_blank_copy_and_refuses_to_overwrite(tmp_path, capsys):
    from chunklab_core.audit import loading, sheets

    sheet = tmp_path / "sheet.csv"
    columns = ["item_id", "question", *sheets.GRADE_COLUMNS]
    rows = [{"item_id": "a1", "question": "q?", **{c: "" for c in sheets.GRADE_COLUMNS}}]
    rows[0]["grade"] = "correct"
    sheets.write_sheet_rows(sheet, columns, rows)
    out = tmp_path / "blank.csv"
    assert loading.main([str(sheet), str(out)]) == 0
    _, copied = sheets.read_sheet(out)
    assert copied[0]["item_id"] == "a1" and all(copied[0][c] == "" for c in sheets.GRADE_COLUMNS)
    assert loading.main([str(sheet), str(out)]) == 1
    assert "exists" in capsys.readouterr().err
