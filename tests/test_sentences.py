"""The one sentence rule (``sentence_split``) in every script, and its abbreviation option
cross-checked against pysbd."""

from __future__ import annotations

import pysbd
import pytest

from chunklab_core.core import text as text_module
from chunklab_core.chunking import document_spans
from chunklab_core.core.sentence_split import sentence_spans


def sentences(text, **kw):
    return [text[s:e].strip() for s, e in sentence_spans(text, **kw)]


@pytest.mark.parametrize("text, expected", [
    # Hindi: danda and double danda, and a question mark
    ("यह पहला वाक्य है। यह दूसरा है। क्या यह तीसरा है? हाँ॥ अंत।",
     ["यह पहला वाक्य है।", "यह दूसरा है।", "क्या यह तीसरा है?", "हाँ॥", "अंत।"]),
    # Arabic full stop is ".", question mark "؟"; Urdu full stop "۔"
    ("هذه جملة. هل هذه جملة ثانية؟ نعم هي كذلك۔ وأخيرا!",
     ["هذه جملة.", "هل هذه جملة ثانية؟", "نعم هي كذلك۔", "وأخيرا!"]),
    # Japanese: no spaces; a quotation followed by と stays in its sentence
    ("彼は「行こう。」と述べた。私も行った。「はい。」「いいえ。」",
     ["彼は「行こう。」と述べた。", "私も行った。", "「はい。」", "「いいえ。」"]),
    # Thai: sentences separated by a space, words not
    ("วันนี้อากาศดีมาก เราไปเดินเล่นที่สวน แล้วกลับบ้าน",
     ["วันนี้อากาศดีมาก", "เราไปเดินเล่นที่สวน", "แล้วกลับบ้าน"]),
    # Armenian full stop, Ethiopic full stop
    ("Սա առաջինն է։ Սա երկրորդն է։", ["Սա առաջինն է։", "Սա երկրորդն է։"]),
    ("ይህ የመጀመሪያው ነው። ይህ ሁለተኛው ነው።", ["ይህ የመጀመሪያው ነው።", "ይህ ሁለተኛው ነው።"]),
    # Chinese with full-width marks, closing quotes stay with their sentence
    ("他说：“我们走吧。”大家都同意！真的吗？", ["他说：“我们走吧。”", "大家都同意！", "真的吗？"]),
    # closers: quotes, guillemets, brackets, emphasis
    ('He said "stop." Then he left. (It was late.) «Fin.» Done.',
     ['He said "stop."', "Then he left.", "(It was late.)", "«Fin.»", "Done."]),
    ("**Question?** Answer follows here. _Note._ End.", ["**Question?**", "Answer follows here.", "_Note._", "End."]),
    # decimals and URLs are not cut; blank lines are
    ("Pi is 3.14 roughly. See example.com now.\n\nNew paragraph", ["Pi is 3.14 roughly.", "See example.com now.",
                                                                  "New paragraph"]),
])
def test_sentences_in_every_script(text, expected):
    assert sentences(text) == expected


def test_spans_tile_the_range_exactly():
    text = "यह पहला है। 二つ目。 Third one? ประโยค หนึ่ง\n\n**Q?** A."
    spans = sentence_spans(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert sentence_spans(text, 5, 5) == [] and sentence_spans("") == []


def test_text_module_reexports_the_one_rule():
    assert text_module.sentence_spans is sentence_spans


def test_sentence_window_uses_the_rule_on_hindi():
    text = "पहला वाक्य। दूसरा वाक्य। तीसरा वाक्य। चौथा वाक्य।"
    assert len(document_spans(text, "sentence_window_2")) == 4  # was one sentence before


ENGLISH = [
    "Mr. Smith met Dr. Jones at 5 p.m. on Monday. They discussed the U.S. budget. It was long.",
    "J. K. Rowling wrote it, e.g. the first book. Sales rose in Jan. and Feb. of that year. Then they fell.",
    "The lab (see Fig. 3) grew. Prof. Lee, Ph.D., agreed. No. 5 was the best of all.",
]


def _starts(text, spans):
    """Sentence starts at their first visible character, the text's own start left out."""
    out = set()
    for start, end in spans:
        stripped = len(text[start:end]) - len(text[start:end].lstrip())
        if start + stripped > 0:
            out.add(start + stripped)
    return out


@pytest.mark.parametrize("text", ENGLISH)
def test_abbreviation_option_agrees_with_pysbd(text):
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    reference = _starts(text, [(s.start, s.end) for s in segmenter.segment(text)])
    assert _starts(text, sentence_spans(text, abbreviations=True)) == reference
    # and the default rule, which cuts after every full stop, does not
    assert _starts(text, sentence_spans(text)) != reference
