"""Post 03's verdict under clustering: the paired intervals against the leader, resampling articles.

Handles: :func:`clustered_against_leader` (each strategy minus the leader, with the plain
question-resampling interval and the one-stage document-clustered interval of
:mod:`chunklab_core.stats.clustered`, and the verdict word of :mod:`chunklab_core.stats.claims` under
each) and the sentence saying which calls change when questions about one article are no
longer treated as independent. Not handled: the plain verdict itself (:mod:`selection`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from chunklab_core.stats import claims, bootstrap as stats
from chunklab_core.chunking import strategy_label
from chunklab_core.stats.clustered import clustered_bootstrap_ci


def clustered_against_leader(matrix: pd.DataFrame, clusters: np.ndarray, resamples: int, seed: int) -> pd.DataFrame:
    """Leader − strategy with plain and clustered 95% intervals and the verdict under each."""
    leader = matrix.mean().idxmax()
    rows, plain, clustered = [], {}, {}
    for strategy in matrix.columns:
        if strategy == leader:
            continue
        diff = (matrix[leader] - matrix[strategy]).to_numpy()
        p = stats.bootstrap_ci(diff, resamples, seed)
        c = clustered_bootstrap_ci(diff, clusters, resamples, seed)
        plain[strategy], clustered[strategy] = (p.low, p.high), (c.low, c.high)
        rows.append({"strategy": strategy_label(strategy), "leader": strategy_label(leader), "leader − strategy": p.mean,
                     "plain low": p.low, "plain high": p.high, "clustered low": c.low, "clustered high": c.high})
    plain_words = claims.candidate_verdicts(leader, plain)
    clustered_words = claims.candidate_verdicts(leader, clustered)
    table = pd.DataFrame(rows)
    keys = [s for s in matrix.columns if s != leader]
    table["verdict (questions)"] = [plain_words[s] for s in keys]
    table["verdict (articles)"] = [clustered_words[s] for s in keys]
    table.attrs["leader"] = (strategy_label(leader), plain_words[leader], clustered_words[leader])
    return table.sort_values("leader − strategy", ignore_index=True)


def clustered_verdict_text(table: pd.DataFrame) -> str:
    """Which verdicts change when articles, not questions, are resampled."""
    leader, plain_word, clustered_word = table.attrs["leader"]
    changed = table[table["verdict (questions)"] != table["verdict (articles)"]]
    kept = table[table["verdict (articles)"] == claims.RULED_OUT]
    text = (f"Resampling articles, the leader {leader} is "
            f"{'the winner' if clustered_word == claims.WINNER else 'no winner'}; {len(kept)} of {len(table)} "
            "strategies stay ruled out")
    if len(changed):
        text += ("; no longer ruled out once articles are resampled: "
                 + ", ".join(changed.loc[changed["verdict (articles)"] == claims.NOT_RULED_OUT, "strategy"]) + ".")
    else:
        text += ", the same calls as with questions resampled."
    return text
