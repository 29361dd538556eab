"""Stage 10, audit: grading samples of model output to check the LLM judges.

Holds: the grading sheet format and its safe file handling, the interactive grader and batch
grading, the stratified sample, the draw and top-up of a new sample with its sizing, a
synthetic sheet for tests, reading graded sheets with grader identity, paired
judge-minus-corrected differences, bias measures and the temperature retest. Not held:
post 06's tables and figures (``reports.post06``).
"""
