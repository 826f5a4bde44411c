"""Nothing is written beside a trace: leftover -wal/-journal files are refused (exit 4), and a
WAL-mode trace with nothing left to merge opens, also from a read-only file system."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from test_locations import read_only_run


@pytest.fixture
def trace(synth_trace, tmp_path) -> Path:
    src, _ = synth_trace()
    folder = tmp_path / "traces"
    folder.mkdir()
    return Path(shutil.copyfile(src, folder / "t.sqlite"))


def to_wal(path: Path) -> None:
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    assert not Path(f"{path}-wal").exists() and path.read_bytes()[18:20] == b"\x02\x02"


def leave_wal(path: Path) -> None:
    """A writer that died before checkpointing: a -wal holding a new table stays beside the trace."""
    script = ("import os, sqlite3, sys\n"
              "c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL')\n"
              "c.execute('PRAGMA wal_autocheckpoint=0'); c.execute('CREATE TABLE late(x)')\n"
              "c.execute('INSERT INTO late VALUES (42)'); c.commit(); os._exit(0)\n")
    subprocess.run([sys.executable, "-c", script, str(path)], check=True)
    assert Path(f"{path}-wal").stat().st_size > 0


def inspect(path: Path, capsys) -> tuple[int, str, str]:
    code = main(["inspect", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    return code, out, err


def test_leftover_wal_is_refused_naming_it_and_the_fix(trace, capsys, tmp_path):
    leave_wal(trace)
    before = sorted(os.listdir(trace.parent))
    code, _, err = inspect(trace, capsys)
    # a writer may still be at work: the message does not claim the file was left behind
    assert code == 4 and err.startswith(f"error: {trace}-wal: changes to the trace not yet merged into it "
                                        "(the program writing it is still at work, or stopped")
    assert sorted(os.listdir(trace.parent)) == before                 # nothing written beside it
    # the fix the message gives, followed literally, gives a trace that opens and holds the late rows
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    command = err.split("fold them in on a copy: ", 1)[1].split(", then point")[0].replace("DIR", str(fixed))
    subprocess.run(command, shell=True, check=True)
    assert inspect(fixed / "t.sqlite", capsys)[0] == 0
    with sqlite3.connect(fixed / "t.sqlite") as con:
        assert con.execute("SELECT x FROM late").fetchall() == [(42,)]


def test_leftover_journal_is_refused(trace, capsys):
    Path(f"{trace}-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\0" * 504)
    code, _, err = inspect(trace, capsys)
    assert code == 4 and (f"{trace}-journal: changes to the trace not yet merged into it (the program writing it "
                          "is still at work, or stopped") in err


def test_wal_header_without_leftover_opens_and_writes_nothing_beside(trace, capsys):
    code, plain, _ = inspect(trace, capsys)
    to_wal(trace)
    before = sorted(os.listdir(trace.parent))
    code, wal, err = inspect(trace, capsys)
    assert (code, err) == (0, "")
    assert sorted(os.listdir(trace.parent)) == before                 # no -wal or -shm appeared
    assert json.loads(wal)["counts"] == json.loads(plain)["counts"]


def test_wal_header_without_leftover_opens_from_a_read_only_file_system(trace):
    to_wal(trace)
    done = read_only_run(trace.parent, ["inspect", str(trace), "--format", "json"])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["kernels"] > 0


def test_the_private_copy_of_a_wal_trace_is_removed_after_use(trace, tmp_path, capsys, monkeypatch):
    to_wal(trace)
    second = Path(shutil.copyfile(trace, trace.parent / "u.sqlite"))
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    assert inspect(trace, capsys)[0] == 0 and list(temp.iterdir()) == []
    jobs = []
    for t in (trace, second):                      # two groups: each read in a pool worker
        jobs.append(tmp_path / f"{t.stem}.yaml")
        jobs[-1].write_text(json.dumps({"name": t.stem, "trace": str(t), "region": {"name": "train_step"},
                                        "hardware": {"num_gpus": 2, "precision": "bf16"},
                                        "model": {"flops_per_step": 4.0e+13},
                                        "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}))
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", *map(str, jobs), "--out",
                           str(tmp_path / "out"), "--jobs", "2", "--no-cache"], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(temp)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in temp.iterdir() if p.name.startswith("mfu-")] == []
