"""Class 3 of issue 49: every number from outside is bounded before use, across every command.

A command's numeric option, a config key, a notebook parameter that reaches a formula: refused with
the allowed range, never clamped or replaced by a default; config keys of mixed types and alias
bombs give the project's short message.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from chunklab_core.core import bounds
from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.data.loaders import ValidationError
from chunklab_core.own import config as own_config
from chunklab_core.stats import bootstrap

SOURCES = [p for folder in ("chunklab_core", "scripts") for p in sorted((PROJ_ROOT / folder).rglob("*.py"))
           if not p.name.startswith("bench_")]


def _numeric_options_without_bounds(path: Path, root: Path = PROJ_ROOT) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            for keyword in node.keywords:
                if keyword.arg == "type" and isinstance(keyword.value, ast.Name) and keyword.value.id in ("int", "float"):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_every_numeric_option_of_every_command_is_bounded():
    """A walk over every command's parser source: no option is a bare int or float."""
    assert len(SOURCES) > 50
    unbounded = [where for path in SOURCES for where in _numeric_options_without_bounds(path)]
    assert not unbounded, f"numeric options without bounds.int_in/float_in: {unbounded}"


def test_the_walk_finds_a_bare_int(tmp_path):
    source = tmp_path / "cmd.py"
    source.write_text("import argparse\np = argparse.ArgumentParser()\np.add_argument('--n', type=int)\n"
                      "p.add_argument('--m', type=float, default=1)\np.add_argument('--x', type=str)\n")
    assert _numeric_options_without_bounds(source, tmp_path) == ["cmd.py:3", "cmd.py:4"]


COMMANDS = [  # (module, argv): one bad number each, on every kind of command
    ("chunklab_core.own.cli", ["run", "d", "q", "--resamples", "0"]),
    ("chunklab_core.own.cli", ["answers", "d", "q", "--k", "0"]),
    ("chunklab_core.own.cli", ["answers", "d", "q", "--resamples", "1000000001"]),
    ("chunklab_core.own.cli", ["audit", "draw", "--half-width", "0"]),
    ("chunklab_core.own.cli", ["audit", "draw", "--half-width", "nan"]),
    ("chunklab_core.own.cli", ["audit", "grade", "--port", "70000"]),
    ("chunklab_core.own.cli", ["audit", "report", "--seed", "-1"]),
    ("chunklab_core.evaluators.cli", ["r.jsonl", "--out", "o", "--resamples", "0"]),
    ("chunklab_core.evaluators.cli", ["r.jsonl", "--out", "o", "--k", "1", "1000000000"]),
    ("chunklab_core.evaluators.cli", ["r.jsonl", "--out", "o", "--max-tokens", "-5"]),
    ("chunklab_core.reports.website", ["--lab-resamples", "0"]),
    ("chunklab_core.reports.run_recording", ["verify", "--sample", "0"]),
    ("chunklab_core.reports.run_cluster", ["replicate", "--workers", "0"]),
    ("chunklab_core.audit.draw", ["--half-width", "inf"]),
    ("chunklab_core.audit.retest", ["--temperature", "-1"]),
    ("chunklab_core.answers.study", ["--questions", "0"]),
    ("chunklab_core.rerank.study", ["--depth", "99999999"]),
    ("chunklab_core.evaluation.trec_export", ["--k", "true"]),
    ("chunklab_core.llm.local_server", ["--n-ctx", "1"]),
    ("chunklab_core.audit.synthetic", ["--items", "1.5"]),
    ("chunklab_core.questions.generation", ["--concurrency", "100000"]),
    ("chunklab_core.own.cli", ["answers", "d", "q", "--questions", "0"]),
    ("chunklab_core.own.cli", ["answers", "d", "q", "--threads", "0"]),
    ("chunklab_core.own.cli", ["check", "--resamples", "5"]),
    ("chunklab_core.evaluators.cli", ["r.jsonl", "--out", "o", "--k", "0"]),
    ("chunklab_core.evaluators.cli", ["r.jsonl", "--out", "o", "--seed", "99999999999"]),
    ("chunklab_core.reports.run_recording", ["verify", "--max-texts", "0"]),  # make verify-runs VERIFY_MAX_TEXTS=0
    ("chunklab_core.audit.terminal_grader", ["sheet.csv", "--start", "0"]),
    ("chunklab_core.audit.workbench", ["sheet.csv", "--port", "-1"]),
]


@pytest.mark.parametrize("module, argv", COMMANDS, ids=[f"{m.rsplit('.', 1)[1]}:{' '.join(a)}" for m, a in COMMANDS])
def test_a_number_out_of_range_is_refused_with_the_range(module, argv, capsys):
    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "must be an integer from" in err or "must be a number from" in err, err
    assert "Traceback" not in err


def test_an_allowed_number_passes_and_a_bad_one_names_the_range():
    assert bounds.int_in("resamples")("200") == 200
    assert bounds.float_in("share", low=0.001, high=0.5)("0.1") == 0.1
    for text in ("0", "-3", "1e9", "abc", "1000001"):
        with pytest.raises(Exception, match=r"from 10 to 1,000,000, got"):
            bounds.int_in("resamples")(text)
    assert bounds.problem("k", True) == "k must be an integer from 1 to 10,000, got True"
    assert bounds.problem("k", 2.0).endswith("got 2.0")
    assert bounds.problem("threshold", float("nan"), "share", integer=False).endswith("got nan")


def test_a_quoted_value_is_cut_to_a_few_dozen_characters():
    assert len(bounds.shown(list(range(100_000)))) < 100
    assert bounds.shown("x" * 500).endswith("(502 characters)")
    assert bounds.shown(5) == "5"


def test_memory_problem_compares_with_the_machine():
    assert bounds.memory_bytes() > 0
    assert bounds.memory_problem("x", 10 * 2**30, available=16 * 2**30) == (
        "x needs about 10.0 GiB of memory; this machine has 16.0 GiB (at most half of it is planned for one run)")
    assert bounds.memory_problem("x", 2**30, available=16 * 2**30) is None


def test_a_notebook_parameter_reaching_the_bootstrap_is_bounded():
    """make notebooks/... PARAMS='-p RESAMPLES 0' (or 10**12) reaches the formula, not a command line."""
    for bad in (0, -1, 10**12, 2.5, True, float("nan")):
        with pytest.raises(ValueError, match="resamples must be an integer from 1 to 1,000,000"):
            bootstrap.bootstrap_ci([0.0, 1.0, 1.0], resamples=bad)
    assert bootstrap.bootstrap_ci([0.0, 1.0, 1.0], resamples=50).mean == pytest.approx(2 / 3)


def _config(tmp_path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ("k: 1000000000\n", "k must be an integer from 1 to 10,000, got 1000000000"),
    ("k: 0\n", "k must be an integer from 1 to 10,000, got 0"),
    ("k: true\n", "k must be an integer from 1 to 10,000, got True"),
    ("k: .nan\n", "k must be an integer from 1 to 10,000, got nan"),
    ("k: '5'\n", "k must be an integer from 1 to 10,000, got '5'"),
    ("resamples: 1000.0\n", "resamples must be an integer from 100 to 1,000,000, got 1000.0"),
    ("seed: 1e3\n", "seed must be an integer from 0 to 4,294,967,295, got '1e3'"),
    ("budgets: [500, true]\n", "budgets must be a non-empty list of positive integers (tokens, 1 to 10,000,000), got True"),
    ("budgets: []\n", "budgets must be a non-empty list"),
    ("resamples: 0\n", "resamples must be an integer from 100 to 1,000,000, got 0"),
    ("resamples: 99999999999\n", "resamples must be an integer from 100 to 1,000,000"),
    ("seed: -1\n", "seed must be an integer from 0 to 4,294,967,295, got -1"),
    ("seed: 1.5\n", "seed must be an integer from 0 to 4,294,967,295, got 1.5"),
    ("budgets: [500, 1000000000000]\n", "budgets must be a non-empty list of positive integers (tokens, 1 to 10,000,000), got 1000000000000"),
    ("threshold: .inf\n", "threshold must be a number in (0, 1], got inf"),
    ("recall_target: -0.5\n", "recall_target must be a number in (0, 1], got -0.5"),
])
def test_every_number_of_the_config_is_bounded(tmp_path, text, message):
    with pytest.raises(ValidationError) as error:
        own_config.load_config(_config(tmp_path, text))
    assert any(message in p for p in error.value.problems), error.value.problems


def test_unknown_keys_of_mixed_types_give_the_projects_message(tmp_path):
    path = _config(tmp_path, "2023: 1\nyes: 2\nfoo: 3\nnull: 4\n1.5: 5\n"
                             "strategies:\n  - {kind: fixed, size: 100, 2023: 1, yes: 2, bar: 3}\n")
    with pytest.raises(ValidationError) as error:
        own_config.load_config(path)
    assert error.value.problems[0].startswith("config.yaml: unknown key(s) 1.5, 2023, None, True, foo (allowed:")
    assert "strategies item 1: unknown key(s) 2023, True, bar for kind fixed" in error.value.problems[1]


def _alias_bomb(levels: int, key: str) -> str:
    text, previous = "a: &a [x,x,x,x,x,x,x,x,x]\n", "a"
    for name in "bcdefgh"[:levels]:
        text += f"{name}: &{name} [{','.join(['*' + previous] * 9)}]\n"
        previous = name
    return text + f"{key}: *{previous}\n"


@pytest.mark.parametrize("levels", [2, 4, 5, 6])
@pytest.mark.parametrize("key", ["retrievers", "strategies", "models", "budgets", "k", "nothing"])
def test_an_alias_bomb_config_is_refused_with_a_short_message(tmp_path, levels, key):
    text = _alias_bomb(levels, key)
    assert len(text) < 300
    with pytest.raises(ValidationError) as error:
        own_config.load_config(_config(tmp_path, text))
    assert len(str(error.value)) < 2_000, len(str(error.value))
    if levels >= 4:  # 9**5 values: more than a config may expand to
        assert "alias bomb" in str(error.value)


def test_validate_refuses_a_run_that_cannot_fit_in_memory(tmp_path, monkeypatch):
    from chunklab_core.own import cli

    docs = PROJ_ROOT / "examples" / "own_docs"
    config = _config(tmp_path, "k: 10000\nresamples: 1000000\n")
    problems, _, _ = cli.validate(docs, docs / "questions.yaml", config)
    assert problems == []  # this machine holds it
    monkeypatch.setattr(bounds, "memory_bytes", lambda: 2**26)  # a 64 MiB machine does not
    problems, _, _ = cli.validate(docs, docs / "questions.yaml", config)
    assert len(problems) == 1 and problems[0].startswith("config.yaml: a run of this config (")
    assert "questions x k 10,000 x" in problems[0] and "this machine has 0.1 GiB" in problems[0]
    assert "lower k or resamples" in problems[0]


def test_memory_estimate_grows_with_questions_k_and_cells():
    small = own_config.parse_config({"k": 10, "strategies": ["fixed_500"], "retrievers": ["bm25"]})
    large = own_config.parse_config({"k": 10, "strategies": ["fixed_500", "recursive_500"], "retrievers": ["bm25"]})
    assert own_config.memory_needed(large, 100)[0] > own_config.memory_needed(small, 100)[0]
    needed, how = own_config.memory_needed(small, 100)
    assert needed == 100 * 10 * 1 * own_config.BYTES_PER_RANK + 100 * small.resamples * own_config.BYTES_PER_DRAW
    assert how.startswith("100 questions x k 10 x 1 cells")
