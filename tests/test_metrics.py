"""docs/figures.md §1 and §11 arithmetic, by hand."""

from __future__ import annotations

import pytest

from pipeline.analysis import metrics


def test_worked_example_40_percent():
    # docs/figures.md §11: 3.9 PFLOP per step, 1.232 s wall, 8 GPUs at 989 TFLOP/s -> supply 1.232 x 8 x 989e12
    # = 9.75 PFLOP, MFU 3.9 / 9.75 = 40 %
    assert metrics.utilization_pct(3.9e15, 1.232, 8, 989.0) == pytest.approx(40.0, abs=0.05)


def test_mis_scoped_example_is_5_percent():
    # docs/figures.md §11: one forward (131.94 TFLOP) over a 5-step union of 2.628 s at 989 -> 5.1 %
    assert metrics.utilization_pct(131.94e12, 2.628, 1, 989.0) == pytest.approx(5.08, abs=0.01)


def test_identity_mfu_equals_active_ratio_times_union_over_wall():
    flops, wall, union, gpus, peak = 7.3e15, 2.0, 1.6, 8, 989.4
    active = metrics.utilization_pct(flops, union, gpus, peak)
    assert metrics.utilization_pct(flops, wall, gpus, peak) == pytest.approx(active * union / wall)


def test_no_time_gives_no_figure():
    assert metrics.utilization_pct(1e12, 0, 1, 1.0) is None
    assert metrics.tokens_per_s(10, 0) is None


def test_achieved_and_tokens():
    assert metrics.achieved_tflops_per_gpu(3.9e15, 1.232, 8) == pytest.approx(3.9e15 / 9.856 / 1e12)
    assert metrics.tokens_per_s(8 * 8192, 2.0) == 32768


def test_step_stats():
    s = metrics.step_stats([1.0, 1.0, 4.0])
    assert (s["median_s"], s["min_s"], s["max_s"], s["mean_s"]) == (1.0, 1.0, 4.0, 2.0)
    assert s["cv_pct"] == pytest.approx(100 * (2 ** 0.5) / 2)        # pstdev of (1,1,4) = sqrt(2)


def test_roofline_numbers():
    # docs/figures.md §9/§11: H200 BF16 989 TFLOP/s / 4.8 TB/s ~ 206 FLOP/byte; with 3.35 TB/s ~ 295
    assert metrics.ridge_flop_per_byte(989.0, 4800) == pytest.approx(206, abs=0.5)
    assert metrics.ridge_flop_per_byte(989.0, 3350) == pytest.approx(295, abs=0.5)
    # elementwise add: AI 1/6 -> roof ~0.8 TFLOP/s on H200
    assert metrics.attainable_tflops(1 / 6, 989.0, 4800) == pytest.approx(0.8, abs=0.001)
    # square GEMM N=4096: AI N/3 ~ 1365, past the ridge -> compute roof
    assert metrics.attainable_tflops(4096 / 3, 989.0, 4800) == 989.0


@pytest.mark.parametrize("wall_ns, gpus, peak", [
    (2_231_593_033, 8, 312.0),        # 100.00000000000001 when computed in floats as written
    (1_000_000_007, 1, 989.4),
    (987_654_321, 64, 1978.9),
    (5_000_000_000, 2, 989.4),
])
def test_work_exactly_at_the_peak_is_exactly_100(wall_ns, gpus, peak):
    """docs/figures.md §6 refuses MFU, HFU or the union diagnostic *above* 100 %: work that fills every GPU at its peak
    for the whole wall is 100 %, no more. The FLOPs here are by hand wall x GPUs x peak, exactly (peak x 10 is a
    whole number, so the product is an integer): the figure must be 100.0, not a float rounding above it that
    the verdict would refuse."""
    flops = wall_ns * gpus * round(peak * 10) * 100          # (wall_ns / 1e9) s x gpus x (peak x 1e12) FLOP/s
    assert metrics.utilization_pct(flops, wall_ns / 1e9, gpus, peak) == 100.0
    # a millionth of a percent more is above the peak, and stays above 100 %
    assert metrics.utilization_pct(flops + flops // 10**8, wall_ns / 1e9, gpus, peak) > 100.0


@pytest.mark.parametrize("wall_ns, gpus, hbm", [
    (1_000_000_007, 1, 4800.0),       # 100.00000000000001 when computed in floats as written
    (987_654_321, 64, 2039.0),        # 100.00000000000003
    (2_231_593_033, 8, 3350.0),
])
def test_traffic_exactly_at_the_bandwidth_is_exactly_100(wall_ns, gpus, hbm):
    """The memory roof's share (docs/figures.md §9), as utilization_pct for the peak: bytes by hand wall x GPUs x
    bandwidth, exactly ((wall_ns / 1e9) s x GB/s x 1e9 = wall_ns x GB/s bytes per GPU)."""
    nbytes = wall_ns * gpus * int(hbm)
    assert metrics.bandwidth_pct(nbytes, wall_ns / 1e9, gpus, hbm) == 100.0
    assert metrics.bandwidth_pct(nbytes + nbytes // 10**8, wall_ns / 1e9, gpus, hbm) > 100.0
    assert metrics.bandwidth_pct(nbytes // 2, wall_ns / 1e9, gpus, hbm) == pytest.approx(50.0)
    assert metrics.bandwidth_pct(nbytes, 0.0, gpus, hbm) is None


def test_pct_of_by_hand():
    """A share in percent (the chosen FLOPs of the 6·N cross-check, a lane of the wall): 3 of 4 is 75 %."""
    assert metrics.pct_of(3, 4) == 75.0
    assert metrics.pct_of(7_500_000, 6_000_000) == 125.0
    assert metrics.pct_of(1.0, 0) is None and metrics.pct_of(1.0, 0.0) is None


def test_arithmetic_intensity_by_hand():
    """FLOPs per byte: 2·4096³ FLOPs over 3·4096²·2 bytes (a bf16 square GEMM) is 4096/3."""
    assert metrics.arithmetic_intensity(2 * 4096**3, 3 * 4096**2 * 2) == pytest.approx(4096 / 3, rel=1e-15)
    assert metrics.arithmetic_intensity(10, 0) is None and metrics.arithmetic_intensity(10, None) is None
