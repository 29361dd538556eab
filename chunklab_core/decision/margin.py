"""The declared smallest worthwhile difference (delta) of every equivalence test in the series.

Why 0.02: it is the smallest change of a share (recall, a judge's accuracy) a builder would notice,
about two answers in a hundred questions. It is chosen for what matters, not for what a sample can
confirm: settling a comparison at ±δ needs the questions :func:`questions_to_settle` gives, often
several times the few hundred questions a builder writes (post 02 and post 00 print the range for
the undecided settings beside this reason: ``reports.pool.margin_text``)."""
DEFAULT_MARGIN = 0.02

# Below: the equivalence arithmetic on a paired interval (added by the decision engine).
# Handles: whether an interval of ``leader − candidate`` lies inside (−δ, +δ) at the precision
# shown (two one-sided tests, each at α = 2.5%, read off the 95% interval: Schuirmann 1987,
# "A comparison of the two one-sided tests procedure ...", J. Pharmacokinet. Biopharm. 15:657),
# whether it clears 0, the margins of the robustness check, and how many questions would settle
# an undecided comparison at the margin. Not handled: computing the intervals (``decision.verdicts``).
import math

DIGITS = 3  # the precision verdicts are shown at (a bound printed as +0.000 does not clear 0)
ROBUSTNESS = (0.5, 1.0, 2.0)  # the margins the decisions are recomputed at, as multiples of δ
TOST_ALPHA = 0.025  # each one-sided test's level: the 95% interval inside (−δ, +δ)
SETTLE_POWER = 0.80  # the power at which questions_to_settle sizes an undecided comparison


def inside_margin(low: float, high: float, margin: float = DEFAULT_MARGIN, digits: int = DIGITS) -> bool:
    """Equivalence by two one-sided tests: True when ``−δ < round(low) and round(high) < δ``
    (the interval at level 1 − 2α lies strictly inside the margin; NaN: False)."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return False
    return bool(round(float(low), digits) > -margin and round(float(high), digits) < margin)


def clears_zero(low: float, high: float, digits: int = DIGITS) -> bool:
    """True when ``[low, high]`` of ``leader − other`` lies above 0 *at the shown precision*:
    ``round(low, digits) > 0`` (an interval printed ``[+0.000, …]`` does not clear 0)."""
    del high  # the upper bound does not decide; kept so both bounds are passed as one interval
    return bool(low is not None and not math.isnan(low) and round(float(low), digits) > 0)


def questions_to_settle(n: int, diff: float, low: float, high: float, margin: float = DEFAULT_MARGIN,
                        power: float = SETTLE_POWER, cap: int = 100_000) -> int | None:
    """Questions at which an undecided comparison would be decided at margin δ with probability
    ``power``, the per-question spread held at what was measured on ``n`` questions and the
    difference at its estimate d. Equivalence (|d| < δ) needs ``(z₁₋α + z_power)·se ≤ δ − |d|``;
    ruling out (d > 0) needs ``(z_{1−α} + z_power)·se ≤ d`` (the normal-approximation sample
    size of Chow, Shao & Wang, *Sample Size Calculations in Clinical Research*, 3rd ed., 3.1 and
    3.2); the smaller of the two n, at least n + 1; None when neither can be reached below ``cap``."""
    from scipy.special import ndtri  # the normal quantile, what ``scipy.stats.norm.ppf`` computes, without
    # importing scipy.stats (a second or more of a run's start-up)

    if n < 1 or any(math.isnan(v) for v in (diff, low, high)):
        return None
    z_level = float(ndtri(1 - TOST_ALPHA))
    se = (high - low) / (2 * z_level)
    if se <= 0:
        return n + 1
    gaps = [g for g in (margin - abs(diff), diff) if g > 1e-9]
    if not gaps:
        return None
    needed = min(math.ceil(round(n * ((z_level + float(ndtri(power))) * se / g) ** 2, 6)) for g in gaps)
    needed = max(n + 1, needed)
    return None if needed > cap else int(needed)
