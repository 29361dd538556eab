"""One shape for every post's report code, and its sentences kept as Markdown (issue 29, item 6).

Shape: ``chunklab_core/reports/postNN/`` is a package for every numbered post, with
``tables.py`` (the tables it shows), ``figures.py`` when the post shows a figure, and its prose
in Markdown templates: at least one ``X.md`` beside an ``X.py`` that fills it
(``reports.templates``). Topic modules (claims, study, ...) may sit beside them.

Prose: no string literal in a post's report code (docstrings, error messages and warnings
aside) runs past ``MAX_WORDS`` words (a placeholder counts as one word): a longer literal is a
sentence, and sentences live in the templates, where an editor changes them without touching
Python. ``PENDING`` lists the report files that still build sentences in Python; the list only
shrinks.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "chunklab_core" / "reports"
SOURCES = ROOT / "notebooks" / "src"
MAX_WORDS = 15

PENDING_SHAPE: set[str] = set()

PENDING_PROSE: set[str] = set()


def _posts() -> list[str]:
    return sorted(f"post{p.name[:2]}" for p in SOURCES.glob("[0-9][0-9]_*.ipynb"))


def _shows_figures(post: str) -> bool:
    source = next(SOURCES.glob(f"{post[4:]}_*.ipynb"))
    cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
    return any("show_figure" in "".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")


def _shape_problems(post: str) -> list[str]:
    package = REPORTS / post
    if not (package / "__init__.py").exists():
        return [f"reports/{post} is not a package"]
    problems = []
    if not (package / "tables.py").exists():
        problems.append(f"reports/{post}/tables.py is missing")
    if _shows_figures(post) and not (package / "figures.py").exists():
        problems.append(f"reports/{post}/figures.py is missing (the post shows figures)")
    if not any(md.with_suffix(".py").exists() for md in package.glob("*.md")):
        problems.append(f"reports/{post} has no Markdown template beside the module that fills it")
    return problems


@pytest.mark.parametrize("post", _posts())
def test_every_post_has_the_report_shape(post):
    problems = _shape_problems(post)
    if post in PENDING_SHAPE:
        assert problems, f"reports/{post} has the shape now: take it off PENDING_SHAPE"
    else:
        assert not problems, problems


def _literal_words(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return len(node.value.split())
    parts = [v.value if isinstance(v, ast.Constant) else "X" for v in node.values]  # JoinedStr
    return len(" ".join(str(p) for p in parts).split())


def long_literals(path: Path) -> list[tuple[int, int]]:
    """(line, words) of every string literal of more than MAX_WORDS words, docstrings and
    the arguments of ``raise`` and ``warnings.warn`` aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        is_warn = isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "warn"
        if isinstance(node, ast.Raise) or is_warn:
            skip.update(id(inner) for inner in ast.walk(node))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(value) for value in node.values)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(node, ast.JoinedStr):
            words = _literal_words(node)
            if words > MAX_WORDS:
                found.append((node.lineno, words))
    return found


def _report_files() -> list[str]:
    files = list(REPORTS.glob("post[0-9][0-9].py")) + list(REPORTS.glob("post[0-9][0-9]/*.py"))
    return sorted(str(p.relative_to(REPORTS)) for p in files)


@pytest.mark.parametrize("relative", _report_files())
def test_no_sentences_in_report_code(relative):
    found = long_literals(REPORTS / relative)
    if relative in PENDING_PROSE:
        assert found, f"reports/{relative} builds no sentence in Python now: take it off PENDING_PROSE"
    else:
        assert not found, (f"reports/{relative}: string literals of more than {MAX_WORDS} words at "
                           f"(line, words) {found}; move the sentence into a Markdown template")


def test_pending_lists_name_existing_files():
    files, posts = set(_report_files()), set(_posts())
    assert PENDING_PROSE <= files, PENDING_PROSE - files
    assert PENDING_SHAPE <= posts, PENDING_SHAPE - posts


def test_the_scan_finds_a_sentence_and_skips_docstrings_and_errors(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""A docstring that is long enough to be a sentence of more than fifteen words, '
                      'which is fine."""\n'
                      'def f(x):\n'
                      '    if x:\n'
                      '        raise ValueError(f"an error message may say as much as it needs to say, '
                      'with {x} and every word it wants")\n'
                      '    return f"On {x}, the leader cannot be told apart from the next strategy, '
                      'so this sentence belongs in a template file"\n', encoding="utf-8")
    assert [line for line, _ in long_literals(sample)] == [5]
