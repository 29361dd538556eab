"""Post 06 (the judge audit): reading the graded sheets, tables, reading-order bias, the replayed retest, figures."""
