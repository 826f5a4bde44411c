"""Noise-aware gate: the Mann–Whitney U test against brute-force enumeration, and the seeded simulations of issue 15.

References are independent of the code: p-values by enumerating every assignment of
the pooled values to the two groups (the permutation distribution the exact test
claims to compute), and a textbook table value.
"""

from __future__ import annotations

import itertools
import math
import statistics

import pytest

from pipeline import gate
from pipeline.compare import compare
from tests.fake_results import normal_steps, result


def brute_p(x: list[float], y: list[float]) -> float:
    """P(U >= U_obs) over all C(m+n, m) equally likely splits of the pooled values (ties count one half)."""
    pooled = x + y

    def u(xs: list[float], ys: list[float]) -> float:
        return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in xs for b in ys)
    observed = u(x, y)
    hits = total = 0
    for idx in itertools.combinations(range(len(pooled)), len(x)):
        xs = [pooled[i] for i in idx]
        ys = [pooled[i] for i in range(len(pooled)) if i not in idx]
        total += 1
        hits += u(xs, ys) >= observed - 1e-12
    return hits / total


@pytest.mark.parametrize("m, n", [(1, 1), (2, 3), (3, 2), (4, 4), (5, 5), (3, 7)])
def test_u_counts_are_the_permutation_distribution(m, n):
    counts = [0] * (m * n + 1)
    for idx in itertools.combinations(range(m + n), m):       # x at these sorted positions
        counts[sum(1 for p in idx for q in range(m + n) if q not in idx and p > q)] += 1
    assert gate.u_counts(m, n) == counts and sum(counts) == math.comb(m + n, m)


@pytest.mark.parametrize("x, y", [
    ([6.0, 7.0, 8.0, 9.0, 10.0], [1.0, 2.0, 3.0, 4.0, 5.0]),
    ([1.3, 2.2, 0.4, 5.5, 3.1], [1.0, 2.0, 3.0, 4.0, 5.0]),
    ([9.1, 8.2, 7.7, 1.5, 6.6, 3.3], [0.3, 2.9, 4.4, 5.1, 0.8]),
])
def test_exact_p_value_equals_enumeration(x, y):
    t = gate.mann_whitney_greater(x, y)
    assert t["method"] == "exact"
    assert t["p_value"] == pytest.approx(brute_p(x, y), rel=1e-12)
    assert t["u"] == sum(a > b for a in x for b in y)
    assert t["effect_size"] == pytest.approx(t["u"] / (len(x) * len(y)))


def test_table_value_and_complete_separation():
    # n = m = 5, complete separation: one arrangement in C(10,5) = 252 (Mann & Whitney 1947 table)
    assert gate.mann_whitney_greater([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])["p_value"] == pytest.approx(1 / 252)
    # tables of critical values, one-sided alpha 0.01, n = m = 10: U <= 19 in the lower tail,
    # i.e. U >= 100 - 19 = 81 in the upper one
    p81 = sum(gate.u_counts(10, 10)[81:]) / math.comb(20, 10)
    p80 = sum(gate.u_counts(10, 10)[80:]) / math.comb(20, 10)
    assert p81 < 0.01 <= p80


@pytest.mark.parametrize("x, y", [
    ([3.0, 3.0, 4.0, 5.0, 5.0, 6.0], [1.0, 2.0, 3.0, 3.0, 4.0, 2.0]),
    ([0.055] * 5, [0.05] * 5),                        # synthetic traces: every step equally long
    ([1.0] * 5, [1.0] * 5),                           # all tied: no evidence at all
])
def test_ties_small_samples_exact_conditional(x, y):
    t = gate.mann_whitney_greater(x, y)
    assert t["method"] == "exact (ties)"
    assert t["p_value"] == pytest.approx(brute_p(x, y), rel=1e-12)


def test_ties_large_samples_use_the_normal_approximation():
    x = [float(k) for k in range(10, 20) for _ in range(3)]      # 10..19, three of each
    y = [float(k) for k in range(6, 16) for _ in range(3)]       # 6..15, three of each
    t = gate.mann_whitney_greater(x, y)
    assert t["method"] == "normal approximation"
    # by hand: x = 10..15 beats 3(a-6) y's and ties 3 -> 3·(13.5+16.5+19.5+22.5+25.5+28.5) = 378;
    # x = 16..19 beats all 30 -> 4·3·30 = 360; U = 738, mu = 450. Ties: 8 groups of 3 (6..9, 16..19),
    # 6 groups of 6 (10..15): sum(t³-t) = 8·24 + 6·210 = 1452 over N(N-1) = 3540.
    var = 900 / 12 * (61 - 1452 / 3540)
    z = (738 - 450 - 0.5) / math.sqrt(var)
    assert t["u"] == 738 and t["p_value"] == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=1e-12)


def test_decide_rules():
    few, many = [1.1] * 4, [1.0, 1.01, 0.99, 1.02, 0.98]
    shifted = [v * 1.2 for v in many]
    assert gate.decide(3.0, "lower", 5.0, shifted, many)["reason"] == "within_limit"
    assert gate.decide(-30.0, "lower", 5.0, shifted, many)["outcome"] == "pass"              # better
    assert gate.decide(20.0, "lower", 5.0, few, many)["outcome"] == "undecided"
    assert gate.decide(20.0, "lower", 5.0, few, many, strict=True)["outcome"] == "fail"
    d = gate.decide(20.0, "lower", 5.0, shifted, many)
    assert d["outcome"] == "fail" and d["test"]["p_value"] == pytest.approx(1 / 252)
    # MFU: lower is worse, so the test runs on the other tail
    assert gate.decide(-20.0, "higher", 5.0, [100 / v for v in shifted], [100 / v for v in many])["outcome"] == "fail"
    # inside the span of several baseline runs: run-to-run noise, not a regression
    assert gate.decide(20.0, "lower", 5.0, shifted, many, value=1.2,
                       base_values=[1.0, 1.25])["reason"] == "within_baseline_runs"


def gate_outcomes(seed: int, n: int, cv: float, shift: float, limit: float = 5.0) -> str:
    base = result("base", normal_steps(2 * seed, n, cv))
    new = result("new", normal_steps(2 * seed + 1, n, cv, mean=1.0 + shift))
    doc = compare([("base", base), ("new", new)], [0], limit)
    step = next(g for g in doc["gates"] if g["metric"] == "step_time_median_s")
    mfu = next(g for g in doc["gates"] if g["metric"] == "mfu_pct_wall")
    return "fail" if not doc["passed"] else step["outcome"] if step["outcome"] != "pass" else mfu["outcome"]


def old_median_gate_fails(seed: int, n: int, cv: float, limit: float = 5.0) -> bool:
    """The gate before issue 15: fail when the median step time rose by more than the limit."""
    base, new = normal_steps(2 * seed, n, cv), normal_steps(2 * seed + 1, n, cv)
    return 100 * (statistics.median(new) / statistics.median(base) - 1) > limit


def test_simulation_a_equal_distributions_n20_cv2_pass():
    outcomes = [gate_outcomes(seed, 20, 0.02, 0.0) for seed in range(100)]
    assert outcomes.count("pass") >= 98, outcomes.count("pass")


def test_simulation_b_ten_percent_slower_n20_cv2_fails_every_seed():
    outcomes = [gate_outcomes(seed, 20, 0.02, 0.10) for seed in range(100)]
    assert outcomes.count("fail") == 100


def test_simulation_c_equal_distributions_n5_cv10_pass_where_the_median_gate_did_not():
    outcomes = [gate_outcomes(seed, 5, 0.10, 0.0) for seed in range(100)]
    assert outcomes.count("pass") >= 98, outcomes.count("pass")
    old = sum(old_median_gate_fails(seed, 5, 0.10) for seed in range(100))
    assert 15 <= old <= 40, old          # the "about 28 %": the noise the old gate tripped on


def test_samples_fall_back_to_wall_time_for_results_without_step_time():
    new = result("new", [1.0, 1.1, 1.2])
    old = result("old", [1.0, 1.1, 1.2])
    for o, period in zip(old["occurrences"], [2.0, 2.1, 2.2]):
        del o["step_time_s"]
        o["wall_time_s"] = period
    assert gate.step_samples(new) == ("step_time_s", [1.0, 1.1, 1.2])
    assert gate.step_samples(old) == ("wall_time_s", [2.0, 2.1, 2.2])


def test_mfu_samples_are_the_results_own_per_occurrence_mfu():
    """The samples are what result.json prints per occurrence (from the wall time), not recomputed from the step
    time: an occurrence whose next one started inside its envelope (step 0.8 s, wall 1.0 s) keeps its printed
    MFU, 100 x 4e15 / (1.0 s x 8 x 989.4e12), not the larger one a step-time recomputation gave."""
    r = result("r", [1.0, 1.1])
    r["occurrences"][0]["step_time_s"] = 0.8
    by_wall = 100 * 4e15 / (1.0 * 8 * 989.4e12)
    assert gate.mfu_samples(r)[0] == pytest.approx(by_wall)
    assert gate.mfu_samples(r)[0] != pytest.approx(100 * 4e15 / (0.8 * 8 * 989.4e12))
    r["occurrences"][1]["mfu_pct_wall"] = None                        # no figure printed: no sample
    assert gate.mfu_samples(r) == [pytest.approx(by_wall)]


def test_at_exactly_alpha_is_not_clear():
    """p = alpha is not below it: no regression, in the gate and in the history. Five against five, every new one
    above every baseline one and no ties: only 1 of the C(10, 5) = 252 splits is as extreme, p = 1/252 exactly."""
    base, new = [1.0, 1.01, 1.02, 1.03, 1.04], [1.5, 1.51, 1.52, 1.53, 1.54]
    p = 1 / math.comb(10, 5)
    assert gate.decide(50.0, "lower", 5.0, new, base, alpha=p)["reason"] == "not_clear"
    assert gate.decide(50.0, "lower", 5.0, new, base, alpha=p * 1.000001)["reason"] == "clear"
    assert gate.detect(50.0, "lower", 5.0, new, base, alpha=p)["outcome"] == "none"
    assert gate.detect(50.0, "lower", 5.0, new, base, alpha=p * 1.000001)["outcome"] == "regression"


def test_decide_boundaries():
    """Worse by exactly the limit is within it; the baseline runs' range includes its ends, and one baseline
    run spans no range (its value is no evidence of run-to-run noise)."""
    many = [1.0, 1.01, 0.99, 1.02, 0.98]
    shifted = [v * 1.2 for v in many]
    assert gate.decide(5.0, "lower", 5.0, shifted, many)["reason"] == "within_limit"
    assert gate.decide(-5.0, "higher", 5.0, shifted, many)["reason"] == "within_limit"
    assert gate.decide(20.0, "lower", 5.0, shifted, many, value=1.25,
                       base_values=[1.0, 1.25])["reason"] == "within_baseline_runs"
    assert gate.decide(20.0, "lower", 5.0, shifted, many, value=1.2, base_values=[1.2])["reason"] == "clear"


def test_detect_boundaries():
    """A change of exactly the minimum is none; five samples a side are enough for a test (p = 1/252)."""
    many = [1.0, 1.01, 0.99, 1.02, 0.98]
    shifted = [v * 1.2 for v in many]
    assert gate.detect(5.0, "lower", 5.0, shifted, many)["outcome"] == "none"
    found = gate.detect(20.0, "lower", 5.0, shifted, many)
    assert found["outcome"] == "regression" and found["test"]["p_value"] == pytest.approx(1 / 252)


def test_exact_methods_up_to_their_sizes():
    """No ties: exact up to m x n = 10,000 pairs (complete separation of 100 and 100: p = 1 / C(200, 100));
    ties: exact up to 40 samples in all; all values tied: no shift to find (p = 1, not a division by zero)."""
    t = gate.mann_whitney_greater([float(k) for k in range(100, 200)], [float(k) for k in range(100)])
    assert t["method"] == "exact" and t["u"] == 10_000
    assert t["p_value"] == pytest.approx(1 / math.comb(200, 100), rel=1e-12)
    tied = gate.mann_whitney_greater([float(k) for k in range(10, 20) for _ in range(2)],
                                     [float(k) for k in range(6, 16) for _ in range(2)])
    assert tied["method"] == "exact (ties)"
    flat = gate.mann_whitney_greater([1.0] * 25, [1.0] * 25)
    assert (flat["method"], flat["u"], flat["p_value"]) == ("normal approximation", 312.5, 1.0)


def test_samples_need_every_step_time_and_a_peak():
    """One occurrence without a step time: every sample is a wall time, not a shorter list of step times.
    No peak: no MFU samples."""
    mixed = result("mixed", [1.0, 1.1])
    mixed["occurrences"][1]["step_time_s"] = None
    walls = [o["wall_time_s"] for o in mixed["occurrences"]]
    assert gate.step_samples(mixed) == ("wall_time_s", walls)
