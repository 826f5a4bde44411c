"""Batches on every engine give the same reports: inline, local processes, and a Dask LocalCluster."""

from __future__ import annotations

import json
import pickle
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from pipeline import batch as batch_module
from pipeline import executor
from pipeline.analysis import merged
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


@pytest.mark.slow  # a process pool over the whole batch, twice (quick tier: test_spare_workers_only_go_to_...)
def test_inline_processes_and_cache_agree(batch, tmp_path):
    _, job_files = batch
    inline = run_batch(job_files, tmp_path / "a", workers=1)
    procs = run_batch(job_files, tmp_path / "b", workers=2, cache_dir=tmp_path / "cache")
    assert _codes(inline) == _codes(procs) == [("job0.yaml", 0), ("job1.yaml", 0), ("job2.yaml", 0),
                                               ("job3.yaml", 0), ("job4.yaml", 4)]
    assert "fewer occurrences" in inline[4]["reason"]
    assert _reports(tmp_path / "a") == _reports(tmp_path / "b") != {}


@pytest.mark.slow  # starts a Dask LocalCluster
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


def _job_file(root: Path, name: str, traces: list[str], last: int | None = None) -> Path:
    occ = {"first": 1} | ({"last": last} if last else {})
    body = {"name": name, "trace": traces, "region": {"name": "train_step", "occurrences": occ},
            "hardware": {"gpu": "auto", "num_gpus": 2 * len(traces), "precision": "bf16"},
            "model": {"flops_per_step": 4.0e+12}, "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}
    (root / f"{name}.yaml").write_text(json.dumps(body))
    return root / f"{name}.yaml"


@pytest.fixture
def submitted(monkeypatch) -> list[str]:
    """The names of the functions run_batch hands to its executor, in order."""
    names: list[str] = []
    real = batch_module.pool

    @contextmanager
    def spying(engine, workers):
        with real(engine, workers) as (submit, gather):
            def spy(fn, *args):
                names.append(fn.__name__)
                return submit(fn, *args)
            yield spy, gather
    monkeypatch.setattr(batch_module, "pool", spying)
    return names


@pytest.mark.slow  # three process-pool runs (quick tier: test_spare_workers_only_go_to_files_when_groups_are_fewer)
def test_lone_multi_file_job_measures_each_file_on_a_worker(batch, tmp_path, submitted, monkeypatch):
    """One job over three files: -j 1 measures them in turn; -j 2 gives each file its own task; same bytes.
    (Files too big to be built as one, analysis/merged.py: these small ones are made to count as big.)"""
    monkeypatch.setattr(merged, "SMALL_BYTES", 0)
    _, job_files = batch
    inline = run_batch([job_files[2]], tmp_path / "a", workers=1)
    assert submitted == ["run_group"]
    submitted.clear()
    procs = run_batch([job_files[2]], tmp_path / "b", workers=2)
    assert submitted == ["extract"] * 3
    cached = run_batch([job_files[2]], tmp_path / "c", workers=2, cache_dir=tmp_path / "cache")
    assert _codes(inline) == _codes(procs) == _codes(cached) == [("job2.yaml", 0)]
    a, b = (tmp_path / d / "job2" for d in "ab")
    assert (a / "result.json").read_bytes() == (b / "result.json").read_bytes()
    assert _reports(tmp_path / "a") == _reports(tmp_path / "b") == _reports(tmp_path / "c")
    assert len(json.loads((a / "result.json").read_text())["trace"]["files"]) == 3


def test_spare_workers_only_go_to_files_when_groups_are_fewer(batch, tmp_path, submitted):
    """Four trace groups on two workers: each group is one task, as before (no pool inside a pool)."""
    _, job_files = batch
    run_batch(job_files, tmp_path / "out", workers=2)
    assert submitted == ["run_group"] * 4


@pytest.mark.slow  # starts a Dask LocalCluster
def test_dask_local_measures_each_file_as_a_task(batch, tmp_path, submitted, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(merged, "SMALL_BYTES", 0)          # files too big to be built as one (analysis/merged.py)
    _, job_files = batch
    run_batch([job_files[2]], tmp_path / "local", workers=1)
    submitted.clear()
    rows = run_batch([job_files[2]], tmp_path / "dask", workers=2, engine="dask-local")
    assert submitted == ["extract"] * 3 and _codes(rows) == [("job2.yaml", 0)]
    assert _reports(tmp_path / "dask") == _reports(tmp_path / "local") != {}


@pytest.mark.parametrize("engine", ["local", "dask-local"])
def test_small_files_are_built_as_one_here_on_any_engine(batch, tmp_path, submitted, monkeypatch, engine):
    """Issue 34: one job over small files, given two workers, builds them as one in this process (analysis/merged.py):
    no task, so no pool and no Dask cluster is started (each would cost more CPU than the files); same bytes."""
    pytest.importorskip("distributed")
    _, job_files = batch

    def no_cluster(stack):
        raise AssertionError("a Dask cluster was started")
    monkeypatch.setattr(executor, "_start_cluster", no_cluster)
    inline = run_batch([job_files[2]], tmp_path / "a", workers=1)
    submitted.clear()
    rows = run_batch([job_files[2]], tmp_path / "b", workers=2, engine=engine)
    assert submitted == [] and _codes(rows) == _codes(inline) == [("job2.yaml", 0)]
    assert _reports(tmp_path / "a") == _reports(tmp_path / "b") != {}


@pytest.mark.slow  # process pools (quick tier: test_errors_cross_processes_intact)
def test_a_bad_file_fails_the_job_as_inline(batch, tmp_path):
    """Per-file tasks report what measuring in turn reports: every file is opened before any is
    measured, so an unreadable later file wins over an earlier file short of occurrences."""
    root, _ = batch
    generate(SynthSpec(ranks=2, steps=3, kernels_per_step=25, seed=7, first_pid=5000), root / "short.sqlite")
    (root / "broken.sqlite").write_text("not a trace")
    # occurrence 6: more than any file has (a file with fewer than asked is ranks missing occurrences)
    jobs = [_job_file(root, "short", ["rank0.sqlite", "short.sqlite"], last=6),
            _job_file(root, "broken", ["rank0.sqlite", "short.sqlite", "rank1.sqlite", "broken.sqlite"], last=6)]
    for job in jobs:
        inline = run_batch([job], tmp_path / "a", workers=1)
        procs = run_batch([job], tmp_path / "b", workers=2)
        assert _codes(procs) == _codes(inline) == [(job.name, 4)]
        assert procs[0]["reason"] == inline[0]["reason"]
    assert "fewer occurrences" in run_batch([jobs[0]], tmp_path / "c", workers=2)[0]["reason"]
    assert "broken.sqlite" in run_batch([jobs[1]], tmp_path / "c", workers=2)[0]["reason"]


def test_errors_cross_processes_intact():
    """A task's error reaches the parent as raised: same class, message, exit code and attributes,
    whatever its __init__ takes (an unpicklable error would break the pool: exit 5, not 4)."""
    from pipeline.analysis.measure import MissingOccurrences
    from pipeline.errors import ConfigError, Problem, TraceError
    for exc in (TraceError("t.sqlite: not an export"), MissingOccurrences("fewer occurrences than asked", 3),
                ConfigError([Problem("bad pattern", "/analysis/kernel_classes/0/pattern", "job.yaml", 4, 7)])):
        back = pickle.loads(pickle.dumps(exc))
        assert (type(back), str(back), back.code, back.__dict__) == (type(exc), str(exc), exc.code, exc.__dict__)


def _stand_in_pandas(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose `pandas` is a stand-in that marks each process importing it with a file in `marks`."""
    fake = tmp_path / "site" / "pandas"
    fake.mkdir(parents=True)
    marks = tmp_path / "imported-by"
    marks.mkdir()
    (fake / "__init__.py").write_text(f"import os\nopen(os.path.join({str(marks)!r}, str(os.getpid())), 'w').close()\n")
    repo = Path(__file__).resolve().parents[1]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(repo)])}, marks


@pytest.mark.slow  # a pool per start method (quick tier: tests/test_cli.py test_a_run_never_imports_pandas)
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_workers_never_import_pandas_whatever_the_start_method(batch, tmp_path, method):
    """mfu makes `import pandas` fail at once while a command runs (DuckDB's client imports it before binding
    parameters: 0.2-0.4 s for nothing mfu reads). A forked worker inherits that; a spawned or forkserver one
    (the default on macOS, and on Linux from Python 3.14) started without it and imported pandas. A stand-in
    `pandas` on the path marks each process that imports it; two jobs over two files run on two workers."""
    root, job_files = batch
    env, marks = _stand_in_pandas(tmp_path)
    script = ("import multiprocessing, sys\n"
              f"multiprocessing.set_start_method({method!r})\n"
              "from pipeline.cli import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    out = subprocess.run([sys.executable, "-c", script, "run", str(job_files[0]), str(job_files[3]), "-j", "2",
                          "--no-cache", "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert {p.parent.name for p in (tmp_path / "out").glob("job*/result.json")} == {"job0", "job3"}
    assert list(marks.iterdir()) == []


@pytest.mark.slow  # starts a Dask LocalCluster
def test_dask_workers_never_import_pandas(batch, tmp_path):
    """A Dask worker is no process of mfu's pool: it starts without the command's block (nopandas) and without
    the pool's initializer, so DuckDB's client imported pandas there before binding parameters. Each task on
    our LocalCluster sets the block while it runs. A stand-in `pandas` on the path marks each process that imports it; two
    jobs over two files run as two tasks of a LocalCluster."""
    pytest.importorskip("distributed")
    root, job_files = batch
    env, marks = _stand_in_pandas(tmp_path)
    out = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", str(job_files[0]), str(job_files[3]),
                          "--executor", "dask-local", "--no-cache", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert {p.parent.name for p in (tmp_path / "out").glob("job*/result.json")} == {"job0", "job3"}
    assert list(marks.iterdir()) == []


def _pandas_blocked() -> bool:
    return "pandas" in sys.modules and sys.modules["pandas"] is None


def test_only_our_own_dask_workers_get_the_pandas_block(monkeypatch):
    """The block is process-wide. A worker of a scheduler given by address may run other people's tasks in other
    threads at the same time, whose `import pandas` would fail while one of ours runs: only tasks on the
    LocalCluster mfu starts (one thread per worker, nothing else on it) block it. A client that runs each task at
    once shows what a task sees."""
    class RunNow:
        def submit(self, fn, *args, pure):
            return fn(*args)
    monkeypatch.delitem(sys.modules, "pandas", raising=False)      # as in a worker that has not imported it
    assert not _pandas_blocked()
    assert executor._dask(RunNow(), None, own_workers=True)[0](_pandas_blocked) is True
    assert executor._dask(RunNow(), None, own_workers=False)[0](_pandas_blocked) is False
    assert not _pandas_blocked()                                  # lifted after the task


def _duckdb_threads() -> int:
    from pipeline.trace.connection import connect
    con = connect()
    try:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize("engine", ["local", pytest.param("dask-local", marks=pytest.mark.slow)])  # dask: a cluster
def test_workers_share_the_cores_between_their_duckdbs(engine, every_core):
    """Issue 34: two workers on this machine each give DuckDB half the cores (at least one), not all of them each;
    the command's own connections keep every core."""
    with pool(engine, 2) as (submit, gather):
        seen = list(gather([submit(_duckdb_threads), submit(_duckdb_threads)]))
    assert seen == [max(1, (os.cpu_count() or 1) // 2)] * 2
    assert _duckdb_threads() == os.cpu_count()
