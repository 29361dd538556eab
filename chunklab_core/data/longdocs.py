"""Loaders for the long-document data sets: L-Eval's NQ, QASPER and CUAD files, QMSum, Chroma.

Handles: turning each registered file (``data.registry.open_text``, checksum-verified) into a
``Corpus`` with stable ids (``nq-0003`` for the document on line 3 of the file, ``nq-0003-02``
for its third question), gold slots, evidence spans where the data set gives or implies
them, and tags that say which questions a containment metric cannot score fairly; a seeded
question sampler; and ``gold_locatability``, the count of questions whose gold occurs in
their document after case/whitespace normalisation (``text.normalize``).

Choices, stated once:

* **L-Eval duplicate rows are removed by default.** Each L-Eval file repeats some documents
  on extra lines (its "LLM"/"human" evaluation subsets): NQ 21 lines hold 20 distinct pages,
  QASPER and CUAD 23 lines hold 20 distinct texts each, and the repeated lines mostly repeat
  the same (question, answer) pairs. Left in, a retriever would see two copies of every
  chunk of those documents and the same question would be scored twice. So by default a
  document is kept once (the first line holding that exact text; ``meta["rows"]`` lists every
  line) and a question once per exact (document, question, answer); ``dedupe=False`` keeps
  the file as it is (the README's counts 21/109, 23/184, 23/154).
* **Gold** is the L-Eval ``outputs[i]`` as one slot with one alternative. Questions whose gold
  does not occur in their document (normalised) are kept and tagged ``gold-not-verbatim``.
  QASPER Yes/No and "Unanswerable" answers get *no* gold slot (a chunk containing the word
  "yes" is not evidence) and the tags ``yes-no`` / ``unanswerable``; the answer stays in
  ``answers`` for answer grading.
* **Evidence spans** are given for CUAD only: the first exact occurrence of the answer in the
  contract (falling back to a case/whitespace-insensitive match), tagged ``ambiguous-span`` if
  the answer occurs more than once. NQ short answers ("10", a date) recur all over a page and
  QASPER answers are mostly not verbatim, so spans there would be guesses.
* **QMSum** transcripts are rendered as ``"Speaker: content"`` lines joined by ``"\\n"``;
  ``meta["turn_offsets"]`` holds each turn's ``(start, end)``. Its answers are abstractive, so
  containment cannot score them: specific queries carry ``evidence_spans`` (the inclusive turn
  ranges of ``relevant_text_span`` mapped to characters), the answer in ``answers``, empty
  ``gold_slots`` and the tag ``span-only``. General ("summarise the meeting") queries are not
  loaded: their evidence is the whole transcript.
* **Chroma**: one document per corpus file; one gold slot per reference excerpt, its span
  from ``start_index``/``end_index`` (every one checked to reproduce its excerpt); tag
  ``ambiguous-span`` when an excerpt also occurs elsewhere in the corpus.

Not handled: the original (large) NQ/QASPER/CUAD releases; QASPER evidence paragraphs (this
subset has none); answer grading.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from chunklab_core.core.corpus import Corpus, Document, Question
from chunklab_core.data.registry import open_text
from chunklab_core.core.text import normalize

CHROMA_CORPORA = ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")
YES_NO = frozenset({"yes", "no"})
UNANSWERABLE = frozenset({"unanswerable"})


def _jsonl_rows(key: str) -> list[dict]:
    return [json.loads(line) for line in open_text(key).splitlines() if line.strip()]


def snippet_pattern(snippet: str) -> re.Pattern[str]:
    """Regex matching ``snippet`` with any run of whitespace for its whitespace, any case.

    It finds, with raw character offsets, what ``normalize(snippet) in normalize(text)``
    detects (``normalize`` = lower-case + collapse whitespace).
    """
    tokens = snippet.split()
    if not tokens:
        raise ValueError("cannot locate an empty or whitespace-only snippet")
    return re.compile(r"\s+".join(map(re.escape, tokens)), re.IGNORECASE)


def locate(text: str, snippet: str) -> list[tuple[int, int]]:
    """All non-overlapping occurrences ``[(start, end), ...]`` of ``snippet`` in ``text``.

    Exact occurrences when there are any; otherwise case/whitespace-insensitive ones.
    """
    exact, start = [], text.find(snippet)
    while snippet and start >= 0:
        exact.append((start, start + len(snippet)))
        start = text.find(snippet, start + len(snippet))
    if exact:
        return exact
    return [m.span() for m in snippet_pattern(snippet).finditer(text)] if snippet.strip() else []


def _nq_title(text: str) -> str:
    match = re.search(r"<H1>(.*?)</H1>", text)
    return match.group(1).strip() if match else ""


def _leval_corpus(
    key: str,
    prefix: str,
    source: str,
    dedupe: bool,
    tagger: Callable[[str, str], tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]],
    with_spans: bool = False,
    title: Callable[[str], str] = lambda text: "",
) -> Corpus:
    """Shared L-Eval parsing; ``tagger(answer, normalised_doc)`` -> (gold_slots, tags)."""
    documents: list[Document] = []
    questions: list[Question] = []
    doc_of_text: dict[str, Document] = {}
    seen_questions: set[tuple[str, str, str]] = set()
    for row_index, row in enumerate(_jsonl_rows(key)):
        text = row["input"]
        if len(row["instructions"]) != len(row["outputs"]):
            raise ValueError(f"{key} line {row_index}: {len(row['instructions'])} instructions "
                             f"but {len(row['outputs'])} outputs")
        doc = doc_of_text.get(text) if dedupe else None
        if doc is None:
            doc = Document(f"{prefix}-{row_index:04d}", text, title(text), {"rows": [], "leval": []})
            documents.append(doc)
            doc_of_text[text] = doc
        doc.meta["rows"].append(row_index)
        doc.meta["leval"].append({"source": row["source"], "evaluation": row["evaluation"]})
        normalized_doc = normalize(text)
        for q_index, (query, answer) in enumerate(zip(row["instructions"], row["outputs"])):
            if dedupe and (text, query, answer) in seen_questions:
                continue
            seen_questions.add((text, query, answer))
            gold_slots, tags = tagger(answer, normalized_doc)
            spans: tuple[tuple[str, int, int], ...] = ()
            if with_spans:
                occurrences = locate(text, answer)
                if not occurrences:
                    raise ValueError(f"{key} line {row_index} question {q_index}: answer not found in the document")
                spans = ((doc.doc_id, *occurrences[0]),)
                tags += ("ambiguous-span",) if len(occurrences) > 1 else ()
            questions.append(Question(
                qid=f"{prefix}-{row_index:04d}-{q_index:02d}",
                text=query, doc_id=doc.doc_id, gold_slots=gold_slots, answers=(answer,),
                evidence_spans=spans, source=source, tags=tags,
            ))
    return Corpus(key if dedupe else f"{key}-raw", documents, questions)


def _verbatim_tagger(answer: str, normalized_doc: str):
    tags = () if normalize(answer) in normalized_doc else ("gold-not-verbatim",)
    return ((answer,),), tags


def _qasper_tagger(answer: str, normalized_doc: str):
    key = normalize(answer)
    if key in YES_NO:
        return (), ("yes-no",)
    if key in UNANSWERABLE:
        return (), ("unanswerable",)
    return _verbatim_tagger(answer, normalized_doc)


def load_nq_longdocs(dedupe: bool = True) -> Corpus:
    """Natural Questions long Wikipedia pages via L-Eval (20 distinct pages, 104 questions;
    ``dedupe=False``: 21 lines, 109 questions). NQ's HTML-like tokens stay in the text."""
    return _leval_corpus("nq-longdocs", "nq", "search-query", dedupe, _verbatim_tagger, title=_nq_title)


def load_qasper_papers(dedupe: bool = True) -> Corpus:
    """QASPER papers via L-Eval (20 distinct papers, 161 questions; raw 23 lines, 184)."""
    return _leval_corpus("qasper-papers", "qasper", "practitioner (title+abstract only)", dedupe, _qasper_tagger)


def load_cuad_contracts(dedupe: bool = True) -> Corpus:
    """CUAD contracts via L-Eval (20 distinct contracts, 130 questions; raw 23 lines, 154),
    with the answer's first occurrence as evidence span."""
    return _leval_corpus("cuad-contracts", "cuad", "lawyer template", dedupe, _verbatim_tagger, with_spans=True)


def render_transcript(turns: Sequence[dict]) -> tuple[str, list[tuple[int, int]]]:
    """``"Speaker: content"`` lines joined by ``"\\n"`` and each line's ``(start, end)``."""
    lines = [f"{turn['speaker']}: {turn['content']}" for turn in turns]
    offsets, cursor = [], 0
    for line in lines:
        offsets.append((cursor, cursor + len(line)))
        cursor += len(line) + 1
    return "\n".join(lines), offsets


def load_qmsum() -> Corpus:
    """QMSum test split: 35 transcripts, 244 specific queries with turn-range evidence spans."""
    documents: list[Document] = []
    questions: list[Question] = []
    for meeting_index, meeting in enumerate(_jsonl_rows("qmsum-test")):
        doc_id = f"qmsum-{meeting_index:04d}"
        text, offsets = render_transcript(meeting["meeting_transcripts"])
        documents.append(Document(doc_id, text, "", {"turn_offsets": offsets}))
        for q_index, item in enumerate(meeting["specific_query_list"]):
            spans = []
            for first, last in item["relevant_text_span"]:
                first, last = int(first), int(last)
                if not 0 <= first <= last < len(offsets):
                    raise ValueError(f"QMSum {doc_id} query {q_index}: turn range [{first}, {last}] "
                                     f"outside the {len(offsets)} turns")
                spans.append((doc_id, offsets[first][0], offsets[last][1]))
            questions.append(Question(
                qid=f"{doc_id}-{q_index:02d}", text=item["query"], doc_id=doc_id, gold_slots=(),
                answers=(item["answer"],), evidence_spans=tuple(spans),
                source="annotator (query-focused, after reading the transcript)", tags=("span-only",),
            ))
    return Corpus("qmsum", documents, questions)


def load_chroma(corpus_ids: Iterable[str] | None = None) -> Corpus:
    """Chroma's chunking-evaluation corpora (all five: 472 questions, 790 reference excerpts)."""
    wanted = CHROMA_CORPORA if corpus_ids is None else tuple(corpus_ids)
    unknown = sorted(set(wanted) - set(CHROMA_CORPORA))
    if unknown or not wanted:
        raise ValueError(f"unknown Chroma corpus ids {unknown}; choose from {', '.join(CHROMA_CORPORA)}")
    chosen = [cid for cid in CHROMA_CORPORA if cid in wanted]
    documents = {cid: Document(f"chroma-{cid}", open_text(f"chroma-{cid}"), cid) for cid in chosen}
    questions: list[Question] = []
    counters = dict.fromkeys(chosen, 0)
    for row in csv.DictReader(io.StringIO(open_text("chroma-questions"), newline="")):
        cid = row["corpus_id"]
        if cid not in documents:
            continue
        doc = documents[cid]
        slots, spans, ambiguous = [], [], False
        for ref in json.loads(row["references"]):
            start, end, content = ref["start_index"], ref["end_index"], ref["content"]
            if doc.text[start:end] != content:
                raise ValueError(f"Chroma {cid} question {row['question']!r}: [{start}, {end}) does not "
                                 f"reproduce its reference excerpt")
            slots.append((content,))
            spans.append((doc.doc_id, start, end))
            ambiguous |= doc.text.count(content) > 1
        questions.append(Question(
            qid=f"chroma-{cid}-{counters[cid]:03d}", text=row["question"], doc_id=doc.doc_id,
            gold_slots=tuple(slots), answers=(), evidence_spans=tuple(spans),
            source="generated (LLM, filtered)", tags=("ambiguous-span",) if ambiguous else (),
        ))
        counters[cid] += 1
    name = "chroma" if len(chosen) == len(CHROMA_CORPORA) else "chroma-" + "+".join(chosen)
    return Corpus(name, list(documents.values()), questions)


LOADERS: dict[str, Callable[[], Corpus]] = {
    "nq-longdocs": load_nq_longdocs,
    "qasper-papers": load_qasper_papers,
    "cuad-contracts": load_cuad_contracts,
    "qmsum": load_qmsum,
    "chroma": load_chroma,
}


def gold_locatability(corpus: Corpus) -> dict:
    """How many questions' gold occurs in their document after ``text.normalize``.

    A question is *locatable* when every gold slot has an alternative contained in its
    document (in any document when its ``doc_id`` is empty). Questions without gold slots
    (yes/no, unanswerable, span-only) are counted apart, never as locatable.
    """
    normalized = {d.doc_id: normalize(d.text) for d in corpus.documents}
    with_gold = [q for q in corpus.questions if q.gold_slots]
    missing = []
    for q in with_gold:
        haystacks = [normalized[q.doc_id]] if q.doc_id else list(normalized.values())
        if not all(any(normalize(alt) in h for alt in slot for h in haystacks) for slot in q.gold_slots):
            missing.append(q.qid)
    return {
        "corpus": corpus.name,
        "questions": len(corpus.questions),
        "without_gold": len(corpus.questions) - len(with_gold),
        "with_gold": len(with_gold),
        "locatable": len(with_gold) - len(missing),
        "not_locatable": len(missing),
        "not_locatable_qids": missing,
    }


def sample_questions(
    corpus: Corpus,
    n: int,
    seed: int,
    documents: str = "all",
    max_per_doc: int | None = None,
) -> Corpus:
    """Seeded sample of ``n`` questions, kept in corpus order.

    Procedure: ``order = numpy.random.default_rng(seed).permutation(len(questions))``; walk
    ``order`` and take each question unless its document already has ``max_per_doc`` taken
    (no cap when ``None``); stop at ``n``. ``documents="all"`` keeps every document as the
    haystack (the default: these corpora are small, and a smaller haystack makes retrieval
    easier than it is); ``"referenced"`` keeps only the documents the sampled questions are
    about or cite in evidence spans. Raises ``ValueError`` if ``n`` questions cannot be drawn.
    """
    if documents not in ("all", "referenced"):
        raise ValueError(f"documents must be 'all' or 'referenced', not {documents!r}")
    if n < 1 or (max_per_doc is not None and max_per_doc < 1):
        raise ValueError(f"n and max_per_doc must be >= 1 (got n={n}, max_per_doc={max_per_doc})")
    order = np.random.default_rng(seed).permutation(len(corpus.questions))
    taken: list[int] = []
    per_doc: dict[str, int] = {}
    for index in order:
        doc_id = corpus.questions[index].doc_id
        if max_per_doc is not None and per_doc.get(doc_id, 0) >= max_per_doc:
            continue
        per_doc[doc_id] = per_doc.get(doc_id, 0) + 1
        taken.append(int(index))
        if len(taken) == n:
            break
    if len(taken) < n:
        cap = "" if max_per_doc is None else f" with at most {max_per_doc} per document"
        raise ValueError(f"cannot sample {n} questions from {corpus.name!r}: only {len(taken)} available{cap}")
    chosen = [corpus.questions[i] for i in sorted(taken)]
    if documents == "all":
        kept = list(corpus.documents)
    else:
        cited = {q.doc_id for q in chosen} | {span[0] for q in chosen for span in q.evidence_spans}
        kept = [d for d in corpus.documents if d.doc_id in cited]
    cap_name = "" if max_per_doc is None else f"-max{max_per_doc}"
    return Corpus(f"{corpus.name}-sample-{n}q{cap_name}-seed{seed}", kept, chosen)
