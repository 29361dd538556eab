"""Reading a questions file strictly: duplicate keys and ids that YAML would rewrite are errors.

Handles: :func:`parse_yaml` (PyYAML's safe loader, plus: a key given twice in one mapping is
reported with both line numbers instead of silently keeping the last value, and an unquoted
``id`` that YAML would turn into something other than the text written -- ``007`` -> 7,
``0x1F`` -> 31, ``1_000`` -> 1000, ``01`` colliding with ``1``, ``2024-01-02`` -> a date,
``1.5`` -> a float, ``yes``/``on`` -> a boolean -- is kept as :class:`RawId`, the text as
written, so validation can name it and say to quote it); :func:`parse_json_line` (one JSON
object, duplicate keys reported); :func:`raw_id_problem` (what is wrong with an id value, with
a quoting hint, or None). A plain decimal integer id (``id: 12``) reads back as written and
stays accepted (it becomes the string ``"12"``).

Not handled: the fields' meaning and the gold snippets (``loaders``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml

QUOTE_HINT = "quote it in YAML (id: \"{text}\") or write it as a JSON string"


@dataclass(frozen=True)
class RawId:
    """An unquoted YAML id that does not read back as written: its text and YAML's value."""

    text: str
    value: Any

    def __str__(self) -> str:
        return self.text


class _StrictLoader(yaml.SafeLoader):
    """Safe loader that records duplicate keys and keeps rewritten ids as :class:`RawId`."""

    def __init__(self, stream):
        super().__init__(stream)
        self.duplicates: list[str] = []

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: PyYAML itself reports it below
                continue
            if first is not None:
                self.duplicates.append(f"line {line}: key {key!r} given twice in one entry (first on "
                                       f"line {first}); YAML would keep only the last value")
            else:
                seen[key] = line
        mapping = super().construct_mapping(node, deep=deep)
        for key_node, value_node in node.value:
            if (isinstance(key_node, yaml.ScalarNode) and key_node.value == "id"
                    and isinstance(value_node, yaml.ScalarNode) and value_node.style is None
                    and value_node.tag != "tag:yaml.org,2002:str"):
                value = mapping.get("id")
                plain_int = (isinstance(value, int) and not isinstance(value, bool)
                             and str(value) == value_node.value)
                if value is not None and not plain_int:
                    mapping["id"] = RawId(value_node.value, value)
        return mapping


def parse_yaml(text: str) -> tuple[Any, list[str]]:
    """``(data, duplicate-key problems)`` of a YAML document; ``yaml.YAMLError`` if invalid."""
    loader = _StrictLoader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    return data, loader.duplicates


def parse_json_line(line: str) -> tuple[Any, list[str]]:
    """``(value, duplicate-key problems)`` of one JSON line; ``json.JSONDecodeError`` if invalid."""
    duplicates: list[str] = []

    def pairs(items):
        seen = set()
        for key, _ in items:
            if key in seen:
                duplicates.append(f"key {key!r} given twice in one entry; JSON readers keep only the last value")
            seen.add(key)
        return dict(items)

    return json.loads(line, object_pairs_hook=pairs), duplicates


def raw_id_problem(qid: Any) -> str | None:
    """What is wrong with a question's id value (with a quoting hint), or None when it is fine."""
    if qid is None or qid == "":
        return "missing id (every question needs a unique string id)"
    if isinstance(qid, RawId):
        kind = type(qid.value).__name__
        kind = {"bool": "a boolean", "int": "an integer", "float": "a number", "date": "a date",
                "datetime": "a date and time"}.get(kind, kind)
        return (f"id {qid.text} is read by YAML as {kind} ({qid.value}), not as the text written; "
                + QUOTE_HINT.format(text=qid.text))
    if isinstance(qid, bool):
        return f"id {qid!r} is a boolean, not a string; " + QUOTE_HINT.format(text=str(qid).lower())
    if isinstance(qid, float):
        return f"id {qid!r} is a number, not a string; " + QUOTE_HINT.format(text=qid)
    if isinstance(qid, int) or isinstance(qid, str):
        return None
    return f"id {qid!r} is {type(qid).__name__}, not a string; " + QUOTE_HINT.format(text=qid)
