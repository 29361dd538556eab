"""The generation stage evaluator: your LLM's answers, scored with no LLM judge.

Reused from ``answers.metrics`` (post 05's numbers, the same functions): ``exact_match``,
``token_precision`` / ``token_recall`` / ``token_f1`` (SQuAD v1.1, SQuAD-normalised tokens),
``rouge_l_f1``, ``context_grounding``, ``unsupported_number_rate`` and ``abstained``
(``is_abstention``). As in post 05, the reference metrics are not measured on an abstention
(it is counted by ``abstained``), so the example records reproduce the post's table.

New here, each a function below with its formula:

* ``required_fact_coverage``: share of the required facts found in the answer;
* ``citation_precision`` / ``citation_recall`` / ``citation_f1``: cited ids against the
  supporting (gold) ids, set-based;
* ``claim_support``: share of the answer's annotated claims marked supported (your annotation);
* ``abstention_accuracy``: 1[abstained == unanswerable] where answerability is given, and
  ``abstention_on_unanswerable``: 1[abstained] on the unanswerable questions only;
* ``task_success``: an answerable question answered with an exact match, or an unanswerable
  one abstained on;
* ``latency_p95_ms``: 95th percentile of generation latency (``common.percentile``).

Not handled: paraphrase and synonyms (that is what judges are for), claim extraction.
"""

from __future__ import annotations

from typing import Collection, Sequence

import numpy as np

from chunklab_core.answers.metrics import (context_grounding, exact_match, is_abstention, rouge_l_f1, token_prf,
                                           unsupported_number_rate)
from chunklab_core.evaluators.common import StageResult, word_tokens


def required_fact_coverage(answer: str, facts: Sequence[str]) -> float | None:
    """|{f : words(f) occur as a contiguous run in words(answer)}| / |facts| (``common.word_tokens``,
    compared as space-joined word sequences, so "30 days" is found in "within 30 days." but
    "3" is not found in "30"); ``None`` without facts or answer."""
    facts = [f for f in facts if word_tokens(f)]
    if answer is None or not facts:
        return None
    body = f" {' '.join(word_tokens(answer))} "
    return sum(f" {' '.join(word_tokens(f))} " in body for f in facts) / len(facts)


def citation_scores(cited: Collection[str], supporting: Collection[str]) -> tuple[float | None, float | None, float | None]:
    """Set-based citation precision |S n C| / |C|, recall |S n C| / |S| and F1 = 2PR/(P+R) (0
    when P + R = 0; equal to scikit-learn's ``f1_score`` of "is cited" against "is supporting"
    over the union of ids). ``None`` for precision without citations, for recall and F1 without
    supporting ids."""
    cited, supporting = set(cited), set(supporting)
    common = len(cited & supporting)
    precision = common / len(cited) if cited else None
    recall = common / len(supporting) if supporting else None
    if recall is None:
        return precision, None, None
    p = precision or 0.0
    f1 = 2 * p * recall / (p + recall) if p + recall > 0 else 0.0
    return precision, recall, f1


def claim_support(claims: Sequence[bool]) -> float | None:
    """#supported claims / #claims (your annotation of the answer's claims); ``None`` without claims."""
    claims = list(claims)
    return sum(bool(c) for c in claims) / len(claims) if claims else None


def task_success(answer: str | None, references: Sequence[str] | None, answerable: bool | None) -> float | None:
    """1 when an unanswerable question (``answerable is False``) is abstained on, or an
    answerable one is answered with ``exact_match`` 1 (an abstention on it fails); ``None``
    without an answer, or for an answerable question without references."""
    if answer is None:
        return None
    abstained = is_abstention(answer)
    if answerable is False:
        return float(abstained)
    if not references:
        return None
    return 0.0 if abstained else exact_match(answer, list(references))


def _array(values) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def evaluate_generation(qids: Sequence[str], answers: Sequence[str | None] | None = None,
                        references: Sequence[Sequence[str] | None] | None = None,
                        context_texts: Sequence[Sequence[str] | None] | None = None,
                        answerable: Sequence[bool | None] | None = None,
                        required_facts: Sequence[Sequence[str] | None] | None = None,
                        citations: Sequence[Collection[str] | None] | None = None,
                        supporting_ids: Sequence[Collection[str] | None] | None = None,
                        claims: Sequence[Sequence[bool] | None] | None = None,
                        latency_ms: Sequence[float | None] | None = None) -> StageResult:
    """Score the answers; every argument per query, ``None`` = not given."""
    n = len(qids)
    stage = StageResult("generation", list(qids))
    for name, arg in (("answers", answers), ("references", references), ("context_texts", context_texts),
                      ("answerable", answerable), ("required_facts", required_facts), ("citations", citations),
                      ("supporting_ids", supporting_ids), ("claims", claims), ("latency_ms", latency_ms)):
        if arg is not None and len(arg) != n:
            raise ValueError(f"{name} has {len(arg)} entries for {n} queries")
    none = [None] * n
    answers_ = answers if answers is not None else none
    abstained = [None if a is None else is_abstention(a) for a in answers_]
    if answers is None:
        for name in ("abstained", "exact_match", "token_precision", "token_recall", "token_f1", "rouge_l_f1",
                     "context_grounding", "unsupported_number_rate", "required_fact_coverage", "task_success",
                     "abstention_accuracy", "abstention_on_unanswerable", "citation_precision", "citation_recall",
                     "citation_f1", "claim_support"):
            stage.not_measured[name] = "answer"
    else:
        stage.values["abstained"] = _array(abstained)
        if references is not None:
            em, p, r, f, rouge = [], [], [], [], []
            for a, refs, ab in zip(answers_, references, abstained):
                if a is None or not refs or ab:
                    em.append(None), p.append(None), r.append(None), f.append(None), rouge.append(None)
                    continue
                prf = token_prf(a, list(refs))
                em.append(exact_match(a, list(refs))), rouge.append(rouge_l_f1(a, list(refs)))
                p.append(prf.precision), r.append(prf.recall), f.append(prf.f1)
            for name, values in (("exact_match", em), ("token_precision", p), ("token_recall", r), ("token_f1", f),
                                 ("rouge_l_f1", rouge)):
                stage.values[name] = _array(values)
        else:
            for name in ("exact_match", "token_precision", "token_recall", "token_f1", "rouge_l_f1"):
                stage.not_measured[name] = "reference"
        if context_texts is not None:
            joined = [None if c is None else "\n\n".join(c) for c in context_texts]
            stage.values["context_grounding"] = _array(
                None if c is None else context_grounding(a, c) for a, c in zip(answers_, joined))
            stage.values["unsupported_number_rate"] = _array(
                None if c is None else unsupported_number_rate(a, c) for a, c in zip(answers_, joined))
        else:
            stage.not_measured["context_grounding"] = stage.not_measured["unsupported_number_rate"] = "context_texts"
        if required_facts is not None:
            stage.values["required_fact_coverage"] = _array(
                None if facts is None else required_fact_coverage(a, facts) for a, facts in zip(answers_, required_facts))
        else:
            stage.not_measured["required_fact_coverage"] = "required_facts"
        if references is not None or answerable is not None:
            refs = references if references is not None else none
            able = answerable if answerable is not None else none
            stage.values["task_success"] = _array(task_success(a, rf, ok) for a, rf, ok in zip(answers_, refs, able))
        else:
            stage.not_measured["task_success"] = "reference or answerable"
        if answerable is not None:
            stage.values["abstention_accuracy"] = _array(
                None if ab is None or ok is None else float(ab == (not ok)) for ab, ok in zip(abstained, answerable))
            stage.values["abstention_on_unanswerable"] = _array(
                float(ab) if ab is not None and ok is False else None for ab, ok in zip(abstained, answerable))
        else:
            stage.not_measured["abstention_accuracy"] = stage.not_measured["abstention_on_unanswerable"] = "answerable"
        if citations is not None and supporting_ids is not None:
            scores = [(None, None, None) if c is None or s is None else citation_scores(c, s)
                      for c, s in zip(citations, supporting_ids)]
            for i, name in enumerate(("citation_precision", "citation_recall", "citation_f1")):
                stage.values[name] = _array(s[i] for s in scores)
        else:
            for name in ("citation_precision", "citation_recall", "citation_f1"):
                stage.not_measured[name] = "citations + gold_ids"
        if claims is not None:
            stage.values["claim_support"] = _array(None if c is None else claim_support(c) for c in claims)
        else:
            stage.not_measured["claim_support"] = "claims"
    if latency_ms is not None:
        stage.percentiles["latency_p95_ms"] = (_array(latency_ms), 95.0)
    else:
        stage.not_measured["latency_p95_ms"] = "latency_ms.generation"
    return stage
