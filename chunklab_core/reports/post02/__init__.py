"""Post 02 (retrievers, long documents): tables, claims, long evidence, structure-aware units, truncation."""
