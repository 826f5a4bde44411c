"""History: a run appended twice, rendered as a trend per job; reproducible output."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from pipeline.cli import main
from tests.test_batch import write


def test_appended_twice_and_rendered(synth_trace, tmp_path, capsys):
    t1, _ = synth_trace()
    t2, _ = synth_trace(step_ns=55_000_000)
    job = write(tmp_path, "a", t1)
    db = tmp_path / "h.duckdb"
    assert main(["run", str(job), "--out", str(tmp_path / "r1"), "--history", str(db)]) == 0
    first = json.loads((tmp_path / "r1/a/result.json").read_text())
    job = write(tmp_path, "a", t2)                # next scheduled run: another trace, same job name
    assert main(["run", str(job), "--out", str(tmp_path / "r2"), "--history", str(db)]) == 0
    second = json.loads((tmp_path / "r2/a/result.json").read_text())
    rows = duckdb.connect(str(db), read_only=True).execute(
        "SELECT run, job, config_sha256, trace_sha256, mfu_pct_wall FROM history ORDER BY run").fetchall()
    assert rows == [(1, "a", first["job"]["config_sha256"], first["trace"]["sha256"], first["metrics"]["mfu_pct_wall"]),
                    (2, "a", second["job"]["config_sha256"], second["trace"]["sha256"],
                     second["metrics"]["mfu_pct_wall"])]
    capsys.readouterr()
    assert main(["history", str(db), "--out", str(tmp_path / "h")]) == 0
    md = (tmp_path / "h/history.md").read_text()
    change = second["metrics"]["mfu_pct_wall"] - first["metrics"]["mfu_pct_wall"]
    assert f"{change:+.2f} pt" in md and "| 1 |" in md and "| 2 |" in md
    step = 100 * (second["step_time"]["median_s"] / first["step_time"]["median_s"] - 1)
    assert f"{step:+.1f} %" in md
    assert (tmp_path / "h/history.html").read_text().count("<svg") == 2
    assert main(["history", str(db), "--out", str(tmp_path / "h2")]) == 0
    assert (tmp_path / "h2/history.html").read_bytes() == (tmp_path / "h/history.html").read_bytes()


def test_missing_history_is_a_usage_error(tmp_path, capsys):
    assert main(["history", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "h")]) == 2
    assert "Traceback" not in capsys.readouterr().err and not (tmp_path / "h").exists()
