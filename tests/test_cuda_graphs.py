"""Issue #11 §3: CUDA graphs captured at node level and at graph level (docs/figures.md §4).

The synthetic generator plants one graph launch per step and rank and writes the truth as it
plants: node mode, every node a kernel row sharing the launch's correlationId; graph mode, one
CUPTI_ACTIVITY_KIND_GRAPH_TRACE row from the first node's start to the last one's end."""

from __future__ import annotations

import pytest

from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.test_run_synth import write_job

NS = 1_000_000_000
SPEC = {"ranks": 2, "steps": 4, "kernels_per_step": 12, "nccl_every": 0}
ALL = {"occurrences": {"first": 1, "last": 4}}


def _run(synth_trace, tmp_path, **spec):
    path, truth = synth_trace(**{**SPEC, **spec})
    res = run_job(load_job(write_job(tmp_path, path, region=ALL, hardware={"peak_tflops": 50000})))
    return res, truth


def _times(res) -> list[tuple[int, int, int, int]]:
    return [(round(o["wall_time_s"] * NS), round(o["gpu_kernel_sum_s"] * NS), round(o["gpu_kernel_union_s"] * NS),
             o["kernel_count"]) for o in res["occurrences"]]


def _truth(truth) -> list[tuple[int, int, int, int]]:
    return [(o["wall_ns"], o["kernel_sum_ns"], o["kernel_union_ns"], o["kernel_count"]) for o in truth["occurrences"]]


@pytest.mark.parametrize("mode", ["node", "graph"])
def test_times_match_the_planted_truth(synth_trace, tmp_path, mode):
    res, truth = _run(synth_trace, tmp_path, cuda_graph=mode)
    assert _times(res) == _truth(truth)
    for got, want in zip(res["occurrences"], truth["occurrences"]):
        assert {d: round(s * NS) for d, s in got["device_union_s"].items()} == want["device_union_ns"]


def test_node_mode_attributes_every_kernel_of_one_launch(synth_trace, tmp_path):
    res, _ = _run(synth_trace, tmp_path, cuda_graph="node")
    assert [o["kernel_count"] for o in res["occurrences"]] == [2 * 12] * 4      # 12 nodes x 2 ranks, one launch each
    assert "cuda_graph" not in {c["class"] for c in res["kernel_classes"]}
    assert not [w for w in res["warnings"] if w["code"] == "cuda_graph_rows"]


def test_graph_mode_rows_are_gpu_work_of_class_cuda_graph_and_the_report_says_so(synth_trace, tmp_path):
    res, truth = _run(synth_trace, tmp_path, cuda_graph="graph")
    assert [(c["class"], c["count"]) for c in res["kernel_classes"]] == [("cuda_graph", 2 * 4)]
    assert round(res["kernel_classes"][0]["sum_s"] * NS) == sum(o["kernel_sum_ns"] for o in truth["occurrences"])
    assert [k["name"] for k in res["top_kernels"]] == ["[CUDA graph 1]"]
    assert res["gemm_precision"]["precisions"] == []
    [warning] = [w for w in res["warnings"] if w["code"] == "cuda_graph_rows"]
    assert warning["message"].startswith("8 CUDA graph launches were recorded as one row each")
    assert "per-kernel detail" in render_all(res)["report.md"]


@pytest.mark.parametrize("gap_ns", [20_000, 0])
def test_one_step_captured_both_ways(synth_trace, tmp_path, gap_ns):
    """Equal wall; a graph row also covers the gaps between its nodes, so its union is at least the
    nodes' union (per device: larger by the gaps), and equal when the nodes run back to back."""
    node, _ = _run(synth_trace, tmp_path, cuda_graph="node", graph_gap_ns=gap_ns)
    graph, _ = _run(synth_trace, tmp_path, cuda_graph="graph", graph_gap_ns=gap_ns)
    for n, g in zip(_times(node), _times(graph)):
        assert g[0] == n[0]                                   # wall
        assert g[2] >= n[2] if gap_ns else g[2] == n[2]       # union over both GPUs
    gaps = (12 - 1) * gap_ns                                  # between the 12 nodes of one launch
    for n, g in zip(node["occurrences"], graph["occurrences"]):
        for device, node_s in n["device_union_s"].items():
            assert round(g["device_union_s"][device] * NS) - round(node_s * NS) == gaps


def test_graph_rows_of_several_rank_files_combine(tmp_path):
    """One file per rank, each captured at graph level with the same pid and graphId: each launch
    stays its own row of its own rank and device, and the times agree with the files' truth."""
    from tests.test_ranks import STEPS, job, rank_files
    truths = rank_files(tmp_path, [{"first_pid": 4000, "cuda_graph": "graph", "nccl_every": 0}] * 2)
    res = run_job(load_job(job(tmp_path, ["r0.sqlite", "r1.sqlite"], num_gpus=2)))
    assert [(c["class"], c["count"]) for c in res["kernel_classes"]] == [("cuda_graph", 2 * STEPS)]
    assert round(res["kernel_classes"][0]["sum_s"] * NS) == sum(o["kernel_sum_ns"] for t in truths
                                                                for o in t["occurrences"])
    for got in res["occurrences"]:
        assert got["kernel_count"] == 2 and len(got["device_union_s"]) == 2


def test_window_attribution_clips_graph_rows_to_the_range(synth_trace, tmp_path):
    """Without a runtime table, graph rows are attributed by time window like kernels: clipped to
    each range. Expected sums read from a copy of the file with sqlite3."""
    import shutil
    import sqlite3
    path, _ = synth_trace(**{**SPEC, "ranks": 1}, cuda_graph="graph")
    copy = tmp_path / "no_runtime.sqlite"
    shutil.copyfile(path, copy)
    con = sqlite3.connect(copy)
    con.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
    con.commit()
    want = [ns for (ns,) in con.execute(
        "SELECT min(g.\"end\", n.\"end\") - max(g.start, n.start) FROM NVTX_EVENTS n "
        "JOIN StringIds s ON s.id = n.textId AND s.value = 'train_step' "
        "JOIN CUPTI_ACTIVITY_KIND_GRAPH_TRACE g ON g.start < n.\"end\" AND g.\"end\" > n.start ORDER BY n.start")]
    con.close()
    res = run_job(load_job(write_job(tmp_path, copy, region=ALL, hardware={"peak_tflops": 50000, "num_gpus": 1})))
    assert "attribution_window" in {w["code"] for w in res["warnings"]}
    assert [round(o["gpu_kernel_sum_s"] * NS) for o in res["occurrences"]] == want
    assert [(c["class"], c["count"]) for c in res["kernel_classes"]] == [("cuda_graph", 4)]


def test_a_single_graph_launch_row_is_said_too(tmp_path):
    """docs/figures.md §4: the report says graph-level rows were used whenever one is counted; the boundary is one
    launch, not several. By hand: pid 100, step 1000..2000, one cudaGraphLaunch at 1100 whose graph ran
    1200..1700 as one GRAPH_TRACE row (500 ns), beside one kernel launched at 1050 (1100..1150, 50 ns)."""
    import sqlite3
    from nsys_export import Export, gpid, gtid
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.launch(1100, gtid(100, 100), 1, name="cudaGraphLaunch")
    e.launch(1050, gtid(100, 100), 2)
    e.kernel(1100, 1150, gpid(100), 2, name="sm90_xmma_gemm_bf16")
    path = e.write(tmp_path / "one_graph.sqlite")
    with sqlite3.connect(path) as con:
        con.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, "end" INTEGER NOT NULL, '
                    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
                    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL, "
                    "graphExecId INTEGER NOT NULL)")
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (1200, 1700, 0, 1, NULL, 7, 1, ?, 5, 9)",
                    (gpid(100),))
    res = run_job(load_job(write_job(tmp_path, path, region={"name": "step"},
                                     hardware={"gpu": "auto", "num_gpus": 1, "peak_tflops": 1e-3},
                                     model={"flops_per_step": 100.0}, workload={"seq_len": 4, "global_batch": 1})))
    assert [(c["class"], c["count"], round(c["sum_s"] * NS)) for c in res["kernel_classes"]] == [
        ("cuda_graph", 1, 500), ("gemm", 1, 50)]
    [warning] = [w for w in res["warnings"] if w["code"] == "cuda_graph_rows"]
    assert warning["message"].startswith("1 CUDA graph launch was recorded as one row (CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    assert "5e-07 s summed): it counts in wall, kernel sum and union as class cuda_graph" in warning["message"]
