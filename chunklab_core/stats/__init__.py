"""Stage 5, stats: how sure we can be.

Holds: bootstrap intervals (percentile, paired), the clustered bootstrap and design effects,
winner selection and held-out selection, simulation of leader calibration, rank stability
(Kendall tau), trend tests, inter-grader agreement (kappa), stratified estimates with
correction, and the one verdict rule every claim is worded by (``claims``). Not held: any
knowledge of retrieval or answers beyond arrays of per-item scores.
"""
