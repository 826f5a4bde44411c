"""History: runs appended to a DuckDB file or a Parquet folder, rendered as a trend per job; same bytes either way."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest

from pipeline import history
from pipeline.cli import main
from pipeline.job.documents import validator
from pipeline.errors import UsageError
from pipeline.history import append
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


def fake(name: str, mfu: float, step: float = 1.0) -> dict:
    """The fields of a result.json that a history keeps; values chosen by hand."""
    return {"job": {"name": name, "config_sha256": "c" * 64}, "trace": {"sha256": "ab" * 32}, "status": "ok",
            "metrics": {"mfu_pct_wall": mfu, "hfu_pct_wall": mfu, "tokens_per_s": 1000.0},
            "step_time": {"median_s": step}}


def test_folder_and_duckdb_render_the_same_bytes(synth_trace, tmp_path, capsys):
    t1, _ = synth_trace()
    t2, _ = synth_trace(step_ns=55_000_000)
    db, folder = tmp_path / "h.duckdb", tmp_path / "results"
    assert main(["run", str(write(tmp_path, "a", t1)), "--out", str(tmp_path / "r1"), "--history", str(folder)]) == 0
    assert append(db, [json.loads((tmp_path / "r1/a/result.json").read_text())]) == 1
    first = (folder / "run-000001.parquet").read_bytes()
    assert main(["run", str(write(tmp_path, "a", t2)), "--out", str(tmp_path / "r2"), "--history", str(folder)]) == 0
    assert "as run 2 to" in capsys.readouterr().err
    assert append(db, [json.loads((tmp_path / "r2/a/result.json").read_text())]) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["run-000001.parquet", "run-000002.parquet"]
    assert (folder / "run-000001.parquet").read_bytes() == first          # earlier runs are never rewritten
    assert main(["history", str(db), "--out", str(tmp_path / "hd")]) == 0
    assert main(["history", str(folder), "--out", str(tmp_path / "hf")]) == 0
    for name in ("history.md", "history.html", "history.json"):
        assert (tmp_path / "hf" / name).read_bytes() == (tmp_path / "hd" / name).read_bytes(), name
    assert "| 2 |" in (tmp_path / "hf/history.md").read_text()
    doc = json.loads((tmp_path / "hf/history.json").read_text())
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []


def test_a_number_taken_meanwhile_goes_to_the_next_run(tmp_path, monkeypatch):
    folder = tmp_path / "h"
    assert append(folder, [fake("a", 40.0)]) == 1
    first = (folder / "run-000001.parquet").read_bytes()
    monkeypatch.setattr(history, "_runs", lambda f: {})   # as if another run linked run 1 after we listed
    assert append(folder, [fake("a", 41.0)]) == 2
    assert (folder / "run-000001.parquet").read_bytes() == first
    rows = duckdb.connect().execute("SELECT run, mfu_pct_wall FROM read_parquet(?) ORDER BY run",
                                    [str(folder / "run-000002.parquet")]).fetchall()
    assert rows == [(2, 41.0)]                               # the file's rows carry the number it got


def test_concurrent_appends_get_distinct_runs(tmp_path):
    folder, n = tmp_path / "h", 8
    with ThreadPoolExecutor(n) as pool:
        runs = sorted(pool.map(lambda i: append(folder, [fake(f"j{i}", float(i))]), range(n)))
    assert runs == list(range(1, n + 1))
    assert sorted(p.name for p in folder.iterdir()) == [f"run-{i:06d}.parquet" for i in range(1, n + 1)]
    rows = duckdb.connect().execute(f"SELECT run, job FROM read_parquet('{folder}/*.parquet')").fetchall()
    assert len(rows) == n and sorted(r for r, _ in rows) == runs


def test_a_run_without_results_writes_nothing(tmp_path):
    assert append(tmp_path / "h", []) == 1 and list((tmp_path / "h").iterdir()) == []
    assert append(tmp_path / "h.duckdb", []) == 1


def test_a_file_not_named_duckdb_is_refused_before_running(tmp_path, capsys):
    (tmp_path / "old.db").write_text("x")
    job = write(tmp_path, "a", tmp_path / "missing.sqlite")
    assert main(["run", str(job), "--out", str(tmp_path / "r"), "--history", str(tmp_path / "old.db")]) == 2
    err = capsys.readouterr().err
    assert "not ending in .duckdb is a folder" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("setup, message", [
    (lambda f: f.mkdir(), "no history folder"),
    (lambda f: (f.mkdir(), duckdb.connect().sql("SELECT 1 AS x").write_parquet(str(f / "run-000001.parquet"))),
     "not an mfu history folder"),
])
def test_folder_without_history_is_a_usage_error(tmp_path, capsys, setup, message):
    setup(tmp_path / "h")
    assert main(["history", str(tmp_path / "h"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not (tmp_path / "out").exists()


def test_no_hard_links_is_a_usage_error_and_leaves_no_temp_file(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise PermissionError(1, "Operation not permitted")
    monkeypatch.setattr(history.os, "link", refuse)
    with pytest.raises(UsageError, match="needs a file system with hard links"):
        append(tmp_path / "h", [fake("a", 40.0)])
    assert list((tmp_path / "h").iterdir()) == []


def test_history_json_matches_its_schema(tmp_path):
    for mfu, step in [(40.0, 1.0), (38.0, 1.1)]:
        append(tmp_path / "h", [fake("a", mfu, step), {**fake("b", 30.0), "straggler": {"total_s": 0.5}}])
    history.write(tmp_path / "h", tmp_path / "out")
    doc = json.loads((tmp_path / "out/history.json").read_text())
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    assert doc["jobs"][0]["runs"][1]["mfu_change_pt"] == pytest.approx(-2.0)
    doc["jobs"][0]["runs"][0]["extra"] = 1
    del doc["jobs"][1]["chart_mfu"]
    assert len(list(validator("history.schema.json").iter_errors(doc))) == 2
