"""`mfu compare` says where a step-time change went (docs/compare.md): synthetic pairs with known truth.

Each pair differs by one planted thing; the expected contribution of each part is the difference of the
generator's own parts (pipeline/trace/synth_steps.py: a sweep over the planted kernels, not step_parts.sql).
In each, the true cause is ranked first with its exact size, the rows add up to the step-time change, and a
pair that differs only by noise is given no cause.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipeline import changes
from pipeline.compare import compare
from pipeline.job.config import load_job
from pipeline.run import run_job
from pipeline.trace.synth_steps import Planned, generate_steps
from test_run_synth import write_job

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_kernel__5x_cublas"
NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
STEPS = 6
US = 1_000


def plan(nccl: int = 140, gemm: float = 1.0, gap: int = 0, overlap: bool = False, new: int = 0,
         jitter: random.Random | None = None) -> list[Planned]:
    """The baseline step (µs): GEMM 300, attention 150, elementwise 100, an exposed all-reduce 140, GEMM 200, one
    stream after the other, `gap` idle before each kernel after the first; `overlap` runs the all-reduce beside
    the second GEMM instead; `new` inserts a kernel of that length after the attention."""
    def d(us: float) -> int:
        return round(us * US * (jitter.uniform(0.99, 1.01) if jitter else 1.0))
    kernels = [(GEMM, "g", d(300 * gemm)), ("flash_fwd_kernel", "a", d(150))]
    kernels += [("my_new_kernel", "o", d(new))] if new else []
    kernels += [("vectorized_elementwise_kernel", "o", d(100))]
    out, t = [], 10 * US
    for i, (name, group, dur) in enumerate(kernels):
        t += gap * US if i else 0
        out.append(Planned(name, group, 7, t, dur))
        t += dur
    t += gap * US
    out.append(Planned(NCCL, "c", 13, t, d(nccl)))
    t += 0 if overlap else d(nccl)
    out.append(Planned(GEMM, "g", 7, t + (gap * US if not overlap else 0), d(200 * gemm)))
    return out


def _run(folder: Path, plans: list[list[Planned]]) -> tuple[dict, dict]:
    folder.mkdir()
    truth = generate_steps(plans, folder / "t.sqlite")
    job = write_job(folder, folder / "t.sqlite", region={"name": "train_step", "occurrences": {"first": 1}},
                    hardware={"num_gpus": 1, "peak_tflops": 1000.0}, model={"flops_per_step": 1.0e11})
    return run_job(load_job(job)), truth


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("base") / "b", [plan()] * STEPS)


CASES = {"longer exposed collective": ({"nccl": 290}, "comm"),
         "slower GEMMs": ({"gemm": 1.5}, "gemm"),
         "launch gaps": ({"gap": 30}, "idle"),
         "collective overlapped": ({"overlap": True}, "comm"),
         "a new kernel": ({"new": 80}, "other_compute")}


@pytest.mark.parametrize("case", list(CASES))
def test_the_true_cause_is_ranked_first_with_its_exact_size(baseline, tmp_path, case):
    change, cause = CASES[case]
    (base, base_truth), (cand, cand_truth) = baseline, _run(tmp_path / "c", [plan(**change)] * STEPS)
    (got,) = compare([("base", base), ("cand", cand)])["changes"]
    b, c = base_truth["steps"][0], cand_truth["steps"][0]         # every planted step is the same
    assert got["available"] and got["cause"] == cause
    first = got["rows"][0]
    assert first["part"] == cause and first["change_ns"] == c[cause] - b[cause] != 0
    assert got["change_ns"] == c["step_ns"] - b["step_ns"]
    assert got["sum_of_rows_ns"] == got["change_ns"]                 # exact: integer ns
    assert {r["part"]: r["change_ns"] for r in got["rows"]} == {p: c[p] - b[p] for p in b if p not in ("start_ns", "step_ns")}
    if case == "collective overlapped":                              # step down, all-reduce as long as before
        assert got["change_ns"] == -140 * US and c["comm_overlap"] == 140 * US
    if case == "a new kernel":
        assert got["kernels"]["new"] == ["my_new_kernel"] and got["kernels"]["vanished"] == []


def test_a_pair_differing_only_by_noise_gets_no_cause(tmp_path):
    """Every kernel's length drawn within ±1 % per step, other draws on each side: no part beyond noise."""
    rng_a, rng_b = random.Random(1), random.Random(2)
    (base, _), (cand, _) = (_run(tmp_path / "a", [plan(jitter=rng_a) for _ in range(8)]),
                            _run(tmp_path / "b", [plan(jitter=rng_b) for _ in range(8)]))
    (got,) = compare([("base", base), ("cand", cand)])["changes"]
    assert got["available"] and got["cause"] is None
    assert got["sum_of_rows_ns"] == got["change_ns"] != 0
    assert {r["noise"] for r in got["rows"]} == {"within"}


def test_history_decomposes_a_flagged_change_against_the_previous_run(baseline, tmp_path):
    """The same decomposition in `mfu history`, for the run flagged, against the run before; on its pages too."""
    from pipeline import history
    from pipeline.report.render import render_all
    (base, b_truth), (cand, c_truth) = baseline, _run(tmp_path / "c", [plan(nccl=290)] * STEPS)
    path = tmp_path / "h"
    history.append(path, [base])
    history.append(path, [cand])
    doc = history.trend(path)
    first, second = doc["jobs"][0]["runs"]
    assert first["what_changed"] is None and second["flag"] == "regression"
    w = second["what_changed"]
    b, c = b_truth["steps"][0], c_truth["steps"][0]
    assert w["cause"] == "comm" and w["rows"][0]["change_ns"] == c["comm"] - b["comm"] == 150 * US
    assert w["sum_of_rows_ns"] == w["change_ns"] == c["step_ns"] - b["step_ns"]
    pages = render_all(doc, kind="history")
    assert "What changed at run 2, against run 1" in pages["history.md"]
    assert "largest change beyond noise: **communication, exposed**" in pages["history.md"]
    assert "<strong>communication, exposed</strong>" in pages["history.html"]


def test_inputs_not_comparable_are_said_so_not_decomposed(baseline):
    """Another GPU count: the step time rests on it (compare.WORK), so the section says why instead of decomposing."""
    base, _ = baseline
    other = {**base, "hardware": {**base["hardware"], "num_gpus": 2}}
    (got,) = compare([("base", base), ("other", other)])["changes"]
    assert got == {"column": "synthetic (other)", "available": False,
                   "reason": "step time not comparable: GPU count: 2 vs baseline 1"}
    older = {k: v for k, v in base.items() if k != "step_parts"}        # a result written before step_parts
    (got,) = compare([("base", base), ("older", older)])["changes"]
    assert not got["available"] and got["reason"].startswith("no step_parts in this input")


def test_kernel_names_are_normalized_and_devices_say_which_moved_and_the_straggler():
    """By hand: the same kernel across builds (other template arguments, another launch number) is one row; a
    device's busy time per occurrence (union / occurrences) and the slowest rank on each side."""
    assert changes.normalized("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>"
                              "(int, float*)") == "at::native::vectorized_elementwise_kernel"
    assert changes.normalized("triton_poi_fused_add_mul_37") == changes.normalized("triton_poi_fused_add_mul_12")

    def side(union_a: float, slow: str) -> dict:
        return {"totals": {"occurrences": 2}, "straggler": {"slowest_rank": slow},
                "devices": [{"label": "0", "union_s": 2.0}, {"label": "1", "union_s": union_a}]}
    got = changes.devices(side(2.0, "4000"), side(3.0, "4001"))
    assert got["rows"][0] == {"device": "1", "baseline_s": 1.0, "value_s": 1.5, "change_s": 0.5}
    assert (got["baseline_straggler"], got["straggler"], got["straggler_changed"]) == ("4000", "4001", True)


def test_the_pages_and_the_github_summary_name_the_cause(baseline, tmp_path):
    """compare.md and .html show the section and the waterfall (sidecar and inline), the --format github summary
    names the cause with its size: +150 µs = +0.15 ms."""
    from pipeline import ci
    from pipeline.report.render import render_all
    (base, _), (cand, _) = baseline, _run(tmp_path / "c", [plan(nccl=290)] * STEPS)
    doc = compare([("base", base), ("cand", cand)])
    files = render_all(doc, kind="compare")
    assert "![what changed in the median step time](what-changed-1.svg)" in files["compare.md"]
    assert files["what-changed-1.svg"].startswith('<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-waterfall"')
    assert 'class="chart chart-waterfall"' in files["compare.html"]
    assert "Largest change beyond noise: **communication, exposed** (+150.0\u00a0µs)" in files["compare.md"]
    assert "largest change beyond noise: **communication, exposed** +0.15 ms" in ci.summary(doc)
