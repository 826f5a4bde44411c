"""Several small trace files built as one (analysis/merged.py, issue 34): the same reports as built one by one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.analysis import merged
from pipeline.batch import run_batch
from pipeline.trace.synth import SynthSpec, generate


def _job(root: Path, name: str, files: list[str], region: dict) -> Path:
    body = {"name": name, "trace": files, "region": region,
            "hardware": {"gpu": "auto", "num_gpus": 2 * len(files), "precision": "bf16"},
            "model": {"flops_per_step": 4.0e+12}, "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}
    path = root / f"{name}.yaml"
    path.write_text(json.dumps(body))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """Three rank files of two ranks each, all with the same pids and device ids (separate hosts' captures);
    one drops launch rows (unattributed kernels); all have operator ranges with shapes (counted FLOPs)."""
    root = tmp_path_factory.mktemp("merged")
    for i in range(3):
        generate(SynthSpec(ranks=2, steps=6, kernels_per_step=30, seed=i, drop_launch_every=7 if i == 1 else 0,
                           operator_shapes=True), root / f"rank{i}.sqlite")
    return root


def _both(monkeypatch, job: Path, out: Path) -> tuple[list, list, list[bool]]:
    """The job's rows built as one, then one by one (no file small), and whether each build took the merged path."""
    used: list[bool] = []
    build = merged._build

    def spy(*args):
        try:
            got = build(*args)
        except Exception:
            used.append(False)
            raise
        used.append(got is not None)
        return got
    monkeypatch.setattr(merged, "_build", spy)
    one = run_batch([job], out / "one", workers=1)
    monkeypatch.setattr(merged, "SMALL_BYTES", 0)
    each = run_batch([job], out / "each", workers=1)
    return one, each, used


def _reports(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.glob("*/*")) if p.is_file()}


def test_small_files_built_as_one_give_the_same_bytes(files, tmp_path, monkeypatch):
    job = _job(files, "three", ["rank0.sqlite", "rank1.sqlite", "rank2.sqlite"],
               {"name": "train_step", "occurrences": {"first": 2, "last": 5}})
    one, each, used = _both(monkeypatch, job, tmp_path)
    assert used == [True]                       # built as one, then (SMALL_BYTES 0) never tried
    assert [r["exit_code"] for r in one] == [r["exit_code"] for r in each] == [0]
    result = json.loads((tmp_path / "one" / "three" / "result.json").read_text())
    assert len(result["trace"]["files"]) == 3 and len(result["ranks"]) > 3
    assert result["counted_flops"]["operators"]                  # the files' counted FLOPs, summed as one
    assert _reports(tmp_path / "one") == _reports(tmp_path / "each") != {}


def test_too_many_occurrences_is_the_same_error(files, tmp_path, monkeypatch):
    job = _job(files, "many", ["rank0.sqlite", "rank2.sqlite"],
               {"name": "train_step", "occurrences": {"first": 2, "last": 9}})
    one, each, used = _both(monkeypatch, job, tmp_path)
    assert used == [True]
    assert one[0]["exit_code"] == 4 and one[0]["reason"] == each[0]["reason"]
    assert "fewer occurrences" in one[0]["reason"]


def test_a_file_without_the_region_is_built_one_by_one(files, tmp_path, monkeypatch):
    """Built as one, the other files hold the region: only building each says which file has none."""
    generate(SynthSpec(ranks=1, steps=6, kernels_per_step=30, region="other_step"), files / "other.sqlite")
    job = _job(files, "missing", ["rank0.sqlite", "other.sqlite"], {"name": "train_step"})
    one, each, used = _both(monkeypatch, job, tmp_path)
    assert used == [False]
    assert one[0]["exit_code"] == 4 and one[0]["reason"] == each[0]["reason"]
    assert "other.sqlite: no NVTX range matches 'train_step'" in one[0]["reason"]


def test_big_files_are_not_small(files, monkeypatch):
    from pipeline.analysis.ranks import open_set
    ts = open_set([files / "rank0.sqlite", files / "rank2.sqlite"])
    try:
        assert merged.small(ts.paths)
        assert not merged.small(ts.paths[:1])                   # one file: nothing to merge
        monkeypatch.setattr(merged, "MOST_BYTES", ts.paths[0].stat().st_size)
        assert not merged.small(ts.paths)                       # together too big: held twice while built as one
    finally:
        ts.close()


def test_a_failed_build_drops_its_copies(files, tmp_path, monkeypatch):
    """With a cache each file keeps its own Parquet copy, and building as one copies the rows once more: when that
    fails, the copies are dropped before the files are built one by one (they could hold MOST_BYTES)."""
    from pipeline.analysis.classes import classify_params, load_rules
    from pipeline.analysis.ranks import open_set
    from pipeline.job.config import load_job
    job = _job(files, "drop", ["rank0.sqlite", "rank2.sqlite"], {"name": "train_step"})
    build = merged._build

    def failing(ts, *args):
        build(ts, *args)                        # the copies made (and the window built) ...
        raise merged.NotAsOne("as if the files differed")   # ... then a failure
    monkeypatch.setattr(merged, "_build", failing)
    ts = open_set([files / "rank0.sqlite", files / "rank2.sqlite"], cache_dir=tmp_path / "cache")
    try:
        assert not ts.pooled
        assert merged.build(ts, load_job(job), classify_params(load_rules()), ["a", "b"]) is None
        left = ts.con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'raw%__all'").fetchall()
        assert left == []
    finally:
        ts.close()
