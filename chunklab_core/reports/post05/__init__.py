"""Post 05 (answers and judges): the answer tables, judge agreement, claims with intervals, drift, figures."""
