"""Unusable --out, --cache, --history or scheduler: exit 2 in one line, before any job runs.

"Before any job runs" is checked by the job's trace being missing (a job that ran would
make it exit 4) and by no report folder appearing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline import executor
from pipeline.cli import main

JOB = """name: loc
trace: missing.sqlite
region: {name: train_step}
hardware: {num_gpus: 2, precision: bf16}
model: {flops_per_step: 4.0e+13}
workload: {mode: training, seq_len: 2048, global_batch: 8}
"""


@pytest.fixture
def job(tmp_path) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(JOB)
    return path


def run(job: Path, capsys, *extra: str) -> tuple[int, str]:
    args = ["run", str(job)] + ([] if "--out" in extra else ["--out", str(job.parent / "out")])
    code = main(args + list(extra))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("option", ["--out", "--cache", "--history"])
def test_empty_path(job, capsys, option):
    code, err = run(job, capsys, option, "")
    assert (code, err) == (2, f"error: {option}: an empty path; give a folder\n")


@pytest.mark.parametrize("option", ["--out", "--cache", "--history"])
def test_a_file_where_a_folder_belongs(job, capsys, option):
    code, err = run(job, capsys, option, str(job))
    assert code == 2 and len(err.splitlines()) == 1
    assert err == f"error: {option} {job}: is a file, not a folder\n" if option != "--history" else \
        err.startswith(f"error: {job}: is a file, but a history path not ending in .duckdb is a folder")


@pytest.mark.parametrize("where, says", [("/dev/null", "is not a regular file (a device or a pipe); give a file"),
                                         ("", "is a folder, not a file")])
def test_a_device_or_folder_where_a_file_belongs(tmp_path, capsys, where, says):
    """`mfu init -o /dev/null` said /dev/null 'is a folder'."""
    out = where or str(tmp_path)
    assert main(["synth", out]) == 2
    assert capsys.readouterr().err == f"error: OUT.sqlite {out}: {says}\n"


@pytest.mark.parametrize("option, name", [("--out", "out"), ("--cache", "cache"), ("--history", "h"),
                                          ("--history", "h.duckdb")])
def test_unreachable_location(job, capsys, option, name):
    code, err = run(job, capsys, option, str(job / name))      # below a file: can never exist
    assert code == 2 and err.startswith(f"error: {option} ") and len(err.splitlines()) == 1
    assert "cannot write there (Not a directory)" in err or f"{job}: is a file, not a folder" in err
    assert not (job.parent / "out").exists() or list((job.parent / "out").iterdir()) == []


def read_only_run(folder: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """Run `mfu` with `folder` really read-only: a private read-only bind mount as root, else mode 0555."""
    if os.geteuid() == 0:
        if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"]).returncode:
            pytest.skip("root without mount namespaces: cannot make a folder read-only for root")
        cmd = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', str(folder),
               sys.executable, "-m", "pipeline.cli", *argv]
    else:
        folder.chmod(0o555)
        cmd = [sys.executable, "-m", "pipeline.cli", *argv]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("option, name", [("--out", "out"), ("--cache", "c"), ("--history", "h"),
                                          ("--history", "h.duckdb")])
def test_read_only_location(job, tmp_path, option, name):
    ro = tmp_path / "ro"
    ro.mkdir()
    argv = ["run", str(job), "--out", str(tmp_path / "out"), "--no-cache" if option != "--cache" else "--jobs=1",
            option, str(ro / name)]
    done = read_only_run(ro, argv)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {option} ")
    assert "(Read-only file system)" in done.stderr or "(Permission denied)" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and list(ro.iterdir()) == []


def test_history_table_of_another_format_is_refused_before_the_jobs(job, capsys):
    db = job.parent / "h.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE history (x INTEGER, y VARCHAR)")
    code, err = run(job, capsys, "--history", str(db))
    assert code == 2 and "not an mfu history" in err and "trace" not in err
    assert not (job.parent / "out").exists() or not any((job.parent / "out").iterdir())


def test_a_scheduler_that_does_not_answer(job, capsys, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(executor, "SCHEDULER_TIMEOUT_S", 1)
    code, err = run(job, capsys, "--executor", "dask://127.0.0.1:9")
    assert code == 2 and err.startswith("error: --executor dask://127.0.0.1:9: no Dask scheduler answered at "
                                        "127.0.0.1:9 within 1 s") and len(err.splitlines()) == 1


def test_an_unusable_default_cache_means_no_cache_with_a_warning(synth_trace, tmp_path, capsys, monkeypatch):
    trace, _ = synth_trace()
    jobs = []
    for name in ("a", "b"):
        jobs.append(tmp_path / f"{name}.yaml")
        jobs[-1].write_text(JOB.replace("name: loc", f"name: {name}").replace("missing.sqlite", str(trace)))
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("MFU_CACHE_DIR", str(tmp_path / "file" / "cache"))
    code = main(["run", *map(str, jobs), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0 and "warning: cache " in err and "running without a cache" in err and "Traceback" not in err


def test_no_home_folder_means_no_default_cache_with_a_warning(synth_trace, tmp_path, capsys, monkeypatch):
    """HOME unset for a user id without a passwd entry (`docker run --user 1234`): Path.home() raises, and a
    batch, which caches by default, ended in that traceback (exit 5)."""
    trace, _ = synth_trace()
    jobs = []
    for name in ("a", "b"):
        jobs.append(tmp_path / f"{name}.yaml")
        jobs[-1].write_text(JOB.replace("name: loc", f"name: {name}").replace("missing.sqlite", str(trace)))
    for var in ("MFU_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(var, raising=False)

    def no_home(cls=None):
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.setattr(Path, "home", classmethod(no_home))
    code = main(["run", *map(str, jobs), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err
    assert "warning: cache: no home folder to keep it in (HOME is not set, and this user has none in the password " \
           "database); running without a cache (set MFU_CACHE_DIR or --cache)\n" in err
