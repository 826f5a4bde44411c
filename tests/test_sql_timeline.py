"""timeline.sql: the lanes of one step, by hand on planted intervals and against the synthetic trace."""

from __future__ import annotations

import pytest

from pipeline.analysis.timeline import median_occurrence
from pipeline.trace import chain
from tests.sqlfixtures import with_ranges


def _timeline(con, **params):
    """The lanes as analysis/timeline.py asks for them: islands first (timeline_islands.sql)."""
    return chain.run(con, {"timeline_islands", "timeline"}, **params)["timeline"]


def _lanes(rows):
    out = {}
    for r in rows:
        out.setdefault((r["lane"], r["device_id"]), []).append((r["start_ns"], r["end_ns"]))
    return out


def test_by_hand():
    con = with_ranges([
        # occurrence 2 starts at 1000 (earliest range); device 0: gemm [1000,1030), [1032,1050) -> joined
        # at min_gap 5 (gap 2); NCCL [1040,1070); a copy [1080,1090); nothing on device 0 after 1070
        (2, 0, "gemm", "gemm", 1000, 1030), (2, 0, "gemm", "gemm", 1032, 1050),
        (2, 0, "nccl", "communication", 1040, 1070), (2, 0, "[CUDA memcpy]", "memory", 1080, 1090),
        # device 1: one kernel that ends after every range: it sets the wall end (1120)
        (2, 1, "gemm", "gemm", 1100, 1120),
        # another occurrence is not drawn
        (3, 0, "gemm", "gemm", 5000, 6000),
    ], [(2, 10, 1000, 1095), (2, 11, 1005, 1110), (3, 10, 4990, 7000)])
    got = _lanes(_timeline(con, occurrence=2, devices=[0, 1, 2], min_gap_ns=5, comm_class="communication"))
    assert got[("wall", None)] == [(0, 120)] and got[("nvtx", None)] == [(0, 110)]
    assert got[("compute", 0)] == [(0, 50)]                 # the 2 ns gap is under one pixel: joined
    assert got[("communication", 0)] == [(40, 70)]
    assert got[("memory", 0)] == [(80, 90)]
    assert got[("idle", 0)] == [(70, 120)]                  # copies are not kernels: the device idles
    assert got[("compute", 1)] == [(100, 120)] and got[("idle", 1)] == [(0, 100)]
    assert got[("idle", 2)] == [(0, 120)]                   # a device with no kernel idles the whole step
    # with no joining, the 2 ns gap shows as compute islands and as idle
    exact = _lanes(_timeline(con, occurrence=2, devices=[0], min_gap_ns=0, comm_class="communication"))
    assert exact[("compute", 0)] == [(0, 30), (32, 50)]
    assert exact[("idle", 0)] == [(30, 32), (70, 120)]


def test_median_occurrence():
    occ = [{"occurrence": i, "wall_ns": w, "kernel_count": 5} for i, w in [(1, 30), (2, 10), (3, 20), (4, 40)]]
    assert median_occurrence(occ) == (occ[2], 4)                # lower median of 10, 20, 30, 40
    assert median_occurrence(occ[:3]) == (occ[2], 3)
    equal = [{"occurrence": i, "wall_ns": 10, "kernel_count": 5} for i in (1, 2, 3, 4)]
    assert median_occurrence(equal) == (equal[1], 4)            # equal walls: in occurrence order, the lower middle


def test_median_occurrence_among_those_where_kernels_ran():
    """On a real op-level trace the lower median of 140 walls was a kernel-less range: an empty chart."""
    walls = [(1, 5), (2, 6), (3, 7), (4, 50), (5, 60), (6, 70), (7, 80)]
    occ = [{"occurrence": i, "wall_ns": w, "kernel_count": 0 if w < 10 else 3} for i, w in walls]
    assert median_occurrence(occ) == (occ[4], 4)                # 50, 60, 70, 80 -> 60; not 50 of all seven
    none_ran = [dict(o, kernel_count=0) for o in occ]
    assert median_occurrence(none_ran) == (none_ran[3], 7)      # nothing ran anywhere: all of them


def test_synthetic_step_matches_the_measured_wall(synth_trace, tmp_path):
    from pipeline.job.config import load_job
    from pipeline.run import run_job
    from tests.test_run_synth import write_job
    trace, _ = synth_trace(ranks=2, steps=5, seed=3)
    res = run_job(load_job(write_job(tmp_path, trace)))
    t = res["timeline"]
    occ = next(o for o in res["occurrences"] if o["index"] == t["occurrence"])
    walls = sorted(o["wall_time_s"] for o in res["occurrences"])
    assert occ["wall_time_s"] == walls[(len(walls) - 1) // 2]
    assert t["wall_s"] == pytest.approx(occ["wall_time_s"], abs=1e-9)
    for d in t["devices"]:
        # busy (compute or communication) and idle tile the wall; joining only moves sub-pixel gaps
        idle = sum(e - s for s, e in d["idle"])
        union = occ["device_union_s"][str(d["device_id"])]
        assert idle + union == pytest.approx(t["wall_s"], abs=t["joined_below_s"] * (len(d["compute"]) + 2) * 4)
        assert all(0 <= s < e <= t["wall_s"] + 1e-12 for lane in ("compute", "communication", "idle")
                   for s, e in d[lane])
        # the exact lane times: idle and the device's union (window_unions, another path) tile the wall
        assert d["lane_time_s"]["idle"] + union == pytest.approx(t["wall_s"], abs=1e-9)
        assert max(d["lane_time_s"]["compute"], d["lane_time_s"]["communication"]) <= union + 1e-9 \
            <= d["lane_time_s"]["compute"] + d["lane_time_s"]["communication"] + 1e-9
