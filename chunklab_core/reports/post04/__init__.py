"""Post 04 (generated questions): the study's tables, claims and figures."""
