"""Prose templates: a post's sentences kept as Markdown files, filled with the values a report computes.

Handles: reading a template file (:func:`read_templates`) and filling one of its templates
(:class:`Templates`, :meth:`Templates.fill`). A template file is Markdown that lives beside
the report module that uses it (``post06/reading.md`` for ``post06/reading.py``). Each template
starts with a line ``<!-- name -->`` and runs to the next such line; blank lines around it are
dropped. Placeholders are ``{value}`` (a plain name, no format spec): the report passes every
value already written as text (numbers and intervals by :mod:`chunklab_core.core.numbers`,
verdict words by :mod:`chunklab_core.stats.claims`), so an editor changes a sentence in the
Markdown and never in Python, and Python only picks which templates apply and fills them.
Literal braces are doubled (``{{`` and ``}}``), as in :meth:`str.format`. Lines wrapped in
the file are joined with a space (:func:`unwrap`), so the filled text is one line per
paragraph, quote line or list item, whatever the file's line width.

A template that asks for a value the report does not pass, a value passed that the template
does not use, a name used twice in a file and an unknown template name are errors that name
the file and the template, so a template and its report cannot drift apart silently. Typed
numbers in templates are forbidden by ``tests/test_claims_check.py``, as in notebook markdown.

Not handled: choosing words (the report's job), rendering Markdown (the notebook does).
"""

from __future__ import annotations

import re
import string
from pathlib import Path

__all__ = ["read_templates", "Templates", "TemplateError"]

MARKER = re.compile(r"^<!--\s*([A-Za-z0-9_.\-]+)\s*-->\s*$", re.MULTILINE)


class TemplateError(ValueError):
    """A template file that is malformed, or a template filled with the wrong values."""


def read_templates(path: Path) -> dict[str, str]:
    """``name -> text`` of every template in the file at ``path`` (format: module docstring)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    marks = list(MARKER.finditer(text))
    if not marks:
        raise TemplateError(f"{path}: no template (a template starts with a line '<!-- name -->')")
    if text[:marks[0].start()].strip():
        raise TemplateError(f"{path}: text before the first '<!-- name -->' line")
    templates: dict[str, str] = {}
    for mark, following in zip(marks, marks[1:] + [None]):
        name = mark.group(1)
        if name in templates:
            raise TemplateError(f"{path}: template {name!r} is defined twice")
        end = following.start() if following is not None else len(text)
        templates[name] = text[mark.end():end].strip()
    return templates


def placeholders(text: str) -> list[str]:
    """The names of the ``{value}`` placeholders of ``text``, in order (repeats kept)."""
    names = []
    for _, field, spec, conversion in string.Formatter().parse(text):
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise TemplateError(f"placeholder {{{field}{'!' + conversion if conversion else ''}"
                                f"{':' + spec if spec else ''}}} is not a plain name; format the "
                                "value in Python and pass it as text")
        names.append(field)
    return names


class Templates:
    """The templates of one file: ``Templates(__file__, "reading.md")`` beside a report module."""

    def __init__(self, beside: str | Path, name: str):
        self.path = Path(beside).with_name(name)
        self.texts = read_templates(self.path)

    def fill(self, name: str, **values: object) -> str:
        """Template ``name`` with every placeholder replaced by ``str(values[...])``."""
        if name not in self.texts:
            raise TemplateError(f"{self.path}: no template {name!r} (have {sorted(self.texts)})")
        text = self.texts[name]
        try:
            wanted = set(placeholders(text))
        except TemplateError as error:
            raise TemplateError(f"{self.path}, template {name!r}: {error}") from None
        missing, unused = sorted(wanted - set(values)), sorted(set(values) - wanted)
        if missing or unused:
            raise TemplateError(f"{self.path}, template {name!r}: "
                                + "; ".join(part for part in (
                                    f"values not passed: {missing}" if missing else "",
                                    f"values passed but not used: {unused}" if unused else "")
                                    if part))
        return unwrap(text.format(**{key: str(value) for key, value in values.items()}))


def unwrap(text: str) -> str:
    """Lines wrapped in the template joined by one space; a line that starts a quote (``>``), a
    list item (``-``, ``*``) or follows a blank line keeps its line break."""
    return WRAPPED.sub(" ", text)


WRAPPED = re.compile(r"(?<!\n)[ \t]*\n[ \t]*(?![>*\-\n]|$)")
