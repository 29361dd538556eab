"""Window variants: an embedding model read only up to a shorter window, recorded as its own model.

Handles: the label ``<model>@<N>`` of a model cut to its first ``N`` word pieces (special tokens
included, as sentence-transformers counts them when it truncates) instead of its own
``max_seq_length``: ``all-mpnet-base-v2@256`` is all-mpnet-base-v2 (window 384) reading at most 256
word pieces, MiniLM's window, so that a comparison of the two models can hold the window fixed
(post 02, "Model or window?"). :func:`split_window` reads a label once, at the edge
(``model_assembly.resolve_window``); :func:`window_label` writes it; :func:`check_window` refuses a
window that is not shorter than the model's own (a longer one would read position embeddings the
model was not trained with; an equal one is the model itself under a second name).

The variant is its own model wherever a model is named: its own run-store cells
(``dense@all-mpnet-base-v2@256.npz``: ``recorded_runs.Cell``), its own embedding-cache folder
(:func:`window_extra` puts the window into the key, ``embedding_cache.cache_key``: vectors of a cut
model are never read as the uncut model's, nor the reverse), its own window in the reports
(``decision.scores.model_window``), and ``make verify-runs`` rebuilds it from its label alone.

Not handled: a window longer than the model's own, models without a ``max_seq_length``, other ways of
reading a long text (striding, pooling over windows).
"""

from __future__ import annotations

import re

WINDOW_MARK = "@"
MIN_WINDOW = 3  # two special tokens and one word piece
_LABEL = re.compile(r"^(?P<base>.*[^@\s])@(?P<window>[0-9]+)$")


def split_window(name: str) -> tuple[str, int | None]:
    """``(base, N)`` of a label ``base@N``; ``(name, None)`` for a label without a window."""
    found = _LABEL.match(str(name).strip())
    if found is None:
        return str(name), None
    return found.group("base"), int(found.group("window"))


def window_label(label: str, window: int | None) -> str:
    """The label of ``label`` cut to ``window`` word pieces (``label`` itself when ``window`` is None)."""
    return label if window is None else f"{label}{WINDOW_MARK}{int(window)}"


def check_window(label: str, window: int, own: int | None) -> int:
    """``window``, or a ``ValueError`` naming the model, its own window and the fix when it is not a
    whole number from :data:`MIN_WINDOW` up to one less than the model's own window ``own``."""
    if own is None:
        raise ValueError(f"{label} declares no max_seq_length (sentence_bert_config.json), so it cannot be read "
                         f"to a shorter window; use {label} without {WINDOW_MARK}{window}")
    if not MIN_WINDOW <= int(window) < int(own):
        raise ValueError(f"{window_label(label, window)}: the window must be from {MIN_WINDOW} to {int(own) - 1} "
                         f"word pieces, shorter than {label}'s own {own}; use {label} for its own window")
    return int(window)


def window_extra(window: int | None) -> dict:
    """What a cut model adds to its embedding-cache key (``embedding_cache.cache_key``'s ``extra``):
    ``{"max_seq_length": N}``, and nothing for a model at its own window (its key is unchanged)."""
    return {} if window is None else {"max_seq_length": int(window)}
