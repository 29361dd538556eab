"""The splitters RAG builders already use, run as they are and mapped back to offsets.

Handles, each as a strategy function ``(text, **params) -> spans`` (the library's own chunking;
``span_recovery`` finds every returned chunk in the untouched source):

- LangChain (``langchain-text-splitters``): ``RecursiveCharacterTextSplitter`` with ``len`` or
  the series' cl100k_base token count as length function, with its default separators or given
  ones (``CHROMA_SEPARATORS``: those Chroma's report states and its ``RecursiveTokenChunker``
  uses, paragraph, line, ``.``, ``?``, ``!``, space, character; the separator starts the next
  piece, as in both), and ``TokenTextSplitter``. Both strip
  each chunk's ends (``strip_whitespace=True``, their default): the span is the stripped text;
  the stripped whitespace lies between spans. ``TokenTextSplitter`` decodes token windows: a
  character cut by a window edge becomes U+FFFD on both sides, and its span is widened to the
  whole character (rule ``partial_char``). Their ``add_start_index`` is not used (a ``str.find``
  guess).
- LlamaIndex (``llama-index-core``): ``SentenceSplitter``, its tokenizer the series' cl100k_base
  encoding (LlamaIndex's own default is tiktoken's cl100k_base for gpt-3.5-turbo, which tiktoken
  would download: the same encoding, read offline). It strips and re-joins sentence pieces, so a
  chunk is found verbatim or word for word (rule ``whitespace``). Its sentence tokenizer reads
  the NLTK punkt data LlamaIndex ships in its wheel (nothing is downloaded).
- chonkie: ``TokenChunker``, ``SentenceChunker``, ``RecursiveChunker`` (exact substrings; their
  ``start_index`` is a hint, checked, since with a BPE tokenizer it counts decoded characters)
  and ``SemanticChunker`` with the series' embedding function (``embed``) in place of its
  default model ``minishlab/potion-base-32M``, which would be downloaded.
- semchunk: ``chunkerify(cl100k_base, size)`` with ``offsets=True`` (exact offsets; it drops the
  whitespace it splits at).

Sizes are counted as each library counts them: characters for chonkie's default
``"character"`` tokenizer and LangChain's ``len``; cl100k_base tokens (``core.tokens``) where a
token count is asked for. Nothing here may reach the network: every tokenizer and model is
local, and each library is imported only when its strategy runs (the ``splitters`` extra
installs them; a missing one raises ``ImportError`` naming the extra).

Not handled: LlamaIndex's ``SemanticSplitterNodeParser`` (it needs a LlamaIndex embedding
class for the local model; not wrapped yet), LangChain's experimental ``SemanticChunker``,
and metadata the libraries attach to chunks.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from chunklab_core.core.tokens import count_tokens, encoding
from chunklab_core.chunking.span_recovery import Located, recover_spans
from chunklab_core.chunking.spans import ChunkSpan

EXTRA = "splitters"
CHROMA_SEPARATORS = ("\n\n", "\n", ".", "?", "!", " ", "")
"""The separators of Chroma's report's RecursiveCharacterTextSplitter rows (Smith & Troynikov, 2024;
``chunking_evaluation``'s ``RecursiveTokenChunker`` default); LangChain's own default is
paragraph, line, space, character."""
Embed = Callable[[list[str]], np.ndarray]


def _need(module: str, package: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{package} is not installed; install the '{EXTRA}' extra "
                          f"(pip install -e '.[{EXTRA}]', or make env)") from exc


def _check(name: str, value, minimum: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _sizes(size: int, overlap: int) -> None:
    _check("size", size)
    _check("overlap", overlap, 0)
    if overlap >= size:
        raise ValueError(f"overlap ({overlap}) must be smaller than size ({size})")


def _encode(text: str) -> list[int]:
    return encoding().encode(text, disallowed_special=())


def _spans(located: Sequence[Located]) -> list[ChunkSpan]:
    return [(s.start, s.end, s.start, s.end) for s in located]


# ---------------------------------------------------------------- raw chunks, per library
# Each ``*_chunks`` returns (chunk strings, offset hints or None, overlapping) so tests can
# compare the recovered spans with the library's own strings.


def langchain_recursive_chunks(text: str, size: int, overlap: int, unit: str,
                               separators: Sequence[str] | None = None):
    _sizes(size, overlap)
    if unit not in ("chars", "tokens"):
        raise ValueError(f"unit must be 'chars' or 'tokens', got {unit!r}")
    if separators is not None and (isinstance(separators, str) or not all(isinstance(x, str) for x in separators)):
        raise ValueError(f"separators must be a sequence of strings, got {separators!r}")
    splitters = _need("langchain_text_splitters", "langchain-text-splitters")
    length = len if unit == "chars" else count_tokens
    extra = {} if separators is None else {"separators": list(separators), "keep_separator": "start"}
    splitter = splitters.RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, length_function=length,
                                                        **extra)
    return (splitter.split_text(text) if text else []), None, overlap > 0


def langchain_token_chunks(text: str, size: int, overlap: int):
    _sizes(size, overlap)
    splitters = _need("langchain_text_splitters", "langchain-text-splitters")
    from chunklab_core.core.tokens import OFFLINE_ENCODING_NAME

    splitter = splitters.TokenTextSplitter(encoding_name=OFFLINE_ENCODING_NAME, chunk_size=size,
                                           chunk_overlap=overlap, disallowed_special=())
    return (splitter.split_text(text) if text else []), None, overlap > 0


def llamaindex_sentence_chunks(text: str, size: int, overlap: int):
    _sizes(size, overlap)
    parser = _need("llama_index.core.node_parser", "llama-index-core")
    splitter = parser.SentenceSplitter(chunk_size=size, chunk_overlap=overlap, tokenizer=_encode)
    return (splitter.split_text(text) if text.strip() else []), None, overlap > 0


@lru_cache(maxsize=1)
def _chonkie_tokenizer():
    return encoding()


def chonkie_chunks(text: str, kind: str, size: int, tokenizer: str, embed: Embed | None = None,
                   threshold: float = 0.8):
    _check("size", size)
    if tokenizer not in ("character", "cl100k"):
        raise ValueError(f"tokenizer must be 'character' or 'cl100k', got {tokenizer!r}")
    chonkie = _need("chonkie", "chonkie")
    tok = "character" if tokenizer == "character" else _chonkie_tokenizer()
    if kind == "token":
        chunker = chonkie.TokenChunker(tokenizer=tok, chunk_size=size)
    elif kind == "sentence":
        chunker = chonkie.SentenceChunker(tokenizer=tok, chunk_size=size)
    elif kind == "recursive":
        chunker = chonkie.RecursiveChunker(tokenizer=tok, chunk_size=size)
    elif kind == "semantic":
        if embed is None:
            raise ValueError("chonkie's semantic chunker needs embed= (the series' embedding function)")
        chunker = chonkie.SemanticChunker(embedding_model=_chonkie_embeddings(embed), chunk_size=size,
                                          threshold=threshold)
    else:
        raise ValueError(f"unknown chonkie chunker {kind!r}; known: token, sentence, recursive, semantic")
    chunks = chunker.chunk(text) if text else []
    return [c.text for c in chunks], [c.start_index for c in chunks], False


def _chonkie_embeddings(embed: Embed):
    """chonkie's ``BaseEmbeddings`` around the series' ``embed`` (token counts in cl100k_base)."""
    from chonkie.embeddings import BaseEmbeddings

    class SeriesEmbeddings(BaseEmbeddings):
        def __init__(self):
            self._dimension = None

        def embed(self, text: str) -> np.ndarray:
            return self.embed_batch([text])[0]

        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            vectors = np.asarray(embed(list(texts)), dtype=np.float32)
            self._dimension = vectors.shape[1] if vectors.ndim == 2 else self._dimension
            return list(vectors)

        @property
        def dimension(self) -> int:
            if self._dimension is None:
                self.embed_batch(["dimension probe"])
            return int(self._dimension)

        def get_tokenizer(self):
            return _chonkie_tokenizer()

        def similarity(self, u: np.ndarray, v: np.ndarray) -> np.float32:
            denominator = float(np.linalg.norm(u) * np.linalg.norm(v))
            return np.float32(np.dot(u, v) / denominator) if denominator else np.float32(0.0)

        @classmethod
        def _is_available(cls) -> bool:
            return True

    return SeriesEmbeddings()


@lru_cache(maxsize=8)
def _semchunker(size: int):
    return _need("semchunk", "semchunk").chunkerify(encoding(), size)


def semchunk_chunks(text: str, size: int):
    _check("size", size)
    chunker = _semchunker(size)
    if not text:
        return [], [], False
    chunks, offsets = chunker(text, offsets=True)
    return list(chunks), [start for start, _ in offsets], False


# ---------------------------------------------------------------- strategies (registered)


def _recovered(text: str, library: str, result) -> list[ChunkSpan]:
    chunks, hints, overlapping = result
    return _spans(recover_spans(text, chunks, library=library, overlapping=overlapping, hints=hints))


def langchain_recursive(text: str, size: int, overlap: int, unit: str,
                        separators: Sequence[str] | None = None) -> list[ChunkSpan]:
    """LangChain ``RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)``,
    length in characters (``unit="chars"``, its default ``len``) or cl100k_base tokens;
    ``separators`` None for the library's default, else those (e.g. ``CHROMA_SEPARATORS``)."""
    return _recovered(text, "langchain RecursiveCharacterTextSplitter",
                      langchain_recursive_chunks(text, size, overlap, unit, separators))


def langchain_token(text: str, size: int, overlap: int) -> list[ChunkSpan]:
    """LangChain ``TokenTextSplitter(chunk_size=size, chunk_overlap=overlap)`` on cl100k_base."""
    return _recovered(text, "langchain TokenTextSplitter", langchain_token_chunks(text, size, overlap))


def llamaindex_sentence(text: str, size: int, overlap: int) -> list[ChunkSpan]:
    """LlamaIndex ``SentenceSplitter(chunk_size=size, chunk_overlap=overlap)``, cl100k_base tokens."""
    return _recovered(text, "llama-index SentenceSplitter", llamaindex_sentence_chunks(text, size, overlap))


def chonkie_chunker(text: str, kind: str, size: int, tokenizer: str, embed: Embed | None = None,
                    threshold: float = 0.8) -> list[ChunkSpan]:
    """chonkie's ``TokenChunker`` / ``SentenceChunker`` / ``RecursiveChunker`` /
    ``SemanticChunker`` (``kind``) with ``chunk_size=size``; ``tokenizer`` "character" (its
    default) or "cl100k"; the semantic one embeds with ``embed`` at ``threshold``."""
    return _recovered(text, f"chonkie {kind}", chonkie_chunks(text, kind, size, tokenizer, embed, threshold))


def semchunk_chunker(text: str, size: int) -> list[ChunkSpan]:
    """semchunk ``chunkerify(cl100k_base, chunk_size=size)`` (it has no default size)."""
    return _recovered(text, "semchunk", semchunk_chunks(text, size))


RAW = {  # strategy function -> its raw-chunk function (tests compare the two)
    langchain_recursive: langchain_recursive_chunks,
    langchain_token: langchain_token_chunks,
    llamaindex_sentence: llamaindex_sentence_chunks,
    chonkie_chunker: chonkie_chunks,
    semchunk_chunker: semchunk_chunks,
}
