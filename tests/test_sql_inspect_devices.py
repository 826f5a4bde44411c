"""inspect_devices.sql: devices that ran kernels, with counts, processes and busy span."""

from __future__ import annotations

from nsys_export import Export, gpid
from pipeline.trace import chain


def test_devices_by_hand(open_export) -> None:
    e = Export(gpus=[{"id": i, "name": "NVIDIA A100-SXM4-80GB"} for i in range(4)])   # listed, mostly unused
    e.kernel(500, 900, gpid(1), 1, device=3)
    e.kernel(100, 200, gpid(1), 2, device=3)
    e.kernel(150, 1200, gpid(2), 1, device=3)
    e.kernel(300, 400, gpid(2), 2, device=1)
    e.kernel(50, 60, None, None, device=1)
    trace = open_export(e)
    assert chain.run(trace.con, {"inspect_read", "inspect_devices"})["inspect_devices"] == [
        {"device_id": 1, "kernels": 2, "processes": 1, "first_ns": 50, "last_ns": 400},
        {"device_id": 3, "kernels": 3, "processes": 2, "first_ns": 100, "last_ns": 1200},
    ]


def test_synthetic_one_device_per_rank(synth_trace, open_views) -> None:
    path, truth = synth_trace(ranks=3, steps=2, kernels_per_step=10, setup_kernels=2)
    trace = open_views(path)
    per_rank = 2 * 10 + 2
    assert [(r["device_id"], r["kernels"], r["processes"]) for r in chain.run(trace.con, {"inspect_read", "inspect_devices"})["inspect_devices"]] == [
        (0, per_rank, 1), (1, per_rank, 1), (2, per_rank, 1)]
