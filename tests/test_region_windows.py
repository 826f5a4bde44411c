"""Regions that are no NVTX range (issue #30): the capture's GPU-active window and an explicit time window.

Synthetic traces (trace/synth.py) with the truth read back here from the file with the standard library's
sqlite3 and a plain clip, sort and merge (synth.union_ns): each window is one occurrence, whose wall, kernel sum,
union, count and per-device unions equal it to the nanosecond, memory copies included in the wall and in class
memory.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from markupsafe import escape

from pipeline.cli import main
from pipeline.job.config import load_job
from pipeline.run import run_job
from pipeline.trace.synth import union_ns

NS = 1_000_000_000
# 2 ranks x 4 steps, setup kernels before the first step (no range holds them: the active window does)
SPEC = {"ranks": 2, "steps": 4, "kernels_per_step": 12, "nccl_every": 0, "nvtx": False}


def job(folder: Path, trace: Path, region: dict, **over) -> Path:
    body = {"name": "window", "trace": str(trace), "region": region,
            "hardware": {"num_gpus": 2, "precision": "bf16", "peak_tflops": 50000},
            "model": {"flops_per_step": 4.0e+14}, "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16},
            **over}
    path = folder / "job.yaml"
    path.write_text(json.dumps(body))
    return path


def planted(trace: Path, window: tuple[int, int] | None = None) -> dict:
    """The truth of a window over the file's GPU rows: every row clipped to `window`, or (None) the GPU-active
    window, the first row's start to the last one's end (each process's rows lie in its own window). Kernel
    figures count kernel and CUDA graph rows; memory copies stretch the wall and fill class memory."""
    con = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    try:
        present = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        rows = [(s, e, d, table != "CUPTI_ACTIVITY_KIND_MEMCPY")
                for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                              "CUPTI_ACTIVITY_KIND_MEMCPY") if table in present
                for s, e, d in con.execute(f'SELECT start, "end", deviceId FROM {table}')]
    finally:
        con.close()
    lo, hi = window or (min(s for s, *_ in rows), max(e for _, e, *_ in rows))
    inside = [(max(s, lo), min(e, hi), d, kernel) for s, e, d, kernel in rows if s < hi and e > lo]
    kernels = [(s, e) for s, e, _, kernel in inside if kernel]
    return {"start_ns": lo, "wall_ns": hi - lo, "kernel_count": len(kernels),
            "kernel_sum_ns": sum(e - s for s, e in kernels), "kernel_union_ns": union_ns(kernels),
            "memory_sum_ns": sum(e - s for s, e, _, kernel in inside if not kernel),
            "device_union_ns": {str(d): union_ns([(s, e) for s, e, dev, kernel in inside if kernel and dev == d])
                                for d in sorted({d for _, _, d, kernel in inside if kernel})}}


def measured(res: dict) -> dict:
    """The one occurrence in integer ns, as the truth writes it."""
    [o] = res["occurrences"]
    memory = sum(c["sum_s"] for c in res["kernel_classes"] if c["class"] == "memory")
    return {"start_ns": o["start_ns"], "wall_ns": round(o["wall_time_s"] * NS), "kernel_count": o["kernel_count"],
            "kernel_sum_ns": round(o["gpu_kernel_sum_s"] * NS), "kernel_union_ns": round(o["gpu_kernel_union_s"] * NS),
            "memory_sum_ns": round(memory * NS),
            "device_union_ns": {d: round(s * NS) for d, s in o["device_union_s"].items()}}


def run(tmp_path: Path, trace: Path, region: dict) -> dict:
    return run_job(load_job(job(tmp_path, trace, region)))


def test_gpu_active_window_of_kernels_and_memory_copies(synth_trace, tmp_path):
    trace, _ = synth_trace(**SPEC, memcpy_ns=300_000)
    res = run(tmp_path, trace, {"kind": "gpu_active"})
    want = planted(trace)
    assert measured(res) == want and want["memory_sum_ns"] == 2 * 4 * 300_000
    assert want["kernel_count"] == 2 * (4 * 12 + 3)          # the setup kernels too: every GPU row of the process
    assert (res["totals"]["occurrences"], res["region"]["first"], res["region"]["last"]) == (1, 1, 1)
    assert res["region"]["attribution"] == "window" and res["status"] == "ok"
    assert round(res["totals"]["wall_time_s"] * NS) == want["wall_ns"]


@pytest.mark.parametrize("cache", [False, True])
def test_gpu_active_window_of_cuda_graph_launches_only(synth_trace, tmp_path, capsys, cache):
    """Graph-level capture: no kernel rows but the setup kernels, one GRAPH_TRACE row per step and rank. Through
    `mfu run` (exit 0) with and without the cache, whose kept window keys on the region's kind."""
    trace, _ = synth_trace(**SPEC, cuda_graph="graph", setup_kernels=0)
    want = planted(trace)
    extra = ["--cache", str(tmp_path / "cache")] if cache else []
    for _ in range(2 if cache else 1):
        assert main(["run", str(job(tmp_path, trace, {"kind": "gpu_active"})), "--out", str(tmp_path / "out"),
                     *extra]) == 0, capsys.readouterr().err
        res = json.loads((tmp_path / "out/window/result.json").read_text())
        assert measured(res) == want and want["kernel_count"] == 2 * 4
        assert [c["class"] for c in res["kernel_classes"]] == ["cuda_graph"]


def test_time_window_clips_every_process_to_it(synth_trace, tmp_path):
    """1.03 s to 1.13 s of the capture: inside step 1 to inside step 3 of both ranks (steps start at 1.0 s, every
    52 ms); rows crossing either end count only inside it, and the NVTX ranges in the trace play no part."""
    lo, hi = 1_030_000_000, 1_130_000_000
    trace, _ = synth_trace(**{**SPEC, "nvtx": True}, memcpy_ns=300_000)
    res = run(tmp_path, trace, {"kind": "time_window", "start_s": 1.03, "end_s": 1.13})
    want = planted(trace, (lo, hi))
    assert measured(res) == want and (want["start_ns"], want["wall_ns"]) == (lo, hi - lo)
    assert want["kernel_sum_ns"] < planted(trace)["kernel_sum_ns"] and want["memory_sum_ns"] == 2 * 2 * 300_000
    assert res["region"]["kind"] == "time_window"


def test_a_time_window_with_no_gpu_work_says_where_the_work_is(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace(**SPEC, memcpy_ns=300_000)
    truth = planted(trace)
    code = main(["run", str(job(tmp_path, trace, {"kind": "time_window", "start_s": 5, "end_s": 6.5})),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    first, wall = truth["start_ns"], truth["wall_ns"]
    assert code == 4 and (f"{trace}: no GPU work overlaps the time window 5 s to 6.5 s after the capture's start; "
                          f"the trace's GPU work runs from {first / NS:.6g} s to {(first + wall) / NS:.6g} s after "
                          "it. Fix region.start_s and region.end_s in the job") in err, err


def test_the_headline_says_what_was_measured(synth_trace, tmp_path, capsys):
    """Markdown and HTML: the window's kind and length in words where an NVTX region names its range."""
    trace, _ = synth_trace(**SPEC, memcpy_ns=300_000)
    wall_ms = planted(trace)["wall_ns"] / 1e6
    assert 100 <= wall_ms < 1000
    wall = f"{wall_ms:.1f}\u00a0ms"        # 4 significant digits, as the report prints
    for region, said in (({"kind": "gpu_active"}, f"no NVTX range: the GPU-active window of the capture, {wall}"),
                         ({"kind": "time_window", "start_s": 1, "end_s": 1.2},
                          "no NVTX range: the time window 1\u00a0s to 1.2\u00a0s after the capture's start, "
                          "200.0\u00a0ms")):
        assert main(["run", str(job(tmp_path, trace, region)), "--out", str(tmp_path / "out")]) == 0
        md, html = ((tmp_path / "out/window" / f).read_text() for f in ("report.md", "report.html"))
        assert f"bf16 · {said} · trace `{trace}`" in md
        assert f"bf16 · {escape(said)} · trace <code>{trace}</code>" in html        # autoescaped: capture&#39;s
        assert "`None`" not in md and "<code>None</code>" not in html
        res = json.loads((tmp_path / "out/window/result.json").read_text())
        assert {k: res["region"][k] for k in ("kind", "start_s", "end_s", "name", "match")} == {
            "kind": region["kind"], "start_s": region.get("start_s"), "end_s": region.get("end_s"), "name": None,
            "match": None}
    capsys.readouterr()


def test_a_trace_given_where_a_job_file_goes_is_told_to_init(synth_trace, tmp_path, capsys):
    """By its SQLite header, whatever its name: not 'not UTF-8 text ... iconv'. Exit 2, a usage error."""
    trace, _ = synth_trace(**SPEC)
    renamed = tmp_path / "job.yaml"
    renamed.write_bytes(trace.read_bytes())
    for given in (trace, renamed):
        for command in (["run", str(given), "--out", str(tmp_path / "out")], ["validate", str(given)]):
            assert main(command) == 2
            err = capsys.readouterr().err
            assert (f"{given}: is an SQLite file (an Nsight Systems export?), not a job file: a job file names the "
                    f"trace and says what to measure in it. Write one with `mfu init {given} -o job.yaml`") in err, err
            assert "UTF-8" not in err and "Traceback" not in err


def test_gpu_work_without_length_is_refused_not_measured(tmp_path, capsys):
    """Every kernel of the process ends at its start: the window is no interval (exit 4, export again), where
    scope.ranges_have_length would have blamed NVTX_EVENTS, a table this trace does not have."""
    from nsys_export import Export, gpid
    e = Export()
    e.kernel(1000, 1000, gpid(100), 1)
    e.kernel(1500, 1000, gpid(100), 2)
    trace = e.write(tmp_path / "lost.sqlite")
    assert main(["run", str(job(tmp_path, trace, {"kind": "gpu_active"})), "--out", str(tmp_path / "out")]) == 4
    err = capsys.readouterr().err
    assert (f"{trace}: the GPU work of 1 of 1 process(es) has no length: every row ends at or before the first one's "
            "start, so its GPU-active window is no time interval") in err and "NVTX" not in err, err
