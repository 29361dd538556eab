"""The functions the series' measure modules bind: each computes the per-question table of several
measures at once (not a measure: never scanned). The formula modules are imported on first use,
so that importing them first (they read ``KS`` and ``column`` from this package) is no cycle."""


SLOT = {"threshold": 0.90}  # the slot measures' declared parameter: fuzzy matching's relevance threshold


def slot_table(run, ks, **context):
    """``slot_metrics.score_slots``: recall, complete, hit, p, rr, ndcg, tokens, context_efficiency."""
    from chunklab_core.evaluation.slot_metrics import score_slots

    return score_slots(run, ks, **context)


def span_table(run, ks, **context):
    """``span_metrics.span_scores``: span_recall, span_precision, span_iou, complete_evidence."""
    from chunklab_core.evaluation.span_metrics import span_scores

    return span_scores(run, ks, **context)


def token_recall_table(run, ks, **context):
    """``token_metrics.token_span_recall``: token_recall."""
    from chunklab_core.evaluation.token_metrics import token_span_recall

    return token_span_recall(run, ks, **context)
