"""Report: how far the package's sentence rule agrees with pysbd on SQuAD v1.1 dev paragraphs.

Not a timing benchmark: an agreement report. For a seeded sample of SQuAD dev paragraphs
(``--paragraphs``, seed ``--seed``), every sentence start (at its first visible character,
the paragraph's own start left out) found by ``sentence_split.sentence_spans`` -- with the
default rule and with ``abbreviations=True`` -- is compared with those of
``pysbd.Segmenter(language="en", clean=False, char_span=True)``, taken as the reference:

* boundary precision = |ours & pysbd| / |ours|, recall = |ours & pysbd| / |pysbd|, F1;
* paragraphs split identically = share of paragraphs whose boundary sets are equal.

Prints one table (rows: the two settings); writes nothing.

Usage: python scripts/report_sentence_agreement.py [--paragraphs 1000] [--seed SEED (default: the series' seed)]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pysbd

from chunklab_core.core import bounds
from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.core.sentence_split import sentence_spans
from chunklab_core.data.squad import PARAGRAPH_SEPARATOR, load_squad_dev


def sentence_starts(text: str, spans) -> set[int]:
    """First visible character of every sentence but the first."""
    out = set()
    for start, end in spans:
        lead = len(text[start:end]) - len(text[start:end].lstrip())
        if start + lead > 0 and start + lead < len(text):
            out.add(start + lead)
    return out


def agreement(paragraphs: list[str], abbreviations: bool) -> dict:
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    common = ours_total = ref_total = identical = 0
    for text in paragraphs:
        reference = sentence_starts(text, [(s.start, s.end) for s in segmenter.segment(text)])
        ours = sentence_starts(text, sentence_spans(text, abbreviations=abbreviations))
        common += len(ours & reference)
        ours_total += len(ours)
        ref_total += len(reference)
        identical += ours == reference
    precision = common / ours_total if ours_total else float("nan")
    recall = common / ref_total if ref_total else float("nan")
    return {"setting": "abbreviation-aware" if abbreviations else "default", "paragraphs": len(paragraphs),
            "pysbd boundaries": ref_total, "our boundaries": ours_total, "precision": precision,
            "recall": recall, "F1": 2 * precision * recall / (precision + recall),
            "paragraphs split identically": identical / len(paragraphs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=bounds.int_in("questions"), default=1000)
    parser.add_argument("--seed", type=bounds.int_in("seed"), default=DEFAULT_SEED)
    args = parser.parse_args()
    corpus = load_squad_dev()
    texts = [p for d in corpus.documents for p in d.text.split(PARAGRAPH_SEPARATOR) if p.strip()]
    keep = np.sort(np.random.default_rng(args.seed).choice(len(texts), size=min(args.paragraphs, len(texts)),
                                                           replace=False))
    paragraphs = [texts[i] for i in keep]
    table = pd.DataFrame([agreement(paragraphs, False), agreement(paragraphs, True)])
    print(f"pysbd {pysbd.__version__}, SQuAD v1.1 dev, seed {args.seed}")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
