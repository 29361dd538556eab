"""Library splitters: the spans recovered from every library's chunks reproduce those chunks.

For each library splitter of post 08 (LangChain recursive in characters and tokens, LangChain
TokenText, LlamaIndex SentenceSplitter, chonkie token / sentence / recursive / semantic,
semchunk), at its registered defaults and at a small size that forces many chunks, on edge
inputs: the library's own strings are mapped back (``span_recovery``) and each span must
reproduce its chunk under the rule that matched it, with only the rules that library is
documented to need; the registered strategy returns exactly those spans. A missing library
fails (the ``splitters`` extra is a declared dependency of the tests).
"""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest

from chunklab_core.chunking import LIBRARY_STRATEGIES, STRATEGIES, document_spans
from chunklab_core.chunking import library_splitters as lib
from chunklab_core.chunking.span_recovery import REPLACEMENT, Located, locate, recover_spans, reproduces
from chunklab_core.core.tokens import count_tokens


def fake_embed(texts, dim=32):
    out = np.zeros((len(texts), dim))
    for i, text in enumerate(texts):
        for word in re.findall(r"\w+", text.lower()):
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


TABLE = "| Partner | Q1 | Q2 |\n|---|---|---|\n" + "".join(f"| Partner {i} | {10 * i} | {12 * i} |\n" for i in range(30))
EDGE = {
    "empty": "",
    "one_word": "word",
    "unicode": " ".join(f"naïve café {i} — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 emoji 🙂 déjà vu." for i in range(25)),
    "cjk": "".join(f"自然语言处理第{i}章是计算机科学和人工智能的一个重要领域。它研究如何让计算机理解语言！" for i in range(20)),
    "table": TABLE,
    "prose": "\n\n".join(f"Paragraph {i} opens here.   It has two sentences, and some   spacing.\nA line {i}." for i in range(20)),
}

# which recovery rules each library may need (module docstring of library_splitters)
ALLOWED = {
    lib.langchain_recursive: {"exact"},
    lib.langchain_token: {"exact", "partial_char"},
    lib.llamaindex_sentence: {"exact", "whitespace"},
    lib.chonkie_chunker: {"hint", "exact", "partial_char"},
    lib.semchunk_chunker: {"hint", "exact"},
}
SMALL = {  # a size that makes many chunks of the edge texts
    lib.langchain_recursive: {"size": 40, "overlap": 10},
    lib.langchain_token: {"size": 12, "overlap": 3},
    lib.llamaindex_sentence: {"size": 24, "overlap": 4},
    lib.chonkie_chunker: {"size": 16},
    lib.semchunk_chunker: {"size": 12},
}
LIBRARY = [name for name in LIBRARY_STRATEGIES if STRATEGIES[name].func in lib.RAW]
CASES = [(name, size) for name in LIBRARY for size in ("registered", "small")]


def params_of(name: str, size: str) -> dict:
    spec = STRATEGIES[name]
    params = dict(spec.params)
    if size == "small":
        params.update(SMALL[spec.func])
    if "embed" in params:
        params["embed"] = fake_embed
    return params


def test_every_library_splitter_is_covered():
    assert {STRATEGIES[n].func for n in LIBRARY} == set(lib.RAW)
    kinds = {STRATEGIES[n].params.get("kind") for n in LIBRARY if STRATEGIES[n].func is lib.chonkie_chunker}
    assert kinds == {"token", "sentence", "recursive", "semantic"}
    units = {STRATEGIES[n].params["unit"] for n in LIBRARY if STRATEGIES[n].func is lib.langchain_recursive}
    assert units == {"chars", "tokens"}


@pytest.mark.parametrize("text_name", list(EDGE))
@pytest.mark.parametrize("name,size", CASES)
def test_recovered_spans_reproduce_the_library_chunks(name, size, text_name):
    text = EDGE[text_name]
    spec = STRATEGIES[name]
    params = params_of(name, size)
    chunks, hints, overlapping = lib.RAW[spec.func](text, **params)
    located = recover_spans(text, chunks, library=name, overlapping=overlapping, hints=hints)
    visible = [c for c in chunks if c.strip().strip(REPLACEMENT).strip()]
    assert len(located) == len(visible), "every chunk with visible text has a span"
    for span, chunk in zip(located, visible):
        assert reproduces(text, span, chunk), (span, chunk)
        assert span.rule in ALLOWED[spec.func], f"{name} needed rule {span.rule!r}"
    assert [s.start for s in located] == sorted(s.start for s in located)
    spans = document_spans(text, name, **{k: v for k, v in params.items() if k in spec.params})
    assert spans == [(s.start, s.end, s.start, s.end) for s in located]
    if not text.strip():
        assert spans == []


def test_partial_character_is_widened_to_the_whole_character():
    source = "ab日本cd"
    assert locate(source, "ab" + REPLACEMENT, 0) == Located(0, 3, "partial_char")
    assert locate(source, REPLACEMENT + REPLACEMENT + "本cd", 2) == Located(2, 6, "partial_char")
    assert reproduces(source, Located(0, 3, "partial_char"), "ab" + REPLACEMENT)
    with pytest.raises(LookupError):
        locate("abcd", "ab" + REPLACEMENT, 0)  # a replacement character must face a multi-byte one


def test_whitespace_rule_and_stripping():
    source = "one  two\n three four"
    assert locate(source, " one two three ", 0) == Located(0, 15, "whitespace")
    assert locate(source, "  two\n three", 0) == Located(5, 15, "exact")
    assert locate(source, "   \n", 0) is None
    with pytest.raises(RuntimeError, match="chunk 1 could not be mapped"):
        recover_spans(source, ["one", "five"], library="test", overlapping=False)


def test_overlapping_chunks_of_a_periodic_text_cover_it():
    source = "abc " * 12
    chunks = ["abc abc abc", "abc abc abc", "abc abc abc", "abc abc abc", "abc abc abc", "abc abc abc"]
    located = recover_spans(source, chunks, library="test", overlapping=True)
    assert located[0].start == 0 and located[-1].end == len(source.rstrip())
    assert all(a.start < b.start <= a.end + 1 for a, b in zip(located, located[1:]))


def test_a_missing_library_names_the_extra(monkeypatch):
    import importlib

    real = importlib.import_module

    def fake(name, *args):
        if name == "semchunk":
            raise ImportError("No module named 'semchunk'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(ImportError, match=r"'splitters' extra"):
        lib.semchunk_chunks("some text", 10)


def test_bad_sizes_are_value_errors():
    with pytest.raises(ValueError, match="overlap"):
        document_spans("text", "lc_recursive_1000_200", overlap=1000)
    with pytest.raises(ValueError, match="size"):
        document_spans("text", "semchunk_512", size=0)
    with pytest.raises(ValueError, match="embed"):
        document_spans("some text. more text.", "chonkie_semantic_default")


def test_report_rows_split_at_the_reports_separators():
    # Chroma's rows use paragraph, line, '.', '?', '!', space, character (its RecursiveTokenChunker);
    # LangChain's default has no sentence level, so on one long paragraph it cuts between words
    text = " ".join(f"Sentence {i} says a little more about item {i}." for i in range(60))
    report = [name for name in LIBRARY if STRATEGIES[name].func is lib.langchain_recursive
              and STRATEGIES[name].params["unit"] == "tokens"]
    assert report and all(STRATEGIES[n].params["separators"] == lib.CHROMA_SEPARATORS for n in report)
    defaults = [n for n in LIBRARY if STRATEGIES[n].func is lib.langchain_recursive and n not in report]
    assert defaults and all("separators" not in STRATEGIES[n].params for n in defaults)
    size = 40
    chunks, _, _ = lib.langchain_recursive_chunks(text, size, 0, "tokens", lib.CHROMA_SEPARATORS)
    assert len(chunks) > 5 and max(count_tokens(c) for c in chunks) <= size
    assert all(c.startswith(".") for c in chunks[1:]), "each later chunk starts at a kept '.' separator"
    plain, _, _ = lib.langchain_recursive_chunks(text, size, 0, "tokens")
    assert max(count_tokens(c) for c in plain) <= size
    assert sum(not c.endswith(".") for c in plain[:-1]) > len(plain) // 2, "the default cuts mid-sentence"
    spans = document_spans(text, report[0], size=size, overlap=0)
    assert [text[s:e] for s, e, _, _ in spans] == chunks
