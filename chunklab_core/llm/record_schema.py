"""What a recorded LLM call must hold, and reading a records file with every line checked.

Handles: :data:`RECORD_FIELDS` (each field of a record, its type and rule), :func:`record_problems`
(every problem of one parsed record, each naming the field), and :func:`read_records` (a JSONL
records file parsed and checked line by line: every bad line is reported at once, naming the
file, the line number and the field, *before* any call is served or made). Extra fields are
allowed (a backend may record more); missing or mistyped ones are errors, so a record without
``output``, with ``output: null``, or without its token counts or latency can never reach a
table.

The one tolerated fault is a torn **last** line: a line without its final newline that does not
parse, which is exactly what a run killed in the middle of writing a record leaves (each
record is written with one ``write``, the newline last). It is counted and reported, and the
call it held counts as not recorded. A bad line anywhere else, or a complete last line that
does not parse, is not something a kill can produce and is an error.

A JSON object that gives one field twice (``"output"`` twice: ``json`` would silently keep the
last) is an error naming the line and the field. Two complete records with the same key but a
different output are not an error (re-recording in ``mode="record"`` appends, and the last
wins) but are reported: :func:`conflicting_keys` lists them and the store warns once per file.

Messages say what happens in the current mode: in ``replay`` nothing is ever called, so a call
is never "made again"; in the recording modes the run stops before calling any model.

Not handled: repairing files (``records.CallStore`` sets a torn tail aside before appending),
the key's meaning (``records.call_key``).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any

_HEX64 = re.compile(r"[0-9a-f]{64}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _iso(value: Any) -> bool:
    try:
        datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return False
    return True


# field -> (what it must be, check)
RECORD_FIELDS: dict[str, tuple[str, Any]] = {
    "key": ("a 64-character lowercase sha256 hex string", lambda v: isinstance(v, str) and _HEX64.fullmatch(v)),
    "backend": ("a non-empty string", lambda v: isinstance(v, str) and v.strip()),
    "model": ("a non-empty string", lambda v: isinstance(v, str) and v.strip()),
    "identity": ("an object with string 'backend' and 'model' (a server backend adds what the "
                 "server reports about the model, e.g. 'served')",
                 lambda v: isinstance(v, dict) and {"backend", "model"} <= set(v)
                 and isinstance(v["backend"], str) and isinstance(v["model"], str)),
    "options": ("an object", lambda v: isinstance(v, dict)),
    "attempt": ("an integer >= 1", lambda v: _is_int(v) and v >= 1),
    "output": ("a string (the model's reply text)", lambda v: isinstance(v, str)),
    "latency_s": ("a number of seconds >= 0", lambda v: _is_number(v) and v >= 0),
    "prompt_tokens": ("an integer >= 0, or null when the backend did not report it",
                      lambda v: v is None or (_is_int(v) and v >= 0)),
    "completion_tokens": ("an integer >= 0, or null when the backend did not report it",
                          lambda v: v is None or (_is_int(v) and v >= 0)),
    "timestamp": ("an ISO-8601 time string", _iso),
    "runtime": ("an object", lambda v: isinstance(v, dict)),
}


class RecordsError(ValueError):
    """A records file with bad lines; ``problems`` lists every one (file, line, field)."""

    def __init__(self, path: str | Path, problems: list[str], advice: str):
        self.path, self.problems = Path(path), list(problems)
        shown = "\n".join(f"  - {p}" for p in self.problems[:50])
        more = f"\n  ... and {len(self.problems) - 50} more" if len(self.problems) > 50 else ""
        super().__init__(f"{path}: {len(self.problems)} bad recorded call(s):\n{shown}{more}\n{advice}")


class _RepeatedField(ValueError):
    pass


def _no_repeated_fields(pairs: list[tuple[str, Any]]) -> dict:
    """``object_pairs_hook`` for :func:`json.loads`: an object naming a field twice is an error."""
    seen: dict[str, Any] = {}
    for name, value in pairs:
        if name in seen:
            raise _RepeatedField(f"field {name!r} is given twice in one record (JSON would keep only "
                                 "the last; which one is meant cannot be told)")
        seen[name] = value
    return seen


def conflicting_keys(records: list[tuple[int, dict]]) -> list[tuple[str, list[int]]]:
    """``[(key, [line numbers])]`` of keys recorded more than once with different outputs."""
    lines: dict[str, list[int]] = {}
    outputs: dict[str, set[str]] = {}
    for number, record in records:
        lines.setdefault(record["key"], []).append(number)
        outputs.setdefault(record["key"], set()).add(record["output"])
    return [(key, lines[key]) for key in lines if len(outputs[key]) > 1]


def conflict_message(path: Path, conflicts: list[tuple[str, list[int]]]) -> str:
    """The warning for keys recorded with different outputs (the last record is served)."""
    shown = "; ".join(f"key {key[:12]}... on lines {', '.join(map(str, numbers))}"
                      for key, numbers in conflicts[:5])
    more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
    return (f"{path}: {len(conflicts)} call(s) recorded more than once with different outputs "
            f"({shown}{more}); the last record of each is served. If the file was not re-recorded "
            "on purpose (mode='record'), it was edited or two files were joined: check `git diff`")


def record_problems(record: Any) -> list[str]:
    """Every problem of one parsed record, each starting with the field it concerns."""
    if not isinstance(record, dict):
        return [f"the line is a JSON {type(record).__name__}, not an object"]
    problems = []
    for name, (what, check) in RECORD_FIELDS.items():
        if name not in record:
            problems.append(f"field {name!r} is missing (must be {what})")
        elif not check(record[name]):
            problems.append(f"field {name!r} is {json.dumps(record[name])[:60]}, must be {what}")
    return problems


def mode_advice(mode: str | None) -> str:
    """What happens now, said for the mode the records are read in."""
    if mode == "replay":
        return ("Replay mode calls no model, so nothing will be recorded again: fix or remove the "
                "line(s) named above (the file is under version control: `git diff` shows what changed).")
    return ("Nothing was called: the run stopped before any model call. Fix or remove the line(s) "
            "named above; a removed call is made again and recorded when the run resumes.")


def torn_message(path: Path, line: int, mode: str | None) -> str:
    """The warning for a torn last line, in the words of the current mode."""
    then = ("replay mode treats the call it held as not recorded (it is reported missing, never run)"
            if mode == "replay" else "the call it held will be made again and recorded")
    return (f"{path}: line {line} is a torn last record (a run killed while writing it); it is ignored "
            f"and {then}")


def read_records(path: str | Path, mode: str | None = None) -> tuple[list[tuple[int, dict]], int | None]:
    """``([(line number, record)], torn last line number or None)`` of a records file.

    Raises :class:`RecordsError` listing every bad line (see the module docstring).
    """
    path = Path(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    last_unterminated = lines[-1] != b""
    if not last_unterminated:
        lines = lines[:-1]
    records, problems, torn = [], [], None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():  # a blank line holds nothing to lose
            continue
        try:
            record = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_repeated_fields)
        except UnicodeDecodeError as exc:
            problems.append(f"line {number}: not UTF-8 (byte offset {exc.start} in the line)")
            continue
        except _RepeatedField as exc:
            problems.append(f"line {number}: {exc}")
            continue
        except ValueError as exc:
            if number == len(lines) and last_unterminated:
                torn = number
            else:
                problems.append(f"line {number}: not valid JSON ({exc})")
            continue
        own = record_problems(record)
        if own and number == len(lines) and last_unterminated:
            torn = number  # cut exactly at a value boundary: still a torn write
            continue
        problems += [f"line {number}: {p}" for p in own]
        if not own:
            records.append((number, record))
    if problems:
        raise RecordsError(path, problems, mode_advice(mode))
    return records, torn
