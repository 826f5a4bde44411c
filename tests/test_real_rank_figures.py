"""Per-rank figures and the headline ratios of a two-rank job on a real trace, end to end.

nsysai__mfu_2gpu_before (2× H100, one process per GPU, correlationIds repeating across the two
processes), region `FlashAttnFunc` (prefix: PyTorch appends ', seq = N, op_id = M'), occurrences
2-20. Every expected figure is derived here from the file with sqlite3 (docs/figures.md §3-§6), sharing no
code with pipeline/: ranges numbered per process, kernels joined to their launch on correlationId
and process, rank wall = the rank's range start to its range end or last kernel end, whichever is later.
"""

from __future__ import annotations

import sqlite3
import statistics

import pytest

from pipeline.job.config import load_job
from pipeline.run import run_job
from tests.test_real_traces import union
from tests.test_run_synth import write_job

TRACE = "nsysai__mfu_2gpu_before.sqlite"
FIRST, LAST = 2, 20
FLOPS, HFLOPS, GPUS, PEAK = 1.0e12, 1.3e12, 2, 989.4e12       # h100-sxm dense bf16 (configs/hardware.yaml)


def _ranks(path):
    """{pid: [(range start, range end, [(kernel start, end)...]) for occurrences FIRST..LAST]}."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        ranges = con.execute("SELECT globalTid & ~16777215, start, \"end\" FROM NVTX_EVENTS WHERE eventType = 59 "
                             "AND \"end\" IS NOT NULL AND text LIKE 'FlashAttnFunc%' ORDER BY start").fetchall()
        kernels = con.execute(
            "SELECT k.globalPid, k.start, k.\"end\", r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
            "AND r.globalTid & ~16777215 = k.globalPid").fetchall()
    finally:
        con.close()
    out = {}
    for key in sorted({k for k, _, _ in ranges}):
        mine = [(s, e) for k, s, e in ranges if k == key][FIRST - 1:LAST]
        out[(key >> 24) & 0xFFFFFF] = [(s, e, sorted({(ks, ke) for p, ks, ke, launch in kernels
                                                      if p == key and s <= launch <= e})) for s, e in mine]
    return out


def test_rank_figures_and_headline_of_two_real_ranks(real_trace, tmp_path):
    path = real_trace(TRACE)
    ranks = _ranks(path)
    assert sorted(ranks) == [144, 145] and all(len(v) == LAST - FIRST + 1 for v in ranks.values())
    end = {pid: [max([e] + [ke for _, ke in ks]) for _, e, ks in occ] for pid, occ in ranks.items()}
    wall = {pid: [x - s for x, (s, _, _) in zip(end[pid], occ)] for pid, occ in ranks.items()}
    res = run_job(load_job(write_job(
        tmp_path, path, region={"name": "FlashAttnFunc", "match": "prefix", "occurrences": {"first": FIRST, "last": LAST}},
        hardware={"gpu": "h100-sxm", "num_gpus": GPUS, "precision": "bf16"},
        model={"flops_per_step": FLOPS, "hardware_flops_per_step": HFLOPS})))

    got = {(r["pid"], r["occurrence"]): r for r in res["ranks"]}
    for pid, occ in ranks.items():
        for i, (s, e, ks) in enumerate(occ):
            r = got[(pid, FIRST + i)]
            assert (r["start_ns"], round(r["cpu_range_s"] * 1e9), round(r["wall_time_s"] * 1e9)) == (s, e - s, wall[pid][i])
            assert (r["kernel_count"], round(r["gpu_kernel_union_s"] * 1e9)) == (len(ks), union(ks))
            assert r["mfu_pct_wall"] == pytest.approx(100 * FLOPS / (wall[pid][i] * 1e-9 * GPUS * PEAK), rel=1e-9)
    for i, o in enumerate(res["occurrences"]):
        walls, ends = [wall[p][i] for p in ranks], sorted(end[p][i] for p in ranks)
        assert round(o["rank_spread_s"] * 1e9) == max(walls) - min(walls)
        s = res["straggler"]["occurrences"][i]
        assert (s["occurrence"], round(s["spread_s"] * 1e9)) == (FIRST + i, ends[-1] - ends[0])
        assert s["cost_s"] * 1e9 == pytest.approx(ends[-1] - statistics.median(ends), abs=1e-3)
    for r in res["rank_summary"]:
        occ = ranks[r["pid"]]
        envelopes = [(s, x) for (s, _, _), x in zip(occ, end[r["pid"]])]
        assert r["mfu_pct_wall"] == pytest.approx(100 * FLOPS * len(occ) / (union(envelopes) * 1e-9 * GPUS * PEAK))
        assert r["slowest_count"] == sum(1 for i in range(len(occ))
                                         if end[r["pid"]][i] > max(end[p][i] for p in ranks if p != r["pid"]))

    envelopes = [(min(ranks[p][i][0] for p in ranks), max(end[p][i] for p in ranks)) for i in range(LAST - FIRST + 1)]
    wall_ns = union(envelopes)
    union_ns = union([k for occ in ranks.values() for _, _, ks in occ for k in ks])
    n = LAST - FIRST + 1
    assert round(res["totals"]["wall_time_s"] * 1e9) == wall_ns
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * n * FLOPS / (wall_ns * 1e-9 * GPUS * PEAK), rel=1e-12)
    assert res["metrics"]["hfu_pct_wall"] == pytest.approx(100 * n * HFLOPS / (wall_ns * 1e-9 * GPUS * PEAK), rel=1e-12)
    assert res["metrics"]["active_ratio_pct_union"] == pytest.approx(
        100 * n * FLOPS / (union_ns * 1e-9 * GPUS * PEAK), rel=1e-12)
