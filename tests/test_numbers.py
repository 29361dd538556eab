"""The series' one formatter of estimates, intervals, counts and ranges (chunklab_core.core.numbers)."""

from __future__ import annotations

import math

import pytest

from chunklab_core.core import numbers


def test_estimate_with_interval_in_every_scale():
    assert numbers.estimate(0.9104, 0.8899, 0.92949) == "0.910 [0.890, 0.929]"
    assert numbers.estimate(-0.2, -0.35, -0.05, signed=True) == "-0.200 [-0.350, -0.050]"
    assert numbers.estimate(0.387, 0.129, 0.645, signed=True) == "+0.387 [+0.129, +0.645]"
    assert numbers.estimate(0.64321, 0.5812, 0.70249, digits=1, scale="percent") == "64.3% [58.1%, 70.2%]"
    assert numbers.estimate(0.064, 0.009, 0.121, digits=1, signed=True, scale="points") == \
        "+6.4 points [+0.9, +12.1]"
    assert numbers.estimate(0.04, -0.15, 0.24, digits=2) == "0.04 [-0.15, 0.24]"


def test_missing_interval_is_left_out_not_printed_as_nan():
    assert numbers.estimate(0.5, math.nan, math.nan) == "0.500"
    assert numbers.interval(math.nan, 0.3) == ""
    assert numbers.number(math.nan) == "n/a"
    with pytest.raises(ValueError, match="scale"):
        numbers.number(0.5, scale="percentage")


def test_count_agrees_with_its_number():
    assert numbers.count(1, "other") == "1 other"
    assert numbers.count(2, "other") == "2 others"
    assert numbers.count(0, "comparison") == "0 comparisons"
    assert numbers.count(1, "query", "queries") == "1 query"
    assert numbers.count(3, "query", "queries") == "3 queries"


def test_value_range_never_says_range_a_to_a():
    assert numbers.value_range([0.8], "comparison") == "0.80, 1 comparison"
    assert numbers.value_range([0.801, 0.799], "comparison") == "0.80, 2 comparisons"
    assert numbers.value_range([0.75, 0.9, 0.8], "comparison") == "0.75 to 0.90 over 3 comparisons"
    with pytest.raises(ValueError, match="at least one"):
        numbers.value_range([], "comparison")


def test_span_prints_one_value_when_both_ends_print_the_same():
    from chunklab_core.core.numbers import span

    assert span(552.4, 5508.2, 0) == "552 to 5508"
    assert span(0.8001, 0.7999, 2) == "0.80"
    assert span(-0.0123, 0.0456, 3, signed=True) == "-0.012 to +0.046"
