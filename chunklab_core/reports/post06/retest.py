"""Post 06's judge retest as one call: the replayed retest, with its interval warnings as the post's cautions.

Handles: :func:`retest_with_cautions`, which runs :func:`chunklab_core.audit.bias.replayed_retest`
and returns the warnings its intervals raise (few items, degenerate shares) as caution lines
for the post, each distinct message once and in the order raised, instead of letting them print
as warnings in the rendered post. Not handled: the retest itself (``audit.bias``), its prose
(``reports.post06.reading_bias``).
"""

from __future__ import annotations

import warnings

from chunklab_core.audit.bias import replayed_retest
from chunklab_core.audit.loading import AuditData

CAUTION = "*Caution from the retest's intervals:* {message}."


def retest_with_cautions(data: AuditData, n_items: int, samples: int, temperature: float, seed: int,
                         resamples: int = 10_000):
    """``(retest, cautions)``: ``replayed_retest``'s result (or ``None``) and one markdown line per distinct warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        retest = replayed_retest(data, n_items, samples, temperature, seed, resamples)
    messages = dict.fromkeys(str(w.message) for w in caught)
    return retest, [CAUTION.format(message=message) for message in messages]
