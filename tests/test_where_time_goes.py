"""Issue #5 end to end on synthetic traces: classes, overlap, roofline rows and their sources.

One file, and several files (one per node) whose kernels are named by each file's own strings."""

from __future__ import annotations

import json

import pytest

from pipeline.job.config import load_job
from pipeline.job.documents import validator
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.test_ranks import NS, STEPS, job, rank_files
from tests.test_run_synth import write_job

LLAMA = {"preset": "llama-3-8b"}
WORK = {"seq_len": 8192, "global_batch": 1}
BIG_PEAK = {"peak_tflops": 50000}      # a 50 ms synthetic step needs a large peak to stay < 100 % MFU


def _run(synth_trace, tmp_path, spec=None, **over):
    trace, truth = synth_trace(**(spec or {}))
    return run_job(load_job(write_job(tmp_path, trace, **over))), truth


def test_classes_and_schema(synth_trace, tmp_path):
    res, truth = _run(synth_trace, tmp_path, model=LLAMA, workload=WORK, hardware=BIG_PEAK)
    classes = {c["class"]: c for c in res["kernel_classes"]}
    # default spec: 2 ranks x 5 steps x 40 kernels, every 8th is NCCL -> 50 communication kernels
    assert classes["communication"]["count"] == 2 * 5 * 40 // 8
    assert sum(c["count"] for c in classes.values()) == res["totals"]["kernel_count"]
    assert res["hardware"]["ridge_flop_per_byte"] == pytest.approx(50000e12 / 3350e9)
    assert [e.message for e in validator("result.schema.json").iter_errors(json.loads(json.dumps(res)))] == []
    dev0 = res["communication"]["devices"][0]
    want = sum(o["device_comm_ns"]["0"]["exposed_ns"] for o in truth["occurrences"])
    assert round(dev0["exposed_s"] * 1e9) == want
    # totals over both devices, and the exposed share of all communication time
    per_device = [d for o in truth["occurrences"] for d in o["device_comm_ns"].values()]
    exposed, hidden = sum(d["exposed_ns"] for d in per_device), sum(d["hidden_ns"] for d in per_device)
    totals = res["communication"]["totals"]
    assert (round(totals["exposed_s"] * 1e9), round(totals["hidden_s"] * 1e9)) == (exposed, hidden)
    assert totals["exposed_share_of_comm"] == pytest.approx(exposed / (exposed + hidden))


def test_analytic_rows_and_unambiguous_matching(synth_trace, tmp_path):
    res, _ = _run(synth_trace, tmp_path, model=LLAMA, workload=WORK, hardware=BIG_PEAK)
    rows = {r["operator"]: r for r in res["roofline"]}
    assert rows["QKV projection"]["measured_s"] is None          # shares the gemm class
    classes = {c["class"]: c for c in res["kernel_classes"]}
    # measured per GPU: the class's busy time summed over devices (device_union_s), over the 2 traced GPUs
    assert rows["all gemm operators"]["measured_s"] == pytest.approx(classes["gemm"]["device_union_s"] / 2)
    assert classes["attention"]["device_union_s"] > 0                # alone in its class
    assert rows["attention core"]["measured_s"] == pytest.approx(classes["attention"]["device_union_s"] / 2)
    assert {r["source"] for r in rows.values()} == {"analytic"}
    assert not any("heuristic" in r["bound"] for r in rows.values())


def test_explicit_numerator_without_bytes_is_heuristic(synth_trace, tmp_path):
    res, _ = _run(synth_trace, tmp_path)          # flops_per_step only: no architecture, no bytes
    assert [r["operator"] for r in res["roofline"]] == ["whole region (model FLOPs)"]
    only = res["roofline"][0]
    assert only["source"] == "heuristic" and only["bound"].endswith("(heuristic)") and only["bytes"] is None


def test_job_figures_with_and_without_bytes(synth_trace, tmp_path):
    figures = [{"name": "gemms (ncu)", "kernels": "(?i)gemm|nvjet", "flops": 1e12, "bytes": 1e9},
               {"name": "flash (flops only)", "kernels": "^flash_", "flops": 1e12},
               {"name": "step (ncu)", "flops": 4e14, "bytes": 2e11}]
    res, _ = _run(synth_trace, tmp_path, analysis={"figures": figures})
    rows = {r["operator"]: r for r in res["roofline"]}
    assert rows["gemms (ncu)"]["source"] == "job" and rows["gemms (ncu)"]["arithmetic_intensity"] == 1000
    assert rows["flash (flops only)"]["source"] == "heuristic"
    assert rows["flash (flops only)"]["bound"].endswith("(heuristic)")
    assert rows["step (ncu)"]["source"] == "job"
    assert "whole region (model FLOPs)" not in rows          # the job's region figure replaces it
    assert rows["gemms (ncu)"]["flops"] == 5 * 10**12          # per occurrence x 5 occurrences


def test_job_kernel_class_rules_move_kernels(synth_trace, tmp_path):
    res, _ = _run(synth_trace, tmp_path, analysis={"kernel_classes": [{"class": "my_flash", "pattern": "^flash_"}]})
    classes = {c["class"] for c in res["kernel_classes"]}
    assert "my_flash" in classes and "attention" not in classes


# Three files (one per node): equal pid 4000 in files 0 and 1, two ranks in file 1, different seeds
# and NCCL frequencies, so names, string ids, pids and device ids all collide or differ across files.
MULTI = [{"seed": 1, "first_pid": 4000},
         {"seed": 2, "first_pid": 4000, "ranks": 2, "rank_skew_ns": 10_000},
         {"seed": 3, "first_pid": 6000, "nccl_every": 3}]
NCCL_PER_STEP = [40 // 8, 40 // 8, 40 // 3]        # i % nccl_every == nccl_every - 1 for i < 40 kernels
NCCL_FIGURE = {"name": "nccl (job)", "kernels": "^ncclDevKernel", "flops": 1e9}


@pytest.fixture(scope="module")
def three_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multi")
    truths = rank_files(folder, MULTI)
    body = json.loads(job(folder, "r*.sqlite").read_text())
    body["analysis"] = {"figures": [NCCL_FIGURE]}
    (folder / "job.yaml").write_text(json.dumps(body))
    return run_job(load_job(folder / "job.yaml")), truths


def _per_device_truth(truths: list[dict], key: str) -> dict[str, int]:
    """Ground truth of one measure per device label (file:device), summed over occurrences."""
    return {f"r{i}.sqlite:{dev}": sum(o["device_comm_ns"][dev][key] for o in t["occurrences"])
            for i, t in enumerate(truths) for dev in t["occurrences"][0]["device_comm_ns"]}


def _comm_truth(truths: list[dict]) -> int:
    """Union of the NCCL kernels on every device of every file: exposed + hidden."""
    return sum(sum(_per_device_truth(truths, k).values()) for k in ("exposed_ns", "hidden_ns"))


def test_several_files_classify_like_the_ground_truth(three_files):
    res, truths = three_files
    assert "breakdown_single_file" not in {w["code"] for w in res["warnings"]}
    classes = {c["class"]: c for c in res["kernel_classes"]}
    ranks = [s.get("ranks", 1) for s in MULTI]
    assert classes["communication"]["count"] == STEPS * sum(r * n for r, n in zip(ranks, NCCL_PER_STEP))
    # NCCL kernels run one after another on their own stream: their sum is their union, exposed + hidden
    assert round(classes["communication"]["sum_s"] * NS) == _comm_truth(truths)
    assert sum(c["count"] for c in classes.values()) == sum(o["kernel_count"] for t in truths for o in t["occurrences"])
    assert sum(round(c["sum_s"] * NS) for c in classes.values()) == sum(
        o["kernel_sum_ns"] for t in truths for o in t["occurrences"])
    nccl = [k for k in res["top_kernels"] if k["class"] == "communication"]
    assert len(nccl) == 1 and nccl[0]["count"] == classes["communication"]["count"]


def test_several_files_overlap_per_device_equals_the_ground_truth(three_files):
    res, truths = three_files
    label = {d["device_id"]: d["label"] for d in res["devices"]}
    got = {label[d["device_id"]]: d for d in res["communication"]["devices"]}
    assert sorted(got) == ["r0.sqlite:0", "r1.sqlite:0", "r1.sqlite:1", "r2.sqlite:0"]
    for key in ("exposed_ns", "hidden_ns"):
        assert {k: round(d[key.replace("_ns", "_s")] * NS) for k, d in got.items()} == _per_device_truth(truths, key)
    # idle is inside the combined occurrence walls: the envelope of every file's ranks
    walls = [max(t["occurrences"][k]["start_ns"] + t["occurrences"][k]["wall_ns"] for t in truths)
             - min(t["occurrences"][k]["start_ns"] for t in truths) for k in range(STEPS)]
    busy = {f"r{i}.sqlite:{dev}": sum(o["device_union_ns"][dev] for o in t["occurrences"])
            for i, t in enumerate(truths) for dev in t["occurrences"][0]["device_union_ns"]}
    assert {k: round(d["idle_s"] * NS) for k, d in got.items()} == {k: sum(walls) - b for k, b in busy.items()}


def test_several_files_measure_job_figures(three_files):
    res, truths = three_files
    row = next(r for r in res["roofline"] if r["operator"] == NCCL_FIGURE["name"])
    assert row["measured_s"] == pytest.approx(_comm_truth(truths) / NS / 4, abs=1e-12)    # per GPU: 4 devices


def test_several_files_reports_name_devices_by_file(three_files):
    res, _ = three_files
    files = render_all(res)
    # the device table, the overlap table and the stream table (its two streams: compute, NCCL) all name the
    # second file's second GPU
    assert [line.count("|") for line in files["report.md"].splitlines()
            if line.startswith("| r1.sqlite:1 |")] == [5, 8, 6, 6]
    assert "GPU r1:1</text>" in files["report.html"]                    # the charts' axis: the file's stem
    assert "<title>GPU r1.sqlite:1</title>" in files["report.html"]
    assert '<td class="n">r1.sqlite:1</td><td class="n">' in files["report.html"]


def test_unclassified_kernel_names_are_listed_for_the_user(real_trace, tmp_path):
    """An application's own kernel (saxpy) gets no shipped rule: it stays `other` and the report
    lists it where a user reads how to name it. Its summed time, read here with sqlite3: every
    saxpy kernel of the first 'saxpy' range's process launched inside that range."""
    import sqlite3
    path = real_trace("hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite")
    res = run_job(load_job(write_job(tmp_path, path, region={"name": "saxpy", "occurrences": {"first": 1, "last": 1}},
                                     hardware={"num_gpus": 1, "gpu": "auto"})))
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    lo, hi = con.execute("SELECT start, \"end\" FROM NVTX_EVENTS WHERE text = 'saxpy' AND eventType = 59 "
                         "ORDER BY start LIMIT 1").fetchone()
    want = con.execute("SELECT count(*), sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE EXISTS ("
                       "SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId "
                       "AND r.globalTid / 16777216 = k.globalPid / 16777216 AND r.start BETWEEN ? AND ?)",
                       (lo, hi)).fetchone()
    assert [(k["name"], k["class"], k["count"], round(k["sum_s"] * NS)) for k in res["unclassified_kernels"]] == [
        ("saxpy", "other", *want)]
    files = render_all(res)
    assert "| `saxpy` | 1 |" in files["report.md"] and "<th>unclassified kernel</th>" in files["report.html"]


def test_top_kernel_shares_are_of_kernels_and_memory_operations_summed(tmp_path):
    """share_of_kernel_sum divides by the summed time of every attributed kernel and memory operation, as the
    schema and the report's column ('share of summed GPU time') say; the headline's kernel sum (kernels only)
    is another figure. pid 100, step 1000..3000, five launches (by hand, ns):
      gemm  sm90_xmma_gemm_bf16  1100..1500 (400) and 1600..1700 (100)   -> 500
      other my_custom_op          1800..2000 (200)
      [CUDA memcpy]               2100..2400 (300)
      [CUDA memset]               2500..2600 (100)
    Kernels 700 ns (the headline's kernel sum), memory 400 ns: shares are of 1100 ns. Either mistake about
    memory time (left out: of 700; counted a second time on top: of 1500) moves every share."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(1000, 3000, main, "step")
    for corr, (start, end, what) in enumerate(((1100, 1500, "sm90_xmma_gemm_bf16"), (1600, 1700, "sm90_xmma_gemm_bf16"),
                                               (1800, 2000, "my_custom_op"), (2100, 2400, "memcpy"),
                                               (2500, 2600, "memset")), start=1):
        e.launch(1000 + 10 * corr, main, corr)
        if what in ("memcpy", "memset"):
            e.memory(start, end, key, corr, kind=what)
        else:
            e.kernel(start, end, key, corr, name=what)
    trace = e.write(tmp_path / "trace.sqlite")
    res = run_job(load_job(write_job(tmp_path, trace, region={"name": "step"},
                                     hardware={"gpu": "auto", "num_gpus": 1, "peak_tflops": 1e-3},
                                     model={"flops_per_step": 100.0}, workload={"seq_len": 4, "global_batch": 1})))
    assert round(res["totals"]["gpu_kernel_sum_s"] * NS) == 700
    assert [(k["name"], k["class"], k["count"], round(k["sum_s"] * NS)) for k in res["top_kernels"]] == [
        ("sm90_xmma_gemm_bf16", "gemm", 2, 500), ("[CUDA memcpy]", "memory", 1, 300),
        ("my_custom_op", "other", 1, 200), ("[CUDA memset]", "memory", 1, 100)]
    assert [k["share_of_kernel_sum"] for k in res["top_kernels"]] == pytest.approx(
        [500 / 1100, 300 / 1100, 200 / 1100, 100 / 1100], rel=1e-12)
    assert [(k["name"], k["share_of_kernel_sum"]) for k in res["unclassified_kernels"]] == [
        ("my_custom_op", pytest.approx(200 / 1100, rel=1e-12))]
