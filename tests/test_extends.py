"""`extends:`: one level of shared defaults; problems located in the file that holds them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pipeline.job.config import load_job
from pipeline.errors import ConfigError

BASE = """\
trace: runs/t.sqlite
region:
  name: train_step
  occurrences: {first: 2}
hardware:
  num_gpus: 8
  precision: bf16
model:
  flops_per_step: 4.0e+14
workload:
  mode: training
  seq_len: 4096
  global_batch: 16
"""


def files(tmp_path: Path, child: str, base: str = BASE) -> Path:
    (tmp_path / "shared").mkdir(exist_ok=True)
    (tmp_path / "shared" / "base.yaml").write_text(base)
    (tmp_path / "jobs").mkdir(exist_ok=True)
    path = tmp_path / "jobs" / "job.yaml"
    path.write_text(textwrap.dedent(child))
    return path


def test_job_overrides_and_inherits(tmp_path):
    job = load_job(files(tmp_path, """\
        name: big
        extends: ../shared/base.yaml
        hardware: {num_gpus: 16}
        workload: {global_batch: 32}
        """))
    assert job.hardware["num_gpus"] == 16 and job.hardware["precision"] == "bf16"     # merged key by key
    assert job.workload["global_batch"] == 32 and job.workload["seq_len"] == 4096
    assert job.region.first == 2
    # the base's trace path is relative to the base, wherever the job lives
    assert job.trace_files() == [tmp_path / "jobs" / ".." / "shared" / "runs" / "t.sqlite"]


def test_base_change_changes_the_config_hash(tmp_path):
    child = "name: a\nextends: ../shared/base.yaml\n"
    one = load_job(files(tmp_path, child)).sha256
    two = load_job(files(tmp_path, child, BASE.replace("4096", "8192"))).sha256
    assert one != two


def test_problem_in_the_base_points_at_the_base(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_job(files(tmp_path, "name: a\nextends: ../shared/base.yaml\n",
                       BASE.replace("precision: bf16", "precision: bf17").replace("  seq_len", "  seqlen")))
    text = str(info.value)
    assert "shared/base.yaml:7:14: /hardware/precision" in text
    assert "shared/base.yaml:12:3: /workload/seqlen: unknown key" in text


def test_problem_in_the_job_points_at_the_job(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_job(files(tmp_path, "name: a\nextends: ../shared/base.yaml\nhardware: {num_gpus: 0}\n"))
    assert "jobs/job.yaml:3:22: /hardware/num_gpus" in str(info.value)


def test_one_level_only(tmp_path):
    with pytest.raises(ConfigError, match="one level only"):
        load_job(files(tmp_path, "name: a\nextends: ../shared/base.yaml\n", "extends: other.yaml\n" + BASE))


def test_missing_base_is_located(tmp_path):
    with pytest.raises(ConfigError, match="no such job file.*extends: nope.yaml"):
        load_job(files(tmp_path, "name: a\nextends: nope.yaml\n"))


def test_scope_problem_in_the_base_points_at_the_base(tmp_path):
    """The job-file rules (checks.job_file.JOB_RULES) locate a value that comes from the base in the base file."""
    from pipeline.run import load_checked
    base = BASE.replace("seq_len: 4096", "seq_len: 4096\n  seq_lens: [5000]")     # 5000 tokens > seq_len
    with pytest.raises(ConfigError) as err:
        load_checked(files(tmp_path, "name: a\nextends: ../shared/base.yaml\n", base))
    (p,) = err.value.problems
    assert p.pointer == "/workload/seq_lens" and p.file.endswith("base.yaml")
    assert p.line == base.splitlines().index("  seq_lens: [5000]") + 1
