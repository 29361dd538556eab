"""The size-unit declarations the series' strategy modules share (not a strategy: never scanned)."""

CHARS = {"size": "chars", "overlap": "chars"}
TOKENS = {"size": "tokens", "overlap": "tokens"}
OVERLAP = {"size": "size", "overlap": "overlap"}  # a fixed sizing's config keys -> the spec's parameters
