"""Post 05 (answers and judges): tables, claims, drift and judge agreement."""
