"""The user's own corpus: a folder of documents plus a questions file, validated up front.

Handles: scanning a folder (``doc_id`` = the path relative to the folder, POSIX separators;
documents sorted by it); the text of each file comes from ``document_text`` (which says how
each file type is read).

Other extensions are skipped and listed in one warning (and in the error, when there is
one: a "missing" document may be a skipped file); hidden files and folders (names starting
with ".") are skipped silently. A document with no text is an error. Symbolic links inside
the folder are followed (a linked subfolder's documents get doc_ids through the link; a
folder reached twice, e.g. through a link loop, is read once); a link that leads outside the
folder, or nowhere, is an error naming it, never read (a link to ``/etc/hostname`` is not a
document).

Questions file: YAML (``.yaml``/``.yml``: a list of mappings, or a mapping whose only key is
``questions``) or JSONL (one mapping per line). Fields: ``id``, ``query``, ``gold_snippets``,
optional ``doc`` (the doc_id the question is about), ``tags``, ``answers`` (reference answers
for answer grading). ``gold_snippets`` is a string (one slot), or a list whose items are
strings (each its own slot) or lists of alternatives (one slot, filled by any of them):
``[required, [alt1, alt2]]`` gives the slots ``(("required",), ("alt1", "alt2"))``. This is
the convention of ``gold_slots.normalize_gold``: an item's meaning never depends on its
neighbours.

Validation happens before any work and reports *every* problem at once in one
``ValidationError`` (one line each, naming the file and the question id): unreadable or
empty documents, unknown fields, duplicate ids, empty queries, missing gold, a ``doc`` that
is not in the folder, and gold snippets that cannot be found. In the file itself
(``question_file``): a key given twice in one entry, and ids that are not strings or that
YAML would rewrite (``007``, ``0x1F``, ``1_000``, dates, floats, booleans), each with a hint
to quote them. A snippet must be found in the
question's ``doc`` (or, without ``doc``, in some document) by the matcher the metrics use,
``textmatch.match_gold`` (``text.normalize`` plus number rules, whole words, fuzzy at 0.90
with a number guard), so every gold that passes can be scored -- and *every* alternative
must pass, since one that can never match is almost always a typo; the message of a snippet
found nowhere shows the closest passage and its score (``gold_diagnosis``). A snippet found only
fuzzily is accepted and listed in one warning quoting the document's own text of the match
(paste-ready). ``load_user_corpus`` then warns with ``gold_advice.corpus_advice``: documents
without headings, gold of one short word or a bare number, gold found in several documents
(suggesting ``doc:``). Nothing is written. Optional ``source`` (``user``, the default, or
``generated``: written by ``chunklab-own questions``) becomes ``Question.source``; ``checks`` (that
command's check results) is accepted and not read.

Not handled: OCR, other encodings than UTF-8, .doc/.odt/.rtf, evidence spans for user gold.
"""

from __future__ import annotations

import difflib
import json
import os
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data.document_text import (HTML_SUFFIXES, SUPPORTED_SUFFIXES, TEXT_SUFFIXES, decode_utf8, docx_to_text, extract_document, extract_text, html_to_text, pdf_to_text)
from chunklab_core.data.gold_advice import document_quote, warn_advice
from chunklab_core.data.gold_diagnosis import closest_hint
from chunklab_core.core.headings import as_meta
from chunklab_core.data.question_file import parse_json_line, parse_yaml, raw_id_problem
from chunklab_core.core.textmatch import locate_gold

QUESTION_FIELDS = ("id", "query", "gold_snippets", "doc", "tags", "answers", "source", "checks")
SOURCES = ("user", "generated")  # ``source``: who wrote the question (default user); ``checks``: kept, not read


MAX_PROBLEM_CHARS = 2_000  # one problem's characters in the message


class ValidationError(ValueError):
    """Every problem found in a user's documents and questions; ``.problems`` lists them."""

    def __init__(self, problems: list[str], where: str = "", notes: list[str] = ()):
        self.problems, self.notes = list(problems), list(notes)
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        shown = [p if len(p) <= MAX_PROBLEM_CHARS else f"{p[:MAX_PROBLEM_CHARS]}... ({len(p):,} characters)"
                 for p in problems]  # a hostile value never makes a message of megabytes
        super().__init__(f"{count}{where}; fix them all and run again:\n" + "\n".join(shown)
                         + "".join(f"\nnote: {n}" for n in notes))


def _walk_files(folder: Path) -> tuple[list[tuple[str, Path]], list[str], list[str]]:
    """``([(doc_id, path)], problems, notes)``: every file under ``folder``, links followed.

    A link is followed only when it resolves inside ``folder`` (else a problem naming it); a
    real folder or file already reached (a link loop, a second link to it) is not read again.
    Hidden names (leading ".") are skipped. Sorted by doc_id.
    """
    root = folder.resolve()
    found, problems, notes = [], [], []
    visited = {root}
    pending = [(folder, "")]
    while pending:
        current, prefix = pending.pop()
        try:
            entries = sorted(current.iterdir(), key=lambda p: p.name)
        except OSError as exc:
            problems.append(f"{prefix or '.'}: cannot be listed ({exc.strerror})")
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                target = Path(os.path.realpath(entry))
                if not target.exists():
                    problems.append(f"{rel}: broken symbolic link (to {os.readlink(entry)})")
                    continue
                if target != root and root not in target.parents:
                    problems.append(f"{rel}: symbolic link to {target}, outside the folder; refused "
                                    "(copy the file into the folder, or choose a folder that contains it)")
                    continue
            if entry.is_dir():
                real = entry.resolve()
                if real in visited:
                    notes.append(f"{rel}/: a link to a folder already read ({real.relative_to(root).as_posix() or '.'}); "
                                 "not read twice")
                    continue
                visited.add(real)
                pending.append((entry, rel + "/"))
            elif entry.is_file():
                found.append((rel, entry))
    unique, first_of = [], {}
    for rel, path in sorted(found):  # a file reached through a link too is one document
        real = path.resolve()
        if real in first_of:
            notes.append(f"{rel}: the same file as {first_of[real]}; read once")
            continue
        first_of[real] = rel
        unique.append((rel, path))
    return unique, problems, notes


def _scan_folder(
    folder: Path, exclude: tuple[Path, ...] = ()
) -> tuple[list[Document], list[str], list[str], set[str]]:
    """(documents, problems, skipped files, unreadable doc_ids) of a folder, recursively."""
    folder = Path(folder)
    if not folder.is_dir():
        return [], [f"{folder}: not a folder"], [], set()
    excluded = {p.resolve() for p in exclude}
    documents, skipped, unreadable = [], [], set()
    files, problems, notes = _walk_files(folder)
    if notes:
        warnings.warn(f"{folder}: " + "; ".join(notes), stacklevel=3)
    for rel, path in files:
        if path.resolve() in excluded:
            continue
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            skipped.append(rel)
            continue
        try:
            text, headings = extract_document(path)
        except ValueError as exc:
            problems.append(f"{rel}: {exc}")
            unreadable.add(rel)
            continue
        documents.append(Document(rel, text, path.stem, {"path": rel, "format": path.suffix.lower().lstrip("."),
                                                         "headings": as_meta(headings)}))
    if not documents and not problems:
        problems.append(f"{folder}: no supported documents ({', '.join(SUPPORTED_SUFFIXES)})")
    return documents, problems, skipped, unreadable


def _warn_skipped(folder: Path, skipped: list[str]) -> None:
    if skipped:
        warnings.warn(f"{folder}: skipped {len(skipped)} file(s) of unsupported type: {', '.join(skipped)}",
                      stacklevel=3)


def load_folder(path: str | Path, exclude: tuple[Path, ...] = ()) -> list[Document]:
    """Every supported document under ``path`` (recursively), sorted by doc_id.

    Raises ``ValidationError`` listing every unreadable or empty file; warns once listing
    the files skipped for their type. ``exclude`` names files to leave out silently.
    """
    documents, problems, skipped, _ = _scan_folder(Path(path), exclude)
    if problems:
        raise ValidationError(problems, f" in {path}", _skipped_note(skipped))
    _warn_skipped(Path(path), skipped)
    return documents


def _skipped_note(skipped: list[str]) -> list[str]:
    return ([f"skipped {len(skipped)} file(s) of unsupported type (not documents): {', '.join(skipped)}"]
            if skipped else [])


def _read_entries(path: Path) -> tuple[list[tuple[str, Any]], list[str]]:
    """``[(label, raw entry)]`` from a YAML or JSONL questions file, and file-level problems."""
    name = path.name
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".jsonl"):
        return [], [f"{name}: questions file must be .yaml, .yml or .jsonl"]
    try:
        raw = decode_utf8(path.read_bytes())
    except OSError as exc:
        return [], [f"{name}: cannot be read ({exc.strerror})"]
    except ValueError as exc:
        return [], [f"{name}: {exc}"]
    if suffix == ".jsonl":
        entries, problems = [], []
        for number, line in enumerate(raw.split("\n"), start=1):
            if line.strip():
                try:
                    entry, duplicates = parse_json_line(line)
                except json.JSONDecodeError as exc:
                    problems.append(f"{name}: line {number}: invalid JSON ({exc.msg})")
                    continue
                entries.append((f"line {number}", entry))
                problems += [f"{name}: line {number}: {d}" for d in duplicates]
        return entries, problems
    try:
        data, duplicates = parse_yaml(raw)
    except yaml.YAMLError as exc:
        return [], [f"{name}: invalid YAML ({' '.join(str(exc).split())})"]
    if duplicates:
        return [], [f"{name}: {d}" for d in duplicates]
    if isinstance(data, dict) and set(data) == {"questions"}:
        data = data["questions"]
    if not isinstance(data, list):
        return [], [f"{name}: expected a list of questions or a mapping with the single key 'questions'"]
    return [(f"entry {i}", item) for i, item in enumerate(data, start=1)], []


def _string_list(value: Any) -> tuple[str, ...] | None:
    """A string or list of strings as a tuple; ``None`` for anything else."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


_QUOTE_HINT = " (quote it in YAML: unquoted numbers, dates, yes/no and on/off are not strings)"


def parse_gold_snippets(value: Any) -> tuple[tuple[tuple[str, ...], ...], list[str]]:
    """Gold slots from the ``gold_snippets`` convention, and the problems found."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        return (), [f"gold_snippets must be a string or a list, not {type(value).__name__}{_QUOTE_HINT}"]
    slots, problems = [], []
    for item in items:
        alternatives = _string_list(item)
        if alternatives is None:
            problems.append(f"gold_snippets item {item!r} must be a string or a list of strings{_QUOTE_HINT}")
        elif not alternatives or not all(a.strip() for a in alternatives):
            problems.append(f"gold_snippets item {item!r} is empty")
        else:
            slots.append(alternatives)
    if not slots and not problems:
        problems.append("no gold snippets")
    return tuple(slots), problems


def _short(snippet: str, width: int = 80) -> str:
    flat = " ".join(snippet.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _find_snippet(snippet: str, texts: list[str]) -> tuple[bool, str]:
    """(found, note): exact anywhere, else the best fuzzy match (note quotes the document's
    own text of the match, ready to paste: ``gold_advice.document_quote``)."""
    best, best_text = None, ""
    for text in texts:
        match = locate_gold(text, snippet)  # the score of a found match; none needed for the others
        if match.found and match.method == "exact":
            return True, ""
        if match.found and (best is None or match.score > best.score):
            best, best_text = match, text
    if best is None:
        return False, ""
    quote = document_quote(best_text, snippet) or best.region
    return True, f'found only approximately (score {best.score:.2f}); the document says: "{quote}"'


def _parse_questions(
    path: Path, documents: list[Document], unreadable: frozenset[str] = frozenset()
) -> tuple[list[Question], list[str], list[str]]:
    """Questions, every problem found, and notes on fuzzy-only gold (see the module docstring)."""
    name = path.name
    entries, problems = _read_entries(path)
    texts = {d.doc_id: d.text for d in documents}
    notes: list[str] = []
    id_counts = Counter(str(e["id"]) for _, e in entries if isinstance(e, dict) and e.get("id") not in (None, ""))
    reported_duplicates: set[str] = set()
    questions = []
    for label, entry in entries:
        if not isinstance(entry, dict):
            problems.append(f"{name}: {label}: expected a mapping with fields {', '.join(QUESTION_FIELDS)}")
            continue
        qid = entry.get("id")
        id_problem = raw_id_problem(qid)
        if id_problem:
            where, qid = f"{name}: {label}", None
            problems.append(f"{where}: {id_problem}")
        else:
            qid = str(qid)
            where = f"{name}: id {qid}"
            if id_counts[qid] > 1 and qid not in reported_duplicates:
                reported_duplicates.add(qid)
                problems.append(f"{where}: duplicate id ({id_counts[qid]} questions share it)")
        own: list[str] = []
        unknown = sorted(set(entry) - set(QUESTION_FIELDS))
        if unknown:
            own.append(f"unknown field(s) {', '.join(unknown)} (allowed: {', '.join(QUESTION_FIELDS)})")
        query = entry.get("query")
        if query is not None and not isinstance(query, str):
            own.append(f"query must be a string{_QUOTE_HINT}")
        elif not query or not query.strip():
            own.append("empty query")
        slots, gold_problems = parse_gold_snippets(entry.get("gold_snippets", []))
        own += gold_problems
        tags = _string_list(entry.get("tags") or [])
        answers = _string_list(entry.get("answers") or [])
        own += [f"tags must be a string or a list of strings{_QUOTE_HINT}"] if tags is None else []
        own += [f"answers must be a string or a list of strings{_QUOTE_HINT}"] if answers is None else []
        source = entry.get("source") or "user"
        if source not in SOURCES:
            own.append(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
        doc = entry.get("doc") or ""
        if not isinstance(doc, str):
            own.append("doc must be a document path (a string)")
            doc = ""
        scope = doc
        if doc and doc not in texts and doc not in unreadable:
            close = difflib.get_close_matches(doc, list(texts), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            own.append(f"doc {doc!r} is not a document in the folder{hint}")
            scope = ""  # still check the gold, against every document
        if scope not in unreadable:  # the gold of a question about an unreadable file is not checked
            haystacks = [texts[scope]] if scope else list(texts.values())
            for snippet in (alternative for slot in slots for alternative in slot):
                found, note = _find_snippet(snippet, haystacks)
                if not found:
                    place = (f"does not occur in {scope}" if scope else
                             "occurs in no readable document" if unreadable else "occurs in no document")
                    nearby = {scope: texts[scope]} if scope else texts
                    own.append(f'gold snippet "{_short(snippet)}" {place}{closest_hint(snippet, nearby)}')
                elif note:
                    notes.append(f'{where}: gold snippet "{_short(snippet)}" {note}')
        problems += [f"{where}: {p}" for p in own]
        if qid is not None and not own:
            questions.append(Question(qid, query.strip(), doc, slots, answers, (), source, tags))
    if not entries and not problems:
        problems.append(f"{name}: no questions")
    return questions, problems, notes


def _warn_approximate(notes: list[str]) -> None:
    if notes:
        warnings.warn("gold snippets matched only approximately:\n" + "\n".join(notes), stacklevel=3)


def load_questions(path: str | Path, documents: list[Document]) -> list[Question]:
    """The validated questions of ``path`` about ``documents``, in file order.

    Raises ``ValidationError`` listing every problem (see the module docstring).
    """
    questions, problems, notes = _parse_questions(Path(path), documents)
    if problems:
        raise ValidationError(problems, f" in {path}")
    _warn_approximate(notes)
    return questions


def load_user_corpus(docs_dir: str | Path, questions_path: str | Path, name: str = "own") -> Corpus:
    """Documents of ``docs_dir`` and questions of ``questions_path``, validated together.

    The questions file is left out of the documents when it lies inside ``docs_dir``. All
    problems of both are raised in one ``ValidationError``; skipped file types are warned.
    """
    docs_dir, questions_path = Path(docs_dir), Path(questions_path)
    documents, problems, skipped, unreadable = _scan_folder(docs_dir, exclude=(questions_path,))
    questions, question_problems, notes = _parse_questions(questions_path, documents, frozenset(unreadable))
    problems += question_problems
    if problems:
        raise ValidationError(problems, f" in {docs_dir} and {questions_path}", _skipped_note(skipped))
    _warn_skipped(docs_dir, skipped)
    _warn_approximate(notes)
    corpus = Corpus(name, documents, questions)
    warn_advice(corpus)  # headings, short gold, gold in several documents (gold_advice)
    return corpus
