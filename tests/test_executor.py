"""Per-trace extraction on different engines (issue #7): a batch over several trace files gives
the same results one job at a time, in one process, and on a Dask LocalCluster of 2 workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.config import load_job
from pipeline.errors import TraceError, UsageError
from pipeline.executor import executor
from pipeline.run import run_batch, run_job
from pipeline.synth import SynthSpec, generate


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Three rank files (as a multi-file job has) and five jobs, two sharing a file, one asking too much."""
    root = tmp_path_factory.mktemp("batch")
    traces = []
    for i in range(3):
        path = root / f"rank{i}.sqlite"
        generate(SynthSpec(ranks=2, steps=5, kernels_per_step=25, seed=i, first_pid=4000 + 10 * i,
                           drop_launch_every=6 if i == 1 else 0), path)
        traces.append(path)
    wanted = [(0, 1, 3, "process"), (0, 2, 5, "thread"), (1, 1, None, "process"), (2, 2, 4, "window"),
              (2, 9, None, "process")]
    jobs = []
    for n, (t, first, last, attribution) in enumerate(wanted):
        occ = {"first": first} | ({"last": last} if last else {})
        body = {"name": f"job{n}", "trace": traces[t].name,
                "region": {"name": "train_step", "occurrences": occ, "attribution": attribution},
                "hardware": {"gpu": "auto", "num_gpus": 2, "precision": "bf16"},
                "model": {"flops_per_step": 4.0e+14},
                "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}
        jobs.append(root / f"job{n}.yaml")
        jobs[-1].write_text(json.dumps(body))
    return root, jobs


def _outcomes(results) -> list:
    return [(f.name, res if res is not None else (type(err).__name__, str(err))) for f, res, err in
            ((f, res, None if res is not None else folder) for f, res, folder in results)]


def test_local_batch_equals_one_job_at_a_time(batch, tmp_path):
    root, jobs = batch
    got = run_batch(jobs, tmp_path / "out", tmp_path / "cache")
    for (f, res, folder), job in zip(got[:4], jobs[:4]):
        assert res == run_job(load_job(job)), f.name
        assert (folder / "result.json").is_file()
    f, res, err = got[4]
    assert res is None and isinstance(err, TraceError) and "fewer occurrences" in str(err)


def test_dask_local_cluster_equals_local(batch, tmp_path):
    pytest.importorskip("distributed")
    root, jobs = batch
    local = run_batch(jobs, tmp_path / "local", None, "local")
    dask = run_batch(jobs, tmp_path / "dask", tmp_path / "cache", "dask-local")
    assert _outcomes(dask) == _outcomes(local)
    assert sum(res is not None for _, res, _ in dask) == 4


def test_unknown_engine_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown executor"):
        with executor("spark://x"):
            pass
