"""Reading your pipeline's outputs: the records file, the chunk file and a TREC run + qrels pair.

Handles
-------
* :func:`read_records`: JSON Lines, one object per query. Every field but ``qid`` is optional,
  and a field may be given for some queries only (the others are "not measured" for the metrics
  that need it). Fields (``FIELDS``)::

      qid            str, unique                      query          str
      doc_id         str: the document the query is about (intervals then resample documents)
      gold_ids       [str]: relevant chunk ids        gold_snippets  str | [str | [str]]: gold slots
      gold_spans     [[doc_id, start, end]]: evidence character spans
      retrieved_ids  [str], best first                retrieved_texts [str]    retrieved_spans [[doc_id, start, end]]
      reranked_ids   [str]: the reranker's output     context_ids    [str]: the packed context, in order
      context_texts  [str]                            context_tokens number    budget_tokens number
      answer         str                              reference      str | [str]
      answerable     bool                             required_facts [str]     citations [str]
      claims         [bool] or [{"supported": bool}]  cost           number
      tokens         number, or {"prompt": n, "completion": n}
      latency_ms     {"retrieval": n, "rerank": n, "generation": n, "total": n} (any subset)

  ``gold_snippets`` takes the forms of the own-documents questions file, read by the same
  parser with the same messages (``data.loaders.parse_gold_snippets``): a string is one slot;
  a list holds slots, each a string (required) or a list of alternatives (any one fills it):
  ``["store manager", ["regional lead", "area lead"]]``. Alternatives of one answer, as SQuAD
  gives them, are one slot: ``[["Denver Broncos", "Broncos"]]``. It is kept as a list of slots.

  A bad line raises :class:`RecordsError` naming the file, the line and the field; an unknown
  field is an error too (a typo would otherwise silently measure nothing). So is a record that
  contradicts itself (:func:`contradictions`): a key given twice in one object (JSON readers keep
  the last value silently), ids and texts (or spans) of one list of unequal length, a chunk id
  listed twice in one ranking or context.
* :func:`read_chunks`: JSON Lines ``{chunk_id, doc_id, start, end, text?, metadata?}``; and
  :func:`read_documents`: ``{doc_id, text}``.
* :func:`read_trec`: a TREC run (``qid Q0 docid rank score tag``) and qrels (``qid 0 docid rel``);
  a run is ordered by score, descending, ties by docid descending (trec_eval's order); a
  judged document is relevant when ``rel > 0``.

Not handled: CSV or Parquet inputs, graded relevance.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from chunklab_core.data.loaders import parse_gold_snippets

LATENCY_KEYS = ("retrieval", "rerank", "generation", "total")


class RecordsError(ValueError):
    """A user's input file is wrong: the message names file, line and field."""


def _where(path, line: int, field: str | None = None) -> str:
    return f"{path}, line {line}" + (f", field '{field}'" if field else "")


def _sub(where: str, key: str) -> str:
    """``..., field 'latency_ms'`` -> ``..., field 'latency_ms.retrieval'``."""
    return where[:-1] + f".{key}'" if where.endswith("'") else f"{where}.{key}"


def _str(value, where):
    if not isinstance(value, str):
        raise RecordsError(f"{where}: expected a string, got {json.dumps(value)[:80]}")
    return value


def _number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RecordsError(f"{where}: expected a finite number, got {json.dumps(value)[:80]}")
    if value < 0:
        raise RecordsError(f"{where}: expected a number >= 0, got {value}")
    return float(value)


def _bool(value, where):
    if not isinstance(value, bool):
        raise RecordsError(f"{where}: expected true or false, got {json.dumps(value)[:80]}")
    return value


def _str_list(value, where):
    if not isinstance(value, list):
        raise RecordsError(f"{where}: expected a list of strings, got {json.dumps(value)[:80]}")
    for i, item in enumerate(value):
        if not isinstance(item, (str, int)) or isinstance(item, bool):
            raise RecordsError(f"{where}[{i}]: expected a string id, got {json.dumps(item)[:80]}")
    return [str(v) for v in value]


def _text_list(value, where):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordsError(f"{where}: expected a list of strings, got {json.dumps(value)[:80]}")
    return value


def _str_or_list(value, where):
    return [_str(value, where)] if isinstance(value, str) else _text_list(value, where)


def _gold_slots(value, where):
    """Gold slots through the questions file's parser (``loaders.parse_gold_snippets``), its
    messages prefixed with the file, line and field."""
    slots, problems = parse_gold_snippets(value)
    if problems:
        raise RecordsError(f"{where}: {'; '.join(problems)}")
    return [list(slot) for slot in slots]


def _spans(value, where):
    if not isinstance(value, list):
        raise RecordsError(f"{where}: expected a list of [doc_id, start, end], got {json.dumps(value)[:80]}")
    out = []
    for i, span in enumerate(value):
        ok = (isinstance(span, list) and len(span) == 3 and isinstance(span[0], str)
              and all(isinstance(x, int) and not isinstance(x, bool) for x in span[1:]) and 0 <= span[1] <= span[2])
        if not ok:
            raise RecordsError(f"{where}[{i}]: expected [doc_id, start, end] with 0 <= start <= end, "
                               f"got {json.dumps(span)[:80]}")
        out.append((span[0], span[1], span[2]))
    return out


def _claims(value, where):
    if not isinstance(value, list):
        raise RecordsError(f"{where}: expected a list of true/false or {{\"supported\": bool}}")
    out = []
    for i, claim in enumerate(value):
        if isinstance(claim, dict) and isinstance(claim.get("supported"), bool):
            out.append(claim["supported"])
        elif isinstance(claim, bool):
            out.append(claim)
        else:
            raise RecordsError(f"{where}[{i}]: expected true/false or {{\"supported\": bool}}, got {json.dumps(claim)[:80]}")
    return out


def _tokens(value, where):
    if isinstance(value, dict):
        unknown = set(value) - {"prompt", "completion"}
        if unknown or not value:
            raise RecordsError(f"{where}: expected a number or {{\"prompt\": n, \"completion\": n}}, "
                               f"got keys {sorted(value)}")
        return sum(_number(v, _sub(where, k)) for k, v in value.items())
    return _number(value, where)


def _latency(value, where):
    if not isinstance(value, dict):
        raise RecordsError(f"{where}: expected an object like {{\"retrieval\": 12.5, \"total\": 900}}")
    unknown = sorted(set(value) - set(LATENCY_KEYS))
    if unknown:
        raise RecordsError(f"{where}: unknown key(s) {unknown}; known: {list(LATENCY_KEYS)}")
    return {k: _number(v, _sub(where, k)) for k, v in value.items()}


FIELDS: dict[str, Callable] = {
    "qid": _str, "query": _str, "doc_id": _str, "gold_ids": _str_list, "gold_snippets": _gold_slots,
    "gold_spans": _spans, "retrieved_ids": _str_list, "retrieved_texts": _text_list, "retrieved_spans": _spans,
    "reranked_ids": _str_list, "context_ids": _str_list, "context_texts": _text_list,
    "context_tokens": _number, "budget_tokens": _number, "answer": _str, "reference": _str_or_list,
    "answerable": _bool, "required_facts": _text_list, "citations": _str_list, "claims": _claims,
    "cost": _number, "tokens": _tokens, "latency_ms": _latency,
}


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads``' object hook: an object whose key repeats is refused (at any depth)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


#: Fields that describe the same list item by item: given together, they must be as long.
PARALLEL = (("retrieved_ids", "retrieved_texts"), ("retrieved_ids", "retrieved_spans"),
            ("retrieved_texts", "retrieved_spans"), ("context_ids", "context_texts"))


def contradictions(record: dict, where: Callable[[str], str]) -> str | None:
    """What in one validated record contradicts itself (the project's message), or None: lists of
    ids and texts of one ranking or context of unequal length, an id listed twice in one ranking."""
    for a, b in PARALLEL:
        if a in record and b in record and len(record[a]) != len(record[b]):
            return (f"{where(b)}: {len(record[b])} items, but {a} has {len(record[a])}; they describe the same "
                    f"list item by item, so one of them is wrong (give both whole, or only one)")
    for name in ("retrieved_ids", "reranked_ids", "context_ids"):
        ids = record.get(name)
        if ids is not None and len(set(ids)) != len(ids):
            twice = next(i for i in ids if ids.count(i) > 1)
            return f"{where(name)}: {twice!r} is listed twice; a ranking or a context holds each chunk once"
    return None


def _json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    try:
        handle = path.open("rb")  # bytes: a line that is not UTF-8 is named with its number
    except OSError as err:
        raise RecordsError(f"{path}: cannot be read ({err.strerror})") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise RecordsError(f"{path}, line {number}: not UTF-8 text (byte {raw[err.start]:#04x} at column "
                                   f"{err.start + 1}); save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line, object_pairs_hook=_unique_keys)
            except json.JSONDecodeError as err:
                raise RecordsError(f"{path}, line {number}: not valid JSON ({err.msg}, column {err.colno})") from None
            except _DuplicateKey as err:
                raise RecordsError(f"{path}, line {number}: key {json.dumps(err.key)[:80]} is given twice in one "
                                   "object; JSON readers keep only the last value, so which one is meant is "
                                   "unknown: keep one") from None
            except RecursionError:
                raise RecordsError(f"{path}, line {number}: nested too deeply") from None
            if not isinstance(obj, dict):
                raise RecordsError(f"{path}, line {number}: expected a JSON object per line, got {type(obj).__name__}")
            yield number, obj


def read_records(path: str | Path, progress: Callable[[int], None] | None = None) -> list[dict]:
    """Validated records, in file order (``progress(n)`` every 10,000 lines)."""
    path = Path(path)
    records, seen = [], {}
    for number, obj in _json_lines(path):
        unknown = sorted(set(obj) - set(FIELDS))
        if unknown:
            raise RecordsError(f"{_where(path, number, unknown[0])}: unknown field; the fields are {sorted(FIELDS)}")
        if "qid" not in obj:
            raise RecordsError(f"{_where(path, number, 'qid')}: missing (every record needs a unique qid)")
        record = {name: FIELDS[name](value, _where(path, number, name)) for name, value in obj.items()
                  if value is not None}
        problem = contradictions(record, lambda field, n=number: _where(path, n, field))
        if problem:
            raise RecordsError(problem)
        if record["qid"] in seen:
            raise RecordsError(f"{_where(path, number, 'qid')}: {record['qid']!r} repeats line {seen[record['qid']]}")
        seen[record["qid"]] = number
        records.append(record)
        if progress and len(records) % 10_000 == 0:
            progress(len(records))
    if not records:
        raise RecordsError(f"{path}: no records (one JSON object per line)")
    return records


@dataclass(frozen=True)
class ChunkRecord:
    chunk_id: str
    doc_id: str
    start: int
    end: int
    text: str | None
    metadata: dict


def read_chunks(path: str | Path) -> list[ChunkRecord]:
    """Validated chunk records in file order (the row order of a ``--vectors`` file)."""
    path = Path(path)
    chunks, seen = [], {}
    for number, obj in _json_lines(path):
        unknown = sorted(set(obj) - {"chunk_id", "doc_id", "start", "end", "text", "metadata"})
        if unknown:
            raise RecordsError(f"{_where(path, number, unknown[0])}: unknown field; the fields are "
                               "chunk_id, doc_id, start, end, text, metadata")
        for field in ("chunk_id", "doc_id", "start", "end"):
            if field not in obj:
                raise RecordsError(f"{_where(path, number, field)}: missing")
        chunk_id = obj["chunk_id"]
        if not isinstance(chunk_id, (str, int)) or isinstance(chunk_id, bool):
            raise RecordsError(f"{_where(path, number, 'chunk_id')}: expected a string")
        doc_id = _str(obj["doc_id"], _where(path, number, "doc_id"))
        start, end = obj["start"], obj["end"]
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)) or not 0 <= start < end:
            raise RecordsError(f"{_where(path, number, 'start')}: expected integers 0 <= start < end, got {start}, {end}")
        text = obj.get("text")
        if text is not None:
            _str(text, _where(path, number, "text"))
        metadata = obj.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise RecordsError(f"{_where(path, number, 'metadata')}: expected an object")
        if str(chunk_id) in seen:
            raise RecordsError(f"{_where(path, number, 'chunk_id')}: {chunk_id!r} repeats line {seen[str(chunk_id)]}")
        seen[str(chunk_id)] = number
        chunks.append(ChunkRecord(str(chunk_id), doc_id, start, end, text, metadata))
    if not chunks:
        raise RecordsError(f"{path}: no chunks")
    return chunks


def read_documents(path: str | Path) -> dict[str, str]:
    """``doc_id -> text`` from JSON Lines ``{doc_id, text}``."""
    path = Path(path)
    docs: dict[str, str] = {}
    for number, obj in _json_lines(path):
        doc_id = _str(obj.get("doc_id"), _where(path, number, "doc_id"))
        if doc_id in docs:
            raise RecordsError(f"{_where(path, number, 'doc_id')}: {doc_id!r} repeats")
        docs[doc_id] = _str(obj.get("text"), _where(path, number, "text"))
    return docs


def _trec_rows(path: str | Path, layout: str, field: str, convert):
    """``(qid, docid, converted field)`` per line of a whitespace-separated TREC file whose lines
    are ``layout`` (e.g. ``'qid Q0 docid rank score tag'``); a wrong field count or an
    unconvertible ``field`` is a :class:`RecordsError` naming the line."""
    names = layout.split()
    kind = {"score": "a run line", "relevance": "a qrels line"}[field]
    wanted = {float: "a number", int: "an integer"}[convert]
    for number, line in _lines(Path(path)):
        parts = line.split()
        if len(parts) != len(names):
            raise RecordsError(f"{path}, line {number}: {kind} is '{layout}' ({len(names)} fields), got {len(parts)}")
        value = parts[names.index(field)]
        try:
            converted = convert(value)
        except ValueError:
            raise RecordsError(f"{path}, line {number}: field '{field}' is not {wanted}: {value!r}") from None
        if not math.isfinite(converted):  # a NaN score would rank first: refused, never ranked
            raise RecordsError(f"{path}, line {number}: field '{field}' is {value!r}, not a finite number")
        yield parts[0], parts[2], converted, number


def read_trec(run_path: str | Path, qrels_path: str | Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """``(ranked ids per qid, relevant ids per qid)`` from a TREC run and qrels file."""
    run: dict[str, list[tuple[float, str]]] = {}
    seen: dict[tuple[str, str], tuple[int, float]] = {}
    for qid, docid, score, number in _trec_rows(run_path, "qid Q0 docid rank score tag", "score", float):
        if (qid, docid) in seen:  # trec_eval refuses it too: which score ranks the document?
            raise RecordsError(f"{run_path}, line {number}: document {docid!r} is ranked twice for query {qid!r} "
                               f"(first on line {seen[(qid, docid)][0]}); a run ranks each document once")
        seen[(qid, docid)] = (number, score)
        run.setdefault(qid, []).append((score, docid))
    qrels: dict[str, list[str]] = {}
    judged: dict[tuple[str, str], tuple[int, int]] = {}
    for qid, docid, relevance, number in _trec_rows(qrels_path, "qid 0 docid relevance", "relevance", int):
        first = judged.get((qid, docid))
        if first is not None and (first[1] > 0) != (relevance > 0):
            raise RecordsError(f"{qrels_path}, line {number}: document {docid!r} of query {qid!r} is judged "
                               f"{relevance} here and {first[1]} on line {first[0]}; keep one judgment")
        if first is not None:
            continue
        judged[(qid, docid)] = (number, relevance)
        qrels.setdefault(qid, [])
        if relevance > 0:
            qrels[qid].append(docid)
    ranked = {q: [d for _, d in sorted(items, key=lambda x: (-x[0], _Desc(x[1])))] for q, items in run.items()}
    return ranked, qrels


class _Desc(str):
    def __lt__(self, other):  # docid descending among equal scores (trec_eval)
        return str.__gt__(self, other)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise RecordsError(f"{path}: cannot be read ({err.strerror})") from None
    except UnicodeDecodeError as err:
        raise RecordsError(f"{path}: not UTF-8 text (byte {err.start}); save the file as UTF-8") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line
