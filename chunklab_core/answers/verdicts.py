"""One verdict vocabulary: the labels graders give, pass/fail, the binary scale, display names, confusion tables.

Every module that reads a verdict (post 05's tables, the probes, the audit, post 06) takes its
labels, its pass/fail rule and its display names from here, so each is written once.

Where the labels come from. The LLM judges' own labels are defined where a reply is parsed
(:mod:`chunklab_core.llm.judges`: ``THREE_WAY_LABELS`` = correct / partial / wrong,
``YES_NO_LABELS`` = YES / NO, ``UNPARSED``): a judge must know its labels to constrain and parse
a reply, and ``llm`` comes before ``answers`` in the stage order (a module imports only its own
and earlier stages), so ``llm.judges`` cannot import this module. This module builds on those
constants, and nothing after it spells a label again.

Scales (tuples, in display order):

* :data:`THREE_WAY` -- a three-way judge's column: correct, partial, wrong, unparsed;
* :data:`YES_NO` -- a yes/no judge's column: YES, NO, unparsed;
* :data:`GRADE_LABELS` -- a grade on an audit sheet (a person or a model grader): correct, partial, wrong;
* :data:`BINARY` -- the "correct vs not" scale every grader is compared on: correct, not correct,
  unparsed (:data:`BINARY_GRADES` without ``unparsed``, for grades, which are never unparsed).

Pass/fail, one rule (:func:`passes`): a verdict passes an answer when it is ``correct`` or
``YES`` (with ``lenient=True`` a ``partial`` passes too); ``partial``, ``wrong`` and ``NO``
fail it; ``unparsed`` never passes. Three mappings put labels on two sides; they differ only
in what becomes of a label that neither passes nor fails:

* :func:`pass_fail` -- ``pass`` / ``fail``, any other label unchanged (a stratum of the audit
  sample keeps ``unparsed`` and ``missing`` as patterns of their own);
* :func:`binary_labels` -- ``correct`` / ``not correct`` / ``unparsed``; any other label raises
  (post 06: an unparsed verdict is neither a pass nor a fail, so it counts as a disagreement);
* :func:`pass_or_fail` -- ``pass`` / ``fail``, ``unparsed`` fails (post 05: unparsed verdicts
  count as not passed and stay in every denominator); :func:`passed` is its 0/1 score.

Display names (:func:`grader_name`): ``judge_qwen15_yesno`` (a verdict column) and
``qwen15_yesno`` (a probe key, the ``judge`` column of ``data/05_probes.csv``) -> "1.5B YES/NO
judge", ``reference_grader`` -> "rule-based reference grader": one name for a judge in every
post (post 06 used to call the same judges "qwen15 yes/no", "reference grader"). A name has no
comma and no parenthesis, so it sits in a list or before a parenthesis without ambiguity;
:func:`sentence_start` capitalises one that opens a sentence. The keys stay the identifiers
tables are joined on; only what is displayed changes.

Confusion tables (:func:`verdict_confusion`): counts per (label of a, label of b), each axis on
its grader's own scale, built by the one builder
:func:`chunklab_core.stats.agreement.confusion_table` (which raises on a label outside a scale:
nothing is dropped silently).

Not handled: parsing replies (``llm.judges``), agreement statistics (``stats.agreement``),
reading grades off sheets (``audit.sheets``, which takes :data:`GRADE_LABELS` from here).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from chunklab_core.llm.judges import THREE_WAY_LABELS, UNPARSED, YES_NO_LABELS

CORRECT, PARTIAL, WRONG = THREE_WAY_LABELS
YES, NO = YES_NO_LABELS
NOT_CORRECT = "not correct"
PASS, FAIL = "pass", "fail"

THREE_WAY = (*THREE_WAY_LABELS, UNPARSED)
YES_NO = (*YES_NO_LABELS, UNPARSED)
GRADE_LABELS = THREE_WAY_LABELS
BINARY_GRADES = (CORRECT, NOT_CORRECT)
BINARY = (*BINARY_GRADES, UNPARSED)

PASS_LABELS = frozenset({CORRECT, YES})
FAIL_LABELS = frozenset({PARTIAL, WRONG, NO})

YESNO_SUFFIX = "_yesno"
REFERENCE_COLUMN = "reference_grader"
REFERENCE_NAME = "rule-based reference grader"
JUDGE_NAMES = {"qwen15": "1.5B", "qwen05": "0.5B"}  # display names of the default judges' short names
PROMPT_NAMES = {"3way": "three-way", "yesno": "YES/NO"}


def _passing(lenient: bool) -> frozenset:
    return PASS_LABELS | {PARTIAL} if lenient else PASS_LABELS


def passes(label, lenient: bool = False) -> bool:
    """True when the verdict ``label`` passes the answer: ``correct`` or ``YES`` (lenient: also ``partial``)."""
    return label in _passing(lenient)


def pass_fail(label: str) -> str:
    """``pass`` for correct/YES, ``fail`` for partial/wrong/NO; anything else (``unparsed``,
    ``missing``) unchanged, so it stays a pattern of its own."""
    return PASS if passes(label) else FAIL if label in FAIL_LABELS else label


def binary_labels(labels, lenient: bool = False) -> np.ndarray:
    """Map verdicts to ``correct`` / ``not correct`` / ``unparsed``.

    ``correct`` and ``YES`` -> ``correct``; ``partial``, ``wrong`` and ``NO`` -> ``not correct``
    (with ``lenient=True`` a ``partial`` counts as ``correct``); ``unparsed`` stays itself.
    Any other label raises, so nothing is silently re-labelled.
    """
    passing = _passing(lenient)
    failing = FAIL_LABELS - passing
    values = np.asarray(labels, dtype=object)
    unknown = sorted({str(v) for v in values} - passing - failing - {UNPARSED})
    if unknown:
        raise ValueError(f"unknown verdict label(s) {unknown}")
    return np.where(np.isin(values, list(passing)), CORRECT,
                    np.where(values == UNPARSED, UNPARSED, NOT_CORRECT)).astype(object)


def binary_scores(labels, lenient: bool = False) -> np.ndarray:
    """1.0 where :func:`binary_labels` says ``correct``, else 0.0 (``unparsed`` is not a pass)."""
    return (binary_labels(labels, lenient) == CORRECT).astype(float)


def passed(labels) -> np.ndarray:
    """1.0 where a verdict passes the answer (``correct`` or ``YES``), else 0.0.

    Any other value (``partial``, ``unparsed``, a missing verdict) counts as not passed, so it
    stays in every denominator.
    """
    return np.isin(np.asarray(labels, dtype=object), list(PASS_LABELS)).astype(float)


def pass_or_fail(labels) -> np.ndarray:
    """``pass`` / ``fail`` per verdict by :func:`passed` (``unparsed`` fails)."""
    return np.where(passed(labels) == 1.0, PASS, FAIL)


def is_yesno(column: str, yesno_columns: Sequence[str] | None = None) -> bool:
    """Whether a verdict column holds a yes/no judge's labels: named in ``yesno_columns`` when
    given, else by its name (``judge_<name>_yesno``)."""
    return column in yesno_columns if yesno_columns is not None else column.endswith(YESNO_SUFFIX)


def scale_of(column: str, yesno_columns: Sequence[str] | None = None) -> tuple[str, ...]:
    """The labels a verdict column may hold: :data:`YES_NO` or :data:`THREE_WAY` (see :func:`is_yesno`)."""
    return YES_NO if is_yesno(column, yesno_columns) else THREE_WAY


def grader_name(key: str) -> str:
    """Display name of a grader's key: "<name> <prompt> judge", or the reference grader's name.

    ``key`` is a verdict column ``judge_<short name>_<prompt>`` or a probe key ``<short
    name>_<prompt>`` (``<prompt>`` one of :data:`PROMPT_NAMES`' keys). The default judges'
    short names read as their sizes ("1.5B YES/NO judge"); any other judge (e.g. an Ollama
    model the notebook's ``JUDGES`` names ``gptoss``) keeps its short name ("gptoss three-way
    judge"). Any other key is returned unchanged.
    """
    if key == REFERENCE_COLUMN:
        return REFERENCE_NAME
    short, _, prompt = key.removeprefix("judge_").rpartition("_")
    if short and prompt in PROMPT_NAMES:
        return f"{JUDGE_NAMES.get(short, short)} {PROMPT_NAMES[prompt]} judge"
    return key


def sentence_start(text: str) -> str:
    """``text`` with its first character upper-cased, for a name that opens a sentence
    ("rule-based reference grader ..." -> "Rule-based reference grader ..."); the rest unchanged."""
    return text[:1].upper() + text[1:]


def verdict_confusion(a, b, labels_a: Sequence[str], labels_b: Sequence[str],
                      names: tuple[str, str] = ("a", "b")):
    """Counts per (label of ``a``, label of ``b``): rows ``labels_a``, columns ``labels_b``, every
    label shown (zeros kept); the axes are named ``names``.

    Built by :func:`chunklab_core.stats.agreement.confusion_table`; raises ``ValueError`` for a
    label outside its scale, so nothing is dropped silently.
    """
    from chunklab_core.stats.agreement import confusion_table

    return confusion_table(a, b, list(labels_a), names, column_labels=list(labels_b))
