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

Hostile or odd YAML (the questions file and the own-documents config both read through
:func:`parse_yaml`): nesting deeper than :data:`MAX_DEPTH` levels and aliases that expand to more
than :data:`MAX_EXPANDED_NODES` values (an "alias bomb" of a few hundred bytes would otherwise
take minutes and end in ``MemoryError``), or an alias that contains itself, are refused as a
``yaml.YAMLError`` naming the line; merge keys (``<<: *defaults``) are accepted, and a key given
after a merge overrides the merged one without counting as given twice. A JSON line nested too
deeply is a ``json.JSONDecodeError``, not a ``RecursionError``.

Not handled: the fields' meaning and the gold snippets (``loaders``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml

QUOTE_HINT = "quote it in YAML (id: \"{text}\") or write it as a JSON string"
MAX_DEPTH = 100  # nested lists/mappings; a questions file needs 4
MAX_EXPANDED_NODES = 1_000_000  # values after expanding every alias
MERGE_TAG = "tag:yaml.org,2002:merge"


def _children(node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def check_expansion(root, limit: int = MAX_EXPANDED_NODES) -> None:
    """Raise ``yaml.YAMLError`` when the composed ``root`` expands (every alias copied out) to
    more than ``limit`` nodes, or holds an alias to a node that contains it.

    Each distinct node is visited once (sizes are memoised), so the check is linear in the
    file, whatever the expansion: size(node) = 1 + the sizes of its children.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > limit:
                raise yaml.YAMLError(f"line {node.start_mark.line + 1}: its aliases expand to more than "
                                     f"{limit:,} values (an 'alias bomb'); write the values out or use "
                                     "fewer aliases")
            continue
        if key in sizes:
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise yaml.YAMLError(f"line {child.start_mark.line + 1}: an alias refers to a value that "
                                     "contains it (a value without end)")
            if id(child) not in sizes:
                stack.append((child, False))


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
        self._depth = 0
        self.max_nodes = MAX_EXPANDED_NODES

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.YAMLError(f"line {mark.line + 1}: nested more than {MAX_DEPTH} levels deep; a "
                                     "questions file or config needs a few")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_data(self):
        node = self.get_single_node()
        if node is None:
            return None
        check_expansion(node, self.max_nodes)
        return self.construct_document(node)

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == MERGE_TAG:  # <<: *anchor, merged by flatten_mapping below
                continue
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
        self.flatten_mapping(node)  # merged keys first, so the entry's own keys override them
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


def parse_yaml(text: str, max_nodes: int = MAX_EXPANDED_NODES) -> tuple[Any, list[str]]:
    """``(data, duplicate-key problems)`` of a YAML document; ``yaml.YAMLError`` if invalid or if
    its aliases expand to more than ``max_nodes`` values (a config needs far fewer than a questions file)."""
    loader = _StrictLoader(text)
    loader.max_nodes = max_nodes
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

    try:
        return json.loads(line, object_pairs_hook=pairs), duplicates
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", line, 0) from None


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
