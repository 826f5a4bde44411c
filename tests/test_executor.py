"""Batches on every engine give the same reports: inline, local processes, and a Dask LocalCluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.batch import run_batch
from pipeline.errors import UsageError
from pipeline.executor import pool
from pipeline.trace.synth import SynthSpec, generate


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, list[Path]]:
    """Three rank files and five jobs: two share a file, one reads all three, one asks for too much."""
    root = tmp_path_factory.mktemp("batch")
    traces = []
    for i in range(3):
        path = root / f"rank{i}.sqlite"
        generate(SynthSpec(ranks=2, steps=5, kernels_per_step=25, seed=i, first_pid=4000 + 10 * i,
                           drop_launch_every=6 if i == 1 else 0), path)
        traces.append(path)
    wanted = [([0], 1, 3, "process"), ([0], 2, 5, "thread"), ([0, 1, 2], 1, None, "process"),
              ([2], 2, 4, "window"), ([1], 9, None, "process")]
    job_files = []
    for n, (files, first, last, attribution) in enumerate(wanted):
        occ = {"first": first} | ({"last": last} if last else {})
        names = [traces[t].name for t in files]
        body = {"name": f"job{n}", "trace": names[0] if len(names) == 1 else names,
                "region": {"name": "train_step", "occurrences": occ, "attribution": attribution},
                "hardware": {"gpu": "auto", "num_gpus": 2 * len(files), "precision": "bf16"},
                "model": {"flops_per_step": 4.0e+12},
                "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}
        job_files.append(root / f"job{n}.yaml")
        job_files[-1].write_text(json.dumps(body))
    return root, job_files


def _reports(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.glob("job*/*"))}


def _codes(rows) -> list[tuple[str, int]]:
    return [(Path(r["job"]).name, r["exit_code"]) for r in rows]


def test_inline_processes_and_cache_agree(batch, tmp_path):
    _, job_files = batch
    inline = run_batch(job_files, tmp_path / "a", workers=1)
    procs = run_batch(job_files, tmp_path / "b", workers=2, cache_dir=tmp_path / "cache")
    assert _codes(inline) == _codes(procs) == [("job0.yaml", 0), ("job1.yaml", 0), ("job2.yaml", 0),
                                               ("job3.yaml", 0), ("job4.yaml", 4)]
    assert "fewer occurrences" in inline[4]["reason"]
    assert _reports(tmp_path / "a") == _reports(tmp_path / "b") != {}


def test_dask_local_cluster_equals_local(batch, tmp_path):
    pytest.importorskip("distributed")
    _, job_files = batch
    local = run_batch(job_files, tmp_path / "local", workers=1)
    dask = run_batch(job_files, tmp_path / "dask", cache_dir=tmp_path / "cache", engine="dask-local")
    assert _codes(dask) == _codes(local)
    assert _reports(tmp_path / "dask") == _reports(tmp_path / "local")
    multi = json.loads((tmp_path / "dask" / "job2" / "result.json").read_text())
    assert len(multi["trace"]["files"]) == 3            # the multi-file job ran as one task


def test_unknown_engine_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown executor"):
        with pool("spark://x", 1):
            pass


def test_one_worker_starts_no_process_pool(batch, tmp_path):
    """A single-worker run never imports a process pool or Dask: only a pool that starts pays for them."""
    root, job_files = batch
    script = ("import sys\n"
              "from pipeline.cli import main\n"
              "code = main(['run', '--no-cache', '--out', sys.argv[1], sys.argv[2]])\n"
              "print(code, sorted(m for m in ('multiprocessing', 'concurrent.futures.process', 'distributed', "
              "'dask') if m in sys.modules))\n")
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out"), str(job_files[0])],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo)}, check=True)
    assert done.stdout.split("\n")[-2] == "0 []", done.stdout + done.stderr
