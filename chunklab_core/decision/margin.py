"""The declared smallest worthwhile difference (delta) of every equivalence test in the series."""
DEFAULT_MARGIN = 0.02
