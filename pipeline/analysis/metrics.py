"""MFU and friends as small pure functions (docs/figures.md §1, §6, §9).

Inputs are plain numbers: FLOPs as integers, times in seconds, peaks in TFLOP/s.
Nothing here knows about traces or jobs, so every figure can be checked by hand.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from fractions import Fraction
from numbers import Integral

from pipeline.errors import ResultWarning

TERA = 1e12
# Step-time warning (issue #12, docs/figures.md §6): CV above 10 %, or one step above twice the median;
# a step within ±10 % of the median counts as steady.
UNSTEADY_CV_PCT = 10.0
OUTLIER_FACTOR = 2
STEADY_BAND = 0.10


def utilization_pct(flops: float, seconds: float, num_gpus: int, peak_tflops: float) -> float | None:
    """FLOPs / (time x GPUs x peak), in percent. docs/figures.md §1 (MFU_wall, HFU_wall, active ratio).

    None when there is no time to divide by (an empty union): no figure beats a made-up one.
    Work exactly at the peak is 100.0: §6 refuses a figure *above* 100 %, and the float product is a few
    ulp off, either way (wall 2.231593033 s x 8 GPUs x 312 TFLOP/s gave 100.00000000000001). Near 100 the
    figure is worked out again exactly, from the decimals the inputs stand for (ns / 1e9, a peak as written).
    """
    return _share_pct(flops, seconds, num_gpus, peak_tflops, 10**12)


def bandwidth_pct(nbytes: float, seconds: float, num_gpus: int, hbm_gbps: float) -> float | None:
    """Bytes / (time x GPUs x memory bandwidth), in percent: the memory roof's share (docs/figures.md §9), exactly
    100.0 for traffic exactly at the bandwidth, as utilization_pct is for work exactly at the peak."""
    return _share_pct(nbytes, seconds, num_gpus, hbm_gbps, 10**9)


def _share_pct(amount: float, seconds: float, num_gpus: int, rate: float, unit: int) -> float | None:
    """amount / (seconds x GPUs x rate x unit) in percent; within 1e-12 of 100, worked out exactly."""
    if seconds <= 0:
        return None
    pct = 100.0 * amount / (seconds * num_gpus * rate * unit)
    if abs(pct - 100.0) <= 1e-12 * 100.0:
        pct = float(100 * _decimal(amount) / (_decimal(seconds) * num_gpus * _decimal(rate) * unit))
    return pct


def _decimal(x: float) -> Fraction:
    """An integer as it is; a float as the shortest decimal that reads back as it (2.231593033, not the
    binary fraction nearest to it): the value a time in ns / 1e9 or a peak written in a file stands for."""
    return Fraction(x) if isinstance(x, Integral) else Fraction(repr(float(x)))


def achieved_tflops_per_gpu(flops: float, seconds: float, num_gpus: int) -> float | None:
    """Model FLOPs / (wall x GPUs) / 1e12. docs/figures.md §1."""
    return flops / (seconds * num_gpus) / TERA if seconds > 0 else None


def tokens_per_s(tokens: float, seconds: float) -> float | None:
    """Tokens processed in the selected work / wall time. docs/figures.md §1."""
    return tokens / seconds if seconds > 0 else None


def step_stats(seconds: Sequence[float]) -> dict[str, float]:
    """Median, min, max and coefficient of variation of per-occurrence wall times (docs/figures.md §6)."""
    mean = statistics.fmean(seconds)
    cv = statistics.pstdev(seconds) / mean if len(seconds) > 1 and mean > 0 else 0.0
    return {"median_s": statistics.median(seconds), "min_s": min(seconds), "max_s": max(seconds),
            "mean_s": mean, "cv_pct": 100.0 * cv}


def pct_of(part: float, whole: float) -> float | None:
    """part / whole in percent (a share of the wall, of a cross-check figure); None when there is no whole."""
    return 100.0 * part / whole if whole else None


def arithmetic_intensity(flops: float, nbytes: float | None) -> float | None:
    """FLOPs per byte moved: where an operator sits on the roofline's x axis. docs/figures.md §9."""
    return flops / nbytes if nbytes else None


def ridge_flop_per_byte(peak_tflops: float, hbm_gbps: float) -> float:
    """Peak / bandwidth: the arithmetic intensity where the roofs meet. docs/figures.md §9."""
    return peak_tflops * TERA / (hbm_gbps * 1e9)


def attainable_tflops(intensity: float, peak_tflops: float, hbm_gbps: float) -> float:
    """min(peak, AI x bandwidth). docs/figures.md §9 (roofline)."""
    return min(peak_tflops, intensity * hbm_gbps * 1e9 / TERA)


def unsteady_steps(indices: Sequence[int], seconds: Sequence[float], ran: Sequence[bool],
                   last_is_envelope: bool = False) -> ResultWarning | None:
    """A warning when step times vary (CV > 10 % or one step > 2x the median), naming the outliers
    (beyond ±10 % of the median) and the longest run of steady occurrences to select instead. An
    occurrence where no kernel ran (`ran` false) is never part of that run: selected alone, it
    holds no GPU work for the FLOPs (checks.plausibility.union_diagnostic_above_100 refuses it).

    docs/figures.md §6: a warm-up step or a 50x outlier must be visible, not averaged away.

    `last_is_envelope`: the occurrences overlap and earlier step times are periods to the next start,
    but the last selected one has no next start, so its step time is its envelope (docs/figures.md §6). When
    that one is the longest, the message says so: it is how the step was measured, maybe not the work.
    """
    if len(seconds) < 2:
        return None
    stats = step_stats(seconds)
    med = stats["median_s"]
    worst = max(range(len(seconds)), key=lambda i: seconds[i])
    if stats["cv_pct"] <= UNSTEADY_CV_PCT and seconds[worst] <= OUTLIER_FACTOR * med:
        return None
    steady = [abs(s / med - 1) <= STEADY_BAND if med > 0 else False for s in seconds]
    outliers = [k for k, ok in zip(indices, steady) if not ok]
    steady = [ok and r for ok, r in zip(steady, ran)]
    best, start = (0, 0), None
    for i, ok in enumerate(steady + [False]):
        if ok and start is None:
            start = i
        elif not ok and start is not None:
            best, start = max(best, (i - start, -start)), None
    msg = (f"step time varies: CV {stats['cv_pct']:.1f} % over occurrences {indices[0]}-{indices[-1]}; "
           f"occurrence {indices[worst]} takes {seconds[worst]:.6g} s, {seconds[worst] / med:.2f}x the median "
           f"{med:.6g} s. Outside ±10 % of the median: {', '.join(map(str, outliers))}")
    if last_is_envelope and worst == len(seconds) - 1:
        msg += (f". Occurrence {indices[-1]} is the last selected: with no next start its step time is its "
                f"envelope (range start to last kernel end), while the earlier ones are periods to the next "
                f"start, as the occurrences overlap; select one occurrence more, where the trace has one, to "
                f"measure its period instead")
    if best[0] >= 2 and best[0] < len(seconds):
        first, last = indices[-best[1]], indices[-best[1] + best[0] - 1]
        msg += (f". The longest steady run is occurrences {first}-{last}: select it with "
                f"region.occurrences: {{first: {first}, last: {last}}}")
    return {"code": "unsteady_steps", "message": msg}
