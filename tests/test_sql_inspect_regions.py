"""inspect_regions.sql (after discovery_occurrences.sql and discovery_work.sql, over inspect_read.sql's read):
name groups ranked by the GPU work they enclose; every figure worked out by hand."""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain
from pipeline.trace.discovery import FILES

P1, P1B, P2 = gtid(1, 1), gtid(1, 2), gtid(2, 2)
PARAMS = {"limit": 10, "min_repeats": 2, "min_share": 0.5, "max_period_cv": 0.2, "warmup_factor": 1.2,
          "max_warmup_held": 0.1}


def regions(con, **params) -> list[dict]:
    return chain.run(con, {"inspect_read", *FILES}, **params)["inspect_regions"]


def _export() -> Export:
    """pid 1: steps 0-100, 100-200 (back to back: two occurrences), 220-320; in step 1 two layers
    10-40 and 50-80, each holding one PyTorch op ('op, op_id = N'); thread 2 has 'worker' 30-35.
    pid 2: steps 5-105, 105-205.
    Kernels (total 290 ns): pid 1 corr 1 launched at 15 -> 20-60; corr 2 at 55 (and again at 56, a
    duplicate launch row) -> 60-100; corr 3 at 100, the boundary of steps 1 and 2 -> 110-150; corr 4
    from thread 2 at 230 -> 240-250; corr 5 at 400, outside every range -> 400-500.
    pid 2 corr 1 (repeats pid 1's id) at 10 -> 20-80 on device 1."""
    e = Export()
    for s, t in ((0, 100), (100, 200), (220, 320)):
        e.range(s, t, P1, "step")
    e.range(10, 40, P1, "layer")
    e.range(50, 80, P1, "layer")
    e.range(12, 20, P1, "op, op_id = 1")
    e.range(52, 60, P1, "op, op_id = 2", via_text_id=True)
    e.range(30, 35, P1B, "worker")
    e.range(5, 105, P2, "step")
    e.range(105, 205, P2, "step")
    for corr, launch, tid, ks, ke in ((1, 15, P1, 20, 60), (2, 55, P1, 60, 100), (3, 100, P1, 110, 150),
                                      (4, 230, P1B, 240, 250), (5, 400, P1, 400, 500)):
        e.launch(launch, tid, corr)
        e.kernel(ks, ke, gpid(1), corr)
    e.launch(56, P1, 2, name="cudaLaunchKernel_v7000")
    e.launch(10, P2, 1)
    e.kernel(20, 80, gpid(2), 1, device=1)
    return e


def test_ranked_groups_by_hand(open_export) -> None:
    rows = regions(open_export(_export()).con, **PARAMS)
    by = {r["name_group"]: r for r in rows}
    assert [r["name_group"] for r in rows] == ["step", "layer", "op", "worker"]
    step = by["step"]
    # per occurrence (pid 1: 80, 40, 10; pid 2: 60, 0) -> sum 190 of 290
    assert (step["occurrences"], step["processes"], step["occurrences_per_process_min"],
            step["occurrences_per_process_max"]) == (5, 2, 2, 3)
    assert (step["median_ns"], step["median_wall_ns"], step["median_kernel_sum_ns"],
            step["median_kernel_union_ns"], step["median_kernel_count"]) == (100, 100, 40, 40, 1)
    assert step["kernel_sum_ns"] == 190 and step["kernel_share"] == pytest.approx(190 / 290)
    # periods 100, 120 (pid 1) and 100 (pid 2): mean 106.67, population sd 9.428
    assert step["period_cv"] == pytest.approx((800 / 9) ** 0.5 / (320 / 3))
    assert step["period_skip"] == 0                          # under 1 + 3 occurrences per process: none left out
    assert (step["min_depth"], step["max_depth"], step["warmup_occurrences"], step["step_like"]) == (0, 0, 0, True)
    layer = by["layer"]
    assert (layer["occurrences"], layer["min_depth"], layer["kernel_sum_ns"], layer["period_ns"]) == (2, 1, 80, 40)
    assert layer["step_like"] is False                       # nested, and 80 / 290 of the kernel time
    op = by["op"]
    assert (op["has_suffix"], op["example"], op["min_depth"], op["kernel_sum_ns"]) == (True, "op, op_id = 1", 2, 80)
    worker = by["worker"]                                    # its own thread: top-level there
    assert (worker["min_depth"], worker["kernel_sum_ns"], worker["period_cv"]) == (0, 0, None)


def test_warmup_and_limit(open_export) -> None:
    e = Export()
    start = 0
    for dur in (300, 100, 110, 100, 90, 100):                # median 100; only the first exceeds 1.2 x
        e.range(start, start + dur, P1, "step")
        start += dur + 10
    e.range(0, 5, P1, "other")
    rows = regions(open_export(e).con, **{**PARAMS, "limit": 1})
    assert len(rows) == 1 and rows[0]["name_group"] == "step" and rows[0]["warmup_occurrences"] == 1
    # periods after the first (steady): 120, 110, 100, 110 -> mean 110, sd 7.071
    assert rows[0]["period_cv"] == pytest.approx(50 ** 0.5 / 110) and rows[0]["period_skip"] == 1


def test_one_period_has_no_cv(open_export) -> None:
    """Two occurrences give one period: no spread to measure, so the CV is NULL, not 0 % (steady); it does not
    stop the name being step-like (2 occurrences, top-level, all of the kernel time)."""
    e = Export()
    e.range(0, 100, P1, "step")
    e.range(300, 400, P1, "step")
    e.launch(10, P1, 1)
    e.kernel(20, 60, gpid(1), 1)
    (row,) = regions(open_export(e).con, **PARAMS)
    assert (row["periods"], row["period_ns"], row["period_cv"], row["step_like"]) == (1, 300, None, True)


def test_unnamed_ranges_are_no_candidate(open_export) -> None:
    """Ranges whose textId is in no StringIds row have no name: they were one group (name NULL) that
    `mfu init` proposed as `region: {name: null}`, and they set the depth of the named ranges inside."""
    e = Export()
    for s in (0, 100, 200):
        e.nvtx.append({"start": s, "end": s + 90, "eventType": 59, "globalTid": P1, "domainId": 0,
                       "text": None, "textId": 999})
        e.range(s + 10, s + 20, P1, "layer")
    rows = regions(open_export(e).con, **PARAMS)
    assert [(r["name_group"], r["occurrences"], r["min_depth"]) for r in rows] == [("layer", 3, 0)]


def test_numbered_names_are_one_group_and_a_named_warm_up_is_skipped(open_export) -> None:
    """'Step 1' ... 'Step 5' (100 ns each, starting 0, 120, 300, 410, 520), the first two inside 'Warm-up'
    (0-230); 'Run' (0-700) on a second thread of the process. One 60 ns kernel launched in each step (300 ns).
    By hand: 'Step <n>' is one group of 5 names; 2 occurrences end by the warm-up's end (230), 3 after; its
    periods after occurrence 2 are 110 and 110 (CV 0). 'Warm-up' says warm-up; 'Run' is open when the warm-up
    ends, so it holds the warm-up's 120 ns of its 300: neither is step-like."""
    e = Export()
    for k, s in enumerate((0, 120, 300, 410, 520), 1):
        e.range(s, s + 100, P1, f"Step {k}")
        e.launch(s + 10, P1, k)
        e.kernel(s + 20, s + 80, gpid(1), k)
    e.range(0, 230, P1, "Warm-up")
    e.range(0, 700, P1B, "Run")
    rows = regions(open_export(e).con, **PARAMS)
    by = {r["name_group"]: r for r in rows}
    assert [r["name_group"] for r in rows] == ["Step <n>", "Run", "Warm-up"]
    step = by["Step <n>"]
    assert (step["numbered"], step["names"], step["example"], step["occurrences"]) == (True, 5, "Step 1", 5)
    assert (step["named_warmup_occurrences"], step["after_warmup"], step["warmup_occurrences"]) == (2, 3, 2)
    assert (step["period_skip"], step["period_cv"], step["kernel_sum_ns"], step["step_like"]) == (2, 0.0, 300, True)
    assert (by["Warm-up"]["warmup_named"], by["Warm-up"]["step_like"], by["Warm-up"]["kernel_sum_ns"]) == (True, False, 120)
    assert (by["Run"]["warmup_named"], by["Run"]["after_warmup"], by["Run"]["step_like"]) == (False, 1, False)
    assert (by["Run"]["warmup_held_ns"], by["Run"]["kernel_sum_ns"], step["warmup_held_ns"]) == (120, 300, 0)
    assert by["Run"]["numbered"] is False and by["Run"]["names"] == 1
