"""Files a user names are read by type and size before content (issue 33): a FIFO, a device or a file far beyond
the job-file limit is refused at once with exit 3, never waited on or read whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.errors import TraceError
from pipeline.job.config import load_job

JOB = """name: special
trace: missing.sqlite
region: {name: train_step}
hardware: {num_gpus: 2, precision: bf16}
model: {flops_per_step: 4.0e+13}
workload: {mode: training, seq_len: 2048, global_batch: 8}
"""


def _validate(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """In a child with a deadline: a FIFO blocked the reader forever, which a test in this process would share."""
    return subprocess.run([sys.executable, "-m", "pipeline.cli", "validate", str(path)], cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def test_a_fifo_as_job_file_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "job.yaml")
    done = _validate(tmp_path / "job.yaml", tmp_path)
    assert done.returncode == 3 and "job.yaml: cannot read job file: a named pipe (FIFO), not a regular file" in \
        done.stderr and "Traceback" not in done.stderr


def test_a_fifo_as_extends_base_is_refused_not_waited_on(tmp_path):
    os.mkfifo(tmp_path / "base.yaml")
    (tmp_path / "job.yaml").write_text("extends: base.yaml\n" + JOB)
    done = _validate(tmp_path / "job.yaml", tmp_path)
    assert done.returncode == 3 and "base.yaml: cannot read job file: a named pipe (FIFO)" in done.stderr


def test_a_device_as_job_file_is_refused_unread(capsys):
    assert main(["validate", os.devnull]) == 3
    assert f"{os.devnull}: cannot read job file: a character device, not a regular file" in capsys.readouterr().err


def test_the_size_limit_holds_while_reading(tmp_path, capsys):
    """A sparse 64 GiB file: read whole first, it ran out of memory (exit 2) instead of being refused as too large."""
    job = tmp_path / "job.yaml"
    with job.open("wb") as fh:
        fh.truncate(64 << 30)
    assert main(["validate", str(job)]) == 3
    assert "job.yaml:1:1: /: larger than any job or config file (1,048,576 bytes at most)" in capsys.readouterr().err


def test_a_nul_byte_is_located(tmp_path, capsys):
    (tmp_path / "job.yaml").write_text(JOB.replace("name: special", "name: spe\0cial"))
    assert main(["validate", str(tmp_path / "job.yaml")]) == 3
    assert "job.yaml:1:10: /: invalid YAML: character #x0000 is not allowed" in capsys.readouterr().err


def test_a_nul_byte_after_a_byte_order_mark_is_located_as_an_editor_counts(tmp_path, capsys):
    """YAML's offset counts the mark (U+FEFF) that Windows editors write first: the column was one too far."""
    (tmp_path / "job.yaml").write_text("\ufeff" + JOB.replace("name: special", "name: spe\0cial"))
    assert main(["validate", str(tmp_path / "job.yaml")]) == 3
    assert "job.yaml:1:10: /: invalid YAML: character #x0000 is not allowed" in capsys.readouterr().err


def test_a_glob_of_empty_files_is_refused_before_any_task(tmp_path):
    """10,000 empty files matched by a glob took minutes: each was handed to a worker task that then failed. The
    parent refuses the first non-trace file before submitting anything."""
    from pipeline.analysis import ranks
    (tmp_path / "t").mkdir()
    for i in range(50):
        (tmp_path / "t" / f"r{i:02d}.sqlite").touch()
    (tmp_path / "job.yaml").write_text(JOB.replace("trace: missing.sqlite", "trace: t/*.sqlite"))

    def submit(*_args):
        raise AssertionError("a task was submitted for a file that is no trace")
    with pytest.raises(TraceError, match=r"r00.sqlite: not an SQLite file"):
        ranks.build_files(load_job(tmp_path / "job.yaml"), [], None, submit)


def test_a_job_file_is_parsed_once_by_validate(tmp_path, monkeypatch, capsys):
    """`mfu validate` asked whether each file is a base by parsing it whole, then parsed it again to load it: a
    job file of 40,000 keys paid the pure-Python YAML parse twice. A file without `kind` is no base, unparsed."""
    from pipeline.job import config, parsing
    calls = []
    real = parsing.parse_yaml
    for module in (parsing, config):           # extends imports it from parsing, load_job has its own name
        monkeypatch.setattr(module, "parse_yaml", lambda *a, **k: calls.append(1) or real(*a, **k))
    (tmp_path / "job.yaml").write_text(JOB)
    main(["validate", str(tmp_path / "job.yaml")])
    assert len(calls) == 1
