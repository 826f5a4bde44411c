"""Each headline figure of result.json traced to its one function in analysis/metrics.py, with a value by hand.

One rank, one range 0..2 s holding one kernel 0.5..1.5 s (union 1 s), 1 GPU at 100 TFLOP/s, 50 TFLOP of model
FLOPs and 60 of hardware FLOPs per step, 4 tokens (seq_len 4 x global_batch 1), 80 TFLOP/s measured ceiling.
By hand: MFU 50 / (2 x 100) = 25 %, HFU 60 / 200 = 30 %, union diagnostic 50 / (1 x 100) = 50 %, union over
wall 1 / 2 = 50 %, 50 / 2 = 25 TFLOP/s per GPU, 4 / 2 = 2 tokens/s, MFU against the ceiling 50 / (2 x 80) =
31.25 %, median step 2 s. Each figure must equal its function's value on those inputs, and the run must have
called that function with them: a figure computed anywhere else fails here even when its value agrees.
"""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.analysis import metrics
from pipeline.job.config import load_job
from pipeline.run import run_job
from test_run_synth import write_job

S = 1_000_000_000                          # ns
MODEL, HARDWARE = 50 * 10**12, 60 * 10**12
WIRING = [  # (result.json path, metrics function, its arguments by hand, the value by hand)
    (("metrics", "mfu_pct_wall"), "utilization_pct", (MODEL, 2.0, 1, 100.0), 25.0),
    (("metrics", "hfu_pct_wall"), "utilization_pct", (HARDWARE, 2.0, 1, 100.0), 30.0),
    (("metrics", "active_ratio_pct_union"), "utilization_pct", (MODEL, 1.0, 1, 100.0), 50.0),
    (("metrics", "union_over_wall_pct"), "pct_of", (S, 2 * S), 50.0),
    (("metrics", "achieved_tflops_per_gpu"), "achieved_tflops_per_gpu", (MODEL, 2.0, 1), 25.0),
    (("metrics", "tokens_per_s"), "tokens_per_s", (4, 2.0), 2.0),
    (("metrics", "mfu_pct_achievable"), "utilization_pct", (MODEL, 2.0, 1, 80.0), 31.25),
    (("step_time", "median_s"), "step_stats", ([2.0],), 2.0),
]


@pytest.fixture(scope="module")
def wired(tmp_path_factory):
    """The run's result and every call each metrics function of WIRING received during it."""
    tmp_path = tmp_path_factory.mktemp("wiring")
    e = Export()
    e.range(0, 2 * S, gtid(100, 100), "step")
    e.launch(1000, gtid(100, 100), 1)
    e.kernel(S // 2, 3 * S // 2, gpid(100), 1)
    job = write_job(tmp_path, e.write(tmp_path / "t.sqlite"), region={"name": "step"},
                    hardware={"num_gpus": 1, "peak_tflops": 100.0, "achievable_tflops": 80.0},
                    model={"flops_per_step": MODEL, "hardware_flops_per_step": HARDWARE},
                    workload={"seq_len": 4, "global_batch": 1})
    calls: dict[str, list[tuple]] = {}
    with pytest.MonkeyPatch.context() as mp:
        for name in {fn for _, fn, _, _ in WIRING}:
            real = getattr(metrics, name)
            mp.setattr(metrics, name, lambda *a, _real=real, _name=name: calls.setdefault(_name, []).append(a)
                       or _real(*a))
        res = run_job(load_job(job))
    return res, calls


@pytest.mark.parametrize("path, function, args, by_hand", WIRING, ids=[".".join(w[0]) for w in WIRING])
def test_headline_figure_comes_from_its_function(wired, path, function, args, by_hand):
    res, calls = wired
    value = res[path[0]][path[1]]
    assert value == pytest.approx(by_hand, rel=1e-12)
    got = getattr(metrics, function)(*args)
    assert (got[path[1]] if isinstance(got, dict) else got) == value          # step_stats: all step-time figures
    assert args in calls.get(function, []), f"{'.'.join(path)}: {function} was never called with {args}"
