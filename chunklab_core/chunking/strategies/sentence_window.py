"""Sentence window (``sentences.sentence_window``): one sentence indexed, its neighbours returned."""

from chunklab_core.chunking.registry import register_strategy
from chunklab_core.chunking.sentences import sentence_window

register_strategy("sentence_window_2", sentence_window, {"window": 2}, "Sentence window (±2 sentences)", default=True,
                  sizes={"window": "sentences"}, check=False)
