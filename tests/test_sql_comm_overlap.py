"""comm_overlap.sql: exposed / hidden communication and idle time per device.

By hand on planted intervals, and on synthetic traces against the generator's ground
truth (pipeline/trace/synth.py computes it by a two-pointer intersection of the planted
NCCL and compute intervals, not by the busy - compute identity the SQL uses).
"""

from __future__ import annotations

import pytest

from pipeline.trace import queries
from pipeline.analysis.classes import communication
from pipeline.job.config import Region
from pipeline.analysis.measure import prepare
from pipeline.trace.open import open_trace
from tests.measuring import measure
from tests.sqlfixtures import classified


def test_by_hand():
    con = classified([
        # device 0, wall 100: compute [0,30) and [50,60); NCCL [20,45): 10 hidden, 15 exposed;
        # busy [0,45) + [50,60) = 55, idle 45
        (1, 0, "gemm", "gemm", 0, 30), (1, 0, "gemm", "gemm", 50, 60), (1, 0, "nccl", "communication", 20, 45),
        # memory copies never count as busy, compute or communication
        (1, 0, "[CUDA memcpy]", "memory", 60, 90),
        # device 1: NCCL entirely under compute
        (1, 1, "gemm", "gemm", 0, 50), (1, 1, "nccl", "communication", 10, 20),
    ])
    rows = queries.run(con, "comm_overlap", comm_class="communication", wall_ns=100, devices=[0, 1, 2])
    assert rows[0] == {"device_id": 0, "wall_ns": 100, "busy_ns": 55, "compute_ns": 40, "comm_ns": 25,
                       "exposed_ns": 15, "hidden_ns": 10, "idle_ns": 45}
    assert rows[1] == {"device_id": 1, "wall_ns": 100, "busy_ns": 50, "compute_ns": 50, "comm_ns": 10,
                       "exposed_ns": 0, "hidden_ns": 10, "idle_ns": 50}
    # a device with no kernel in the occurrence is idle for its whole wall
    assert rows[2] == {"device_id": 2, "wall_ns": 100, "busy_ns": 0, "compute_ns": 0, "comm_ns": 0,
                       "exposed_ns": 0, "hidden_ns": 0, "idle_ns": 100}


@pytest.mark.parametrize("spec", [{}, {"ranks": 3, "nccl_every": 3, "seed": 5, "busy_fraction": 0.95}])
def test_against_synthetic_ground_truth(synth_trace, spec):
    path, truth = synth_trace(**spec)
    trace = open_trace(path)
    try:
        prepare(trace)
        m = measure(trace, Region("train_step", "exact", None, 1, None, "process", "step"))
        got = communication(trace, m)
    finally:
        trace.con.close()
    assert [d["device_id"] for d in got["devices"]] == list(range(spec.get("ranks", 2)))    # one GPU per rank
    for dev in got["devices"]:
        key = str(dev["device_id"])
        want = {k: sum(o["device_comm_ns"][key][k] for o in truth["occurrences"])
                for k in ("exposed_ns", "hidden_ns", "idle_ns")}
        assert round(dev["exposed_s"] * 1e9) == want["exposed_ns"]
        assert round(dev["hidden_s"] * 1e9) == want["hidden_ns"] > 0
        assert round(dev["idle_s"] * 1e9) == want["idle_ns"]
        # the three parts and compute add up to the wall
        assert dev["compute_s"] + dev["exposed_s"] + dev["idle_s"] == pytest.approx(dev["wall_s"], abs=1e-9)
