"""Prose templates (chunklab_core.reports.templates): reading, filling, and the errors that keep
a template and its report in step; every shipped template file parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from chunklab_core.reports.templates import TemplateError, Templates, read_templates, unwrap

ROOT = Path(__file__).resolve().parents[1]


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "prose.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_fill_joins_wrapped_lines_and_keeps_quotes_and_lists(tmp_path):
    path = _write(tmp_path, "<!-- one -->\nκ is {kappa}\non {n} items.\n\n<!-- two -->\n"
                            "**{item}**\n> **Question:** {q}\n>\n> **Answer:** {a}\n"
                            "- first\n  wrapped\n- second {{literal}}\n")
    prose = Templates(path.with_name("report.py"), "prose.md")
    assert prose.fill("one", kappa="0.41 [0.20, 0.50]", n=30) == "κ is 0.41 [0.20, 0.50] on 30 items."
    assert prose.fill("two", item="A001", q="Who?", a="Ann {x}") == (
        "**A001**\n> **Question:** Who?\n>\n> **Answer:** Ann {x}\n- first wrapped\n- second {literal}")
    assert unwrap("a\n\nb") == "a\n\nb"


def test_errors_name_the_file_and_the_template(tmp_path):
    prose = Templates(_write(tmp_path, "<!-- one -->\n{a} and {b}\n<!-- spec -->\n{x:.2f}\n"), "prose.md")
    with pytest.raises(TemplateError, match=r"prose.md, template 'one': values not passed: \['b'\]"):
        prose.fill("one", a=1)
    with pytest.raises(TemplateError, match=r"values passed but not used: \['c'\]"):
        prose.fill("one", a=1, b=2, c=3)
    with pytest.raises(TemplateError, match="not a plain name"):
        prose.fill("spec", x=1.0)
    with pytest.raises(TemplateError, match="no template 'three'"):
        prose.fill("three")
    with pytest.raises(TemplateError, match="defined twice"):
        read_templates(_write(tmp_path, "<!-- a -->\nx\n<!-- a -->\ny\n"))
    with pytest.raises(TemplateError, match="text before the first"):
        read_templates(_write(tmp_path, "stray\n<!-- a -->\nx\n"))
    with pytest.raises(TemplateError, match="no template"):
        read_templates(_write(tmp_path, "just text\n"))


@pytest.mark.parametrize("path", sorted((ROOT / "chunklab_core" / "reports").rglob("*.md")),
                         ids=lambda p: p.name)
def test_every_shipped_template_parses_with_plain_placeholders(path):
    from chunklab_core.reports.templates import placeholders

    templates = read_templates(path)
    assert templates and all(text for text in templates.values())
    for text in templates.values():
        placeholders(text)  # raises on a format spec or an expression


def test_every_template_is_used_by_its_module():
    """A template no code fills is dead prose: each name appears in the module beside its file."""
    for path in sorted((ROOT / "chunklab_core" / "reports").rglob("*.md")):
        code = path.with_suffix(".py").read_text(encoding="utf-8")
        unused = [name for name in read_templates(path) if f'"{name}"' not in code]
        assert not unused, f"{path.name}: templates never filled by {path.with_suffix('.py').name}: {unused}"
