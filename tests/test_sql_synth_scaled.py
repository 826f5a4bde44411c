"""The DuckDB-side generator for benchmark traces: right shape and quirks, and the pipeline's
figures agree with a sort-and-merge over the rows read back (synth.union_ns)."""

from __future__ import annotations

import json
import sqlite3

from pipeline.job.config import load_job
from pipeline.run import run_job
from pipeline.trace.synth import SynthSpec, union_ns
from pipeline.trace.synth_scaled import generate_scaled


def test_scaled_trace_counts_and_union(tmp_path):
    path = tmp_path / "big.sqlite"
    truth = generate_scaled(SynthSpec(ranks=3, steps=4, kernels_per_step=50), path)
    con = sqlite3.connect(path)
    kernels = con.execute("SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
    runtime = con.execute("SELECT count(*), count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    ranges = con.execute("SELECT globalTid, start, end FROM NVTX_EVENTS WHERE textId = 1 ORDER BY start").fetchall()
    con.close()
    assert len(kernels) == truth["kernels"] == 600 and runtime == (truth["runtime_rows"], 6)
    assert len({c for _, _, _, c in kernels}) == 200                   # correlationIds repeat across ranks
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps({
        "name": "scaled", "trace": str(path), "region": {"name": "train_step", "occurrences": {"first": 2, "last": 3}},
        "hardware": {"gpu": "auto", "num_gpus": 3, "precision": "bf16"}, "model": {"flops_per_step": 1.0e+12},
        "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}))
    res = run_job(load_job(job))
    assert [o["index"] for o in res["occurrences"]] == [2, 3]
    for occ in res["occurrences"]:
        planted = [(s, e) for s, e, _, c in kernels if (occ["index"] - 1) * 50 < c <= occ["index"] * 50]
        assert occ["kernel_count"] == truth["occurrences"][occ["index"] - 1]["kernel_count"] == len(planted)
        assert round(occ["gpu_kernel_union_s"] * 1e9) == union_ns(planted)
        assert round(occ["gpu_kernel_sum_s"] * 1e9) == sum(e - s for s, e in planted)
        assert occ["wall_time_s"] > occ["cpu_range_s"]                  # the async tail is planted
    assert len(ranges) == 12


def test_chunks_of_steps_write_the_rows_one_statement_would(tmp_path, monkeypatch):
    """generate_scaled writes a chunk of steps per statement (memory held by DuckDB grows with the rows one
    INSERT writes: one statement for 8 M kernels ran out of its 512 MB). Chunks of one step and one chunk of
    all four give the same rows in every table, and each step's kernels are all there (3 ranks x 50)."""
    import pipeline.trace.synth_scaled as scaled
    tables = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS")

    def rows(chunk: int, name: str) -> dict[str, list]:
        monkeypatch.setattr(scaled, "CHUNK_KERNELS", chunk)
        path = tmp_path / name
        generate_scaled(SynthSpec(ranks=3, steps=4, kernels_per_step=50), path)
        con = sqlite3.connect(path)
        out = {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
        con.close()
        return out

    one, per_step = rows(10**9, "one.sqlite"), rows(150, "steps.sqlite")
    assert one == per_step
    assert len(one["CUPTI_ACTIVITY_KIND_KERNEL"]) == 4 * 3 * 50
    assert len(one["NVTX_EVENTS"]) == 2 * 4 * 3                      # a step range and an op range per rank
