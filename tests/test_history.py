"""History: runs appended to a DuckDB file or a Parquet folder, rendered as a trend per job; same bytes either way."""

from __future__ import annotations

import json
import re
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from pipeline import history
from pipeline.cli import main
from pipeline.job.documents import validator
from pipeline.errors import UsageError
from pipeline.history import append
from pipeline.report import render
from pipeline.report.charts import history_charts
from tests import fake_results
from tests.test_batch import write
from tests.test_markdown_escaping import tables_after_text
from tests.test_sql_history_append import V1_DDL, V1_ROW
from tests.test_sql_history_migrate import V2_DDL


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
    assert md.startswith("# MFU history\n\n") and tables_after_text(md) == []
    change = second["metrics"]["mfu_pct_wall"] - first["metrics"]["mfu_pct_wall"]
    assert f"| {change:+.2f} |" in md and "| 1 |" in md and "| 2 |" in md      # column "change (pt)"
    step = 100 * (second["step_time"]["median_s"] / first["step_time"]["median_s"] - 1)
    assert f"| {step:+.1f} |" in md                                            # column "change (%)"
    # MFU of every job on one chart, then this job's step time; the same drawings as sidecars for history.md
    # (the page also carries each at phone width: phone_charts.py)
    page = (tmp_path / "h/history.html").read_text()
    assert page.count("<svg") == 4
    assert page.count('class="chart chart-history"') == page.count('class="chart chart-history-phone"') == 2
    assert "](history-mfu.svg)" in md and "](history-step-1.svg)" in md
    assert (tmp_path / "h/history-mfu.svg").is_file() and (tmp_path / "h/history-step-1.svg").is_file()
    assert main(["history", str(db), "--out", str(tmp_path / "h2")]) == 0
    assert (tmp_path / "h2/history.html").read_bytes() == (tmp_path / "h/history.html").read_bytes()


def test_missing_history_is_a_usage_error(tmp_path, capsys):
    assert main(["history", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "h")]) == 2
    assert "Traceback" not in capsys.readouterr().err and not (tmp_path / "h").exists()


def fake(name: str, mfu: float, step: float = 1.0, samples: list[float] | None = None) -> dict:
    """The fields of a result.json that a history keeps; values chosen by hand (8 GPUs at 1000 TFLOP/s), with
    the inputs `mfu compare` decides comparability on (the same in every fake run)."""
    return {"job": {"name": name, "config_sha256": "c" * 64}, "trace": {"sha256": "ab" * 32}, "status": "ok",
            "metrics": {"mfu_pct_wall": mfu, "hfu_pct_wall": mfu, "tokens_per_s": 1000.0},
            "step_time": {"median_s": step},
            "flops": {"model_flops_per_occurrence": 4 * 10**15, "model_flops_per_step": 4 * 10**15,
                      "tokens_per_step": 1000, "convention": "6N"},
            "hardware": {"num_gpus": 8, "peak_tflops": 1000.0, "key": "h100_sxm", "precision": "bf16",
                         "peak_source": "catalog"},
            "region": {"steps_per_occurrence": 1, "attribution": "launch"}, "totals": {"occurrences": 3},
            "occurrences": [{"wall_time_s": t, "step_time_s": t, "mfu_pct_wall": mfu * step / t}   # MFU ~ 1 / time
                            for t in (samples or [step] * 3)]}


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
     "not an mfu history (the columns"),
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
    del doc["jobs"][1]["flagged_runs"]
    assert len(list(validator("history.schema.json").iter_errors(doc))) == 2


def test_label_and_samples_are_stored_with_each_run(synth_trace, tmp_path, capsys):
    t, truth = synth_trace()
    db = tmp_path / "h.duckdb"
    assert main(["run", str(write(tmp_path, "a", t)), "--out", str(tmp_path / "r"), "--history", str(db),
                 "--label", "abc1234"]) == 0
    res = json.loads((tmp_path / "r/a/result.json").read_text())
    row = duckdb.connect(str(db), read_only=True).execute(
        "SELECT label, samples_field, step_samples_s, mfu_samples_pct, format_version FROM history").fetchone()
    walls = [o["wall_ns"] / 1e9 for o in truth["occurrences"]]                     # ground truth of the trace
    field = "step_time_s" if "step_time_s" in res["occurrences"][0] else "wall_time_s"
    assert row[0] == "abc1234" and row[1] == field and row[4] == history.FORMAT_VERSION
    assert row[2] == pytest.approx(walls, abs=1e-9)
    flops, gpus, peak = 4.0e13, 2, res["hardware"]["peak_tflops"]                 # the job's numbers (test_batch.write)
    assert row[3] == pytest.approx([100 * flops / (w * gpus * peak * 1e12) for w in walls], rel=1e-9)
    assert main(["history", str(db), "--out", str(tmp_path / "h")]) == 0
    assert "| 1 | abc1234 |" in (tmp_path / "h/history.md").read_text()


def v1_history(db: Path, rows: list[tuple]) -> None:
    """A DuckDB history as the code before formats were versioned wrote it (its DDL copied here)."""
    with duckdb.connect(str(db)) as con:
        con.execute(V1_DDL)
        for r in rows:
            con.execute("INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", r)


def test_format_1_duckdb_is_read_as_is_and_migrated_on_append(tmp_path, capsys):
    db = tmp_path / "old.duckdb"
    v1_history(db, [(1, "a", "c" * 64, "ab" * 32, "ok", 40.0, 40.0, 1.0, 1000.0, None),
                    (2, "a", "c" * 64, "ab" * 32, "ok", 30.0, 30.0, 1.3, 800.0, None)])
    before = db.read_bytes()
    with duckdb.connect(str(db), read_only=True) as con:
        assert history.table_version(con) == 1
    assert main(["history", str(db), "--out", str(tmp_path / "h1")]) == 0
    assert db.read_bytes() == before                                       # reading never rewrites the file
    doc = json.loads((tmp_path / "h1/history.json").read_text())
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    assert doc["format_version"] == 1 and [r["format_version"] for r in doc["jobs"][0]["runs"]] == [1, 1]
    # MFU -25 %, step +30 %: far beyond 5 %, but format 1 recorded neither samples nor comparability inputs.
    # Until format 3 this run was flagged 'cannot decide'; its inputs are unknown, and compare refuses a figure
    # whose input is unknown: not comparable, no flag (behaviour changed on purpose)
    run2 = doc["jobs"][0]["runs"][1]
    assert run2["flag"] is None and run2["changes"] == [] and doc["jobs"][0]["flagged_runs"] == []
    assert run2["inputs"] is None and run2["compared_with_run"] == 1
    assert run2["not_comparable"] == [{"metrics": ["mfu_pct_wall", "step_time_median_s"],
                                       "figures": ["MFU (wall)", "step time (median)"],
                                       "reasons": ["comparability inputs unknown (both: stored before history "
                                                   "format 3)"]}]
    assert run2["mfu_change_pt"] == pytest.approx(-10.0)               # the arithmetic stays: 30 - 40
    assert "not comparable: a run 2 MFU (wall), step time (median) with run 1: comparability inputs unknown " \
           "(both: stored before history format 3)" in capsys.readouterr().err
    md = (tmp_path / "h1/history.md").read_text()
    assert "Not comparable with the run before: run 2." in md and "| -10.00 ⚠ |" in md and "| +30.0 ⚠ |" in md
    assert "Runs stored before history format 3 did not record these inputs" in md
    assert append(db, [fake("a", 41.0, 1.0, [1.0] * 6)], label="v3") == 3
    with duckdb.connect(str(db), read_only=True) as con:
        assert history.table_version(con) == 4
        assert con.execute("SELECT run, label, format_version, step_samples_s, comparability_inputs IS NULL "
                           "FROM history ORDER BY run").fetchall() \
            == [(1, None, 1, None, True), (2, None, 1, None, True), (3, "v3", 4, [1.0] * 6, False)]
    assert main(["history", str(db), "--out", str(tmp_path / "h2")]) == 0
    doc = json.loads((tmp_path / "h2/history.json").read_text())
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    assert doc["format_version"] == 4 and doc["jobs"][0]["runs"][2]["label"] == "v3"
    # run 3 knows its inputs, run 2 does not: still not comparable, said from run 3's side
    assert doc["jobs"][0]["runs"][2]["not_comparable"][0]["reasons"] == [
        "comparability inputs unknown (the baseline: stored before history format 3)"]


def test_format_1_parquet_files_are_read_beside_new_ones(tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    with duckdb.connect() as con:
        con.execute(V1_DDL)
        con.execute(V1_ROW)
        con.table("history").write_parquet(str(folder / "run-000001.parquet"))
    assert history.trend(folder)["format_version"] == 1
    assert append(folder, [fake("a", 41.0)]) == 2
    doc = history.trend(folder)
    assert doc["format_version"] == 4 and [r["format_version"] for r in doc["jobs"][0]["runs"]] == [1, 4]


def _rewritten(path: Path, select: str) -> None:
    """Rewrite a one-run history of either form with `SELECT {select} FROM history` (rows of another format)."""
    if history.is_folder(path):
        run = path / "run-000001.parquet"
        with duckdb.connect() as con:
            con.execute(f"CREATE TABLE history AS SELECT {select} FROM read_parquet(?)", [str(run)])
            con.table("history").write_parquet(str(run))
    else:
        with duckdb.connect(str(path)) as con:
            con.execute(f"CREATE TABLE old AS SELECT {select} FROM history")
            con.execute("DROP TABLE history")
            con.execute("ALTER TABLE old RENAME TO history")


def _files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())} if path.is_dir() else {path.name: path.read_bytes()}


NEWER = history.FORMAT_VERSION + 1


@pytest.mark.parametrize("name", ["h.duckdb", "h"])
@pytest.mark.parametrize("select, message", [
    (f"* REPLACE ({NEWER} AS format_version)",
     f"history format {NEWER} is newer than this mfu-pipeline reads ({NEWER - 1}); upgrade mfu-pipeline"),
    ("run, job AS name, status", "not an mfu history (the columns of its {held} match no history format"),
])
def test_a_history_of_a_newer_format_or_none_is_refused_before_any_job_and_left_as_it_was(tmp_path, capsys, name,
                                                                                            select, message):
    """A folder's runs are checked as a DuckDB file's table is: a newer format (whose rows this version would
    misread) or no history at all is exit 2 before any job runs, and nothing is written. A folder used to get
    this version's run beside them. Run files that are no history are named as such: a folder has no `history`
    table, which the message named for both forms."""
    path = tmp_path / name
    message = message.format(held="`history` table" if name.endswith(".duckdb") else "run-*.parquet files")
    append(path, [fake("a", 40.0)])
    _rewritten(path, select)
    before = _files(path)
    job = write(tmp_path, "a", tmp_path / "missing.sqlite")
    assert main(["run", str(job), "--out", str(tmp_path / "r"), "--history", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {message}" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
    with pytest.raises(UsageError, match=re.escape(message)):
        append(path, [fake("a", 41.0)])
    assert _files(path) == before


@pytest.mark.parametrize("name", ["h.duckdb", "h"])
def test_a_history_of_an_older_format_takes_the_run_in_either_form(tmp_path, capsys, name):
    """A format-3 history (before failed jobs were recorded) takes a run of the current format through
    `mfu run --history`: the file's table is migrated, a folder's earlier file is left as written (its rows
    are migrated when read). Here the run's one job fails (no trace): a row only format 4 can hold."""
    path = tmp_path / name
    append(path, [fake("a", 40.0)])
    _rewritten(path, "* EXCLUDE (exit_code, error) REPLACE (3 AS format_version)")
    first = _files(path).get("run-000001.parquet")
    job = write(tmp_path, "a", tmp_path / "missing.sqlite")
    assert main(["run", str(job), "--out", str(tmp_path / "r"), "--history", str(path)]) == 4
    assert f"history: appended 0 results and 1 failure as run 2 to {path}" in capsys.readouterr().err
    if first is not None:
        assert _files(path)["run-000001.parquet"] == first
    doc = history.trend(path)
    assert doc["format_version"] == 4
    assert [(r["run"], r["format_version"], r["status"], r["exit_code"]) for r in doc["jobs"][0]["runs"]] \
        == [(1, 3, "ok", None), (2, 4, "failed", 4)]


def test_a_duckdb_table_that_is_no_history_is_refused(tmp_path, capsys):
    db = tmp_path / "other.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE history (run INTEGER, something VARCHAR)")
        assert history.table_version(con) is None
    with pytest.raises(UsageError, match="not an mfu history"):
        append(db, [fake("a", 40.0)])
    assert main(["history", str(db), "--out", str(tmp_path / "h")]) == 2
    assert "not an mfu history" in capsys.readouterr().err


def test_changes_between_consecutive_runs_are_flagged_where_they_happen(tmp_path, capsys):
    """Runs 1-3 one distribution (n 20, CV 2 %), run 4 10 % slower, run 5 back: flags at 4 and 5 only."""
    folder = tmp_path / "h"
    shifts = [1.0, 1.0, 1.0, 1.10, 1.0]
    for run, k in enumerate(shifts, start=1):
        steps = [k * v for v in fake_results.normal_steps(run, 20, 0.02)]
        append(folder, [fake("a", 40.0 / k, statistics.median(steps), steps)], label=f"commit{run}")
    assert main(["history", str(folder), "--out", str(tmp_path / "out")]) == 0
    doc = json.loads((tmp_path / "out/history.json").read_text())
    runs = doc["jobs"][0]["runs"]
    assert doc["jobs"][0]["flagged_runs"] == [4, 5]
    assert [r["flag"] for r in runs] == [None, None, None, "regression", "improvement"]
    step = next(c for c in runs[3]["changes"] if c["metric"] == "step_time_median_s")
    assert step["change_pct"] > 5 and step["verdict"] == "worse" and step["test"]["p_value"] < 0.01
    mfu = next(c for c in runs[3]["changes"] if c["metric"] == "mfu_pct_wall")
    assert mfu["change_pct"] == pytest.approx(100 * (1 / 1.1 - 1)) and mfu["verdict"] == "worse"
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    err = capsys.readouterr().err
    assert "regression: a run 4 (commit4) step time (median): +" in err and "improvement: a run 5 (commit5)" in err
    md = (tmp_path / "out/history.md").read_text()
    assert "Changes at runs 4, 5." in md
    assert f"⚑ **regression**: step time (median) {step['change_pct']:+.2f} % (worse), p = {step['test']['p_value']:.3g}" in md
    # a threshold above the 10 % shift flags nothing
    assert history.trend(folder, 20.0)["jobs"][0]["flagged_runs"] == []


@pytest.mark.parametrize("name", ["old.duckdb", "old-folder"])
def test_mfu_threshold_is_stored_and_older_format_2_rows_read_as_null(tmp_path, name):
    """A format-2 history written before thresholds were kept (no mfu_pct_wall_min column) is read
    and appended to; its rows have no threshold, the new run has the job's, and the chart draws it."""
    path = tmp_path / name
    with duckdb.connect(str(path) if name.endswith(".duckdb") else ":memory:") as con:
        con.execute(V2_DDL)
        con.execute("INSERT INTO history VALUES (1, 'a', ?, ?, 'ok', 40.0, 40.0, 1.0, 1000.0, NULL, NULL, "
                    "'step_time_s', [1.0, 1.0, 1.0], [40.0, 40.0, 40.0], 2)", ["c" * 64, "ab" * 32])
        if not name.endswith(".duckdb"):
            path.mkdir()
            con.table("history").write_parquet(str(path / "run-000001.parquet"))
    assert [r["mfu_pct_wall_min"] for r in history.trend(path)["jobs"][0]["runs"]] == [None]
    gated = {**fake("a", 41.0), "thresholds": [{"name": "hfu_pct_wall_min", "limit": 50.0, "value": 41.0,
                                                 "passed": False},
                                                {"name": "mfu_pct_wall_min", "limit": 35.0, "value": 41.0,
                                                 "passed": True}]}
    assert append(path, [gated, fake("b", 30.0)]) == 2
    doc = history.trend(path)
    assert doc["format_version"] == 4
    assert [[r["mfu_pct_wall_min"] for r in j["runs"]] for j in doc["jobs"]] == [[None, 35.0], [None]]
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    svg = history_charts(doc)["history-mfu.svg"]
    assert svg.count('class="threshold"') == 1 and "a threshold 35.00" in svg     # job b has none


def test_invalid_runs_are_listed_not_drawn_and_threshold_misses_are_said(tmp_path):
    """A 258 % invalid run once set the MFU chart's axis to 0-300; a run under its MFU threshold read 'ok'."""
    path = tmp_path / "h.duckdb"
    gated = {**fake("a", 31.0), "thresholds": [{"name": "mfu_pct_wall_min", "limit": 35.0, "value": 31.0,
                                                 "passed": False}]}
    append(path, [gated])
    append(path, [{**fake("a", 258.0), "status": "invalid"}])
    append(path, [fake("a", 33.0)])
    doc = history.trend(path)
    svg = history_charts(doc)["history-mfu.svg"]
    points = re.findall(r"<title>a, run (\d+)", svg)
    assert points == ["1", "3"]                                         # run 2 (invalid) is not a point
    files = render.render_all(doc, kind="history")
    rows = [ln for ln in files["history.md"].splitlines() if ln.startswith("| 1 |") or ln.startswith("| 2 |")]
    assert "| ok, below its MFU threshold 35.00 | 31.00 |" in rows[0] and "| invalid | ~~258.00~~ |" in rows[1]   # listed, struck out


def test_a_run_file_that_cannot_be_written_is_a_usage_error_and_leaves_nothing(tmp_path, monkeypatch):
    """DuckDB failing to write the run's Parquet file (a full disk; here a folder that is not there) was an
    internal error (exit 5) that left DuckDB's tmp_.run-*.tmp files in the history folder."""
    import tempfile
    folder = tmp_path / "h"
    assert append(folder, [fake("a", 40.0)]) == 1
    real = tempfile.mkstemp

    def gone(prefix, suffix, dir):
        fd, name = real(prefix=prefix, suffix=suffix, dir=dir)
        Path(name).unlink()
        return fd, str(Path(dir) / "gone" / Path(name).name)
    monkeypatch.setattr(tempfile, "mkstemp", gone)
    with pytest.raises(UsageError, match=r"h: cannot write run-000002\.parquet \(No such file or directory\); the "
                                         r"earlier runs are unchanged"):
        append(folder, [fake("a", 41.0)])
    assert [p.name for p in folder.iterdir()] == ["run-000001.parquet"]


def test_an_invalid_run_is_not_a_change_and_the_next_run_is_compared_with_the_last_valid_one(tmp_path, capsys):
    """An invalid run (MFU 400 %, not a measurement) was flagged 'improvement +900 %' against the run before it,
    and the next valid run 'regression -92 %' against it, though that run was 20 % worse than the last valid one."""
    folder = tmp_path / "h"
    append(folder, [fake("a", 40.0, 1.25, [1.25] * 5)], label="good")          # 50 %·s / 1.25 s = 40 %
    append(folder, [{**fake("a", 400.0, 0.125, [0.125] * 5), "status": "invalid"}], label="broken")
    append(folder, [fake("a", 32.0, 1.5625, [1.5625] * 5)], label="slower")    # 50 / 1.5625 = 32 %
    assert main(["history", str(folder), "--out", str(tmp_path / "out")]) == 0
    doc = json.loads((tmp_path / "out/history.json").read_text())
    runs = doc["jobs"][0]["runs"]
    assert [r["status"] for r in runs] == ["ok", "invalid", "ok"]
    # the invalid run: no change, no flag
    assert (runs[1]["mfu_change_pt"], runs[1]["mfu_change_pct"], runs[1]["step_change_pct"]) == (None, None, None)
    assert runs[1]["changes"] == [] and runs[1]["flag"] is None
    # run 3 against run 1: 32 - 40 = -8 pt, 32 / 40 - 1 = -20 %; step 1.5625 / 1.25 - 1 = +25 %
    assert runs[2]["mfu_change_pt"] == pytest.approx(-8.0) and runs[2]["mfu_change_pct"] == pytest.approx(-20.0)
    assert runs[2]["step_change_pct"] == pytest.approx(25.0)
    # 5 tied samples each side, all worse: exact p = 1 / C(10, 5) = 1/252
    assert [(c["metric"], c["outcome"]) for c in runs[2]["changes"]] == [("mfu_pct_wall", "regression"),
                                                                         ("step_time_median_s", "regression")]
    assert runs[2]["changes"][0]["test"]["p_value"] == pytest.approx(1 / 252)
    assert doc["jobs"][0]["flagged_runs"] == [3]
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    err = capsys.readouterr().err
    assert "run 2" not in err and "regression: a run 3 (slower) MFU (wall): -20.00 % (worse)" in err
    md = (tmp_path / "out/history.md").read_text()
    row2 = next(ln for ln in md.splitlines() if ln.startswith("| 2 |"))
    row3 = next(ln for ln in md.splitlines() if ln.startswith("| 3 |"))
    # its MFU and tokens/s rest on a FLOPs scope that is not right: struck out, as the report and the index do
    # (changed on purpose: they were plain); its step time is a measured time and stays plain
    tokens2, tokens3 = runs[1]["tokens_per_s"], runs[2]["tokens_per_s"]
    assert "| invalid | ~~400.00~~ | — | 0.1250 |" in row2 and f"| ~~{tokens2:,.0f}~~ |" in row2 and "⚑" not in row2
    assert "| 32.00 | -8.00 |" in row3 and "| +25.0 |" in row3 and f"| {tokens3:,.0f} |" in row3
    html = (tmp_path / "out/history.html").read_text()
    assert html.count('<s title="not a measurement">') == 2
    assert '<s title="not a measurement">400.00</s>' in html and f'<s title="not a measurement">{tokens2:,.0f}</s>' in html


def test_stderr_names_each_figure_as_the_pages_do_and_json_keeps_the_keys(tmp_path, capsys):
    """A CI log read 'regression: a run 2 mfu_pct_wall' and 'not comparable: ... step_time_median_s' where the
    pages say 'MFU (wall)' and 'step time (median)': stderr is for people, history.json keeps the keys."""
    folder = tmp_path / "h"
    append(folder, [fake("a", 40.0, 1.25, [1.25] * 5)])
    append(folder, [fake("a", 32.0, 1.5625, [1.5625] * 5)])                   # -20 % MFU, +25 % step time
    fewer = fake("a", 32.0, 1.5625, [1.5625] * 5)
    fewer["hardware"]["num_gpus"] = 4                                          # step time no longer comparable
    append(folder, [fewer])
    assert main(["history", str(folder), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "regression: a run 2 MFU (wall): -20.00 % (worse)" in err
    assert "regression: a run 2 step time (median): +25.00 % (worse)" in err
    assert "not comparable: a run 3 step time (median) with run 2: GPU count: 4 vs baseline 8" in err
    assert "mfu_pct_wall" not in err and "step_time_median_s" not in err
    # the test's samples too: 5 per-occurrence step times a run, not 'step_time_s samples'; MFU's test ran on the
    # 5 MFU per occurrence derived from them, and says so
    step_said = "n = 5 vs 5 samples of the step time per occurrence"
    mfu_said = "n = 5 vs 5 samples of the MFU per occurrence (from the wall time per occurrence)"
    lines = {ln.split(":", 2)[1].strip(): ln for ln in err.splitlines() if ln.startswith("regression: ")}
    assert mfu_said in lines["a run 2 MFU (wall)"] and step_said in lines["a run 2 step time (median)"]
    assert err.count(step_said) == err.count(mfu_said) == 1 and "time_s samples" not in err
    html = (tmp_path / "out/history.html").read_text()
    assert step_said in html and mfu_said in html
    md = (tmp_path / "out/history.md").read_text()
    assert "**regression**: MFU (wall) -20.00 %" in md and "**regression**: step time (median) +25.00 %" in md
    assert "not comparable with run 2: step time (median) (GPU count: 4 vs baseline 8)" in md
    runs = json.loads((tmp_path / "out/history.json").read_text())["jobs"][0]["runs"]
    assert [c["metric"] for c in runs[1]["changes"]] == ["mfu_pct_wall", "step_time_median_s"]
    assert runs[2]["not_comparable"][0]["metrics"] == ["step_time_median_s"]


def test_a_label_without_a_history_is_refused_before_running(synth_trace, tmp_path, capsys):
    """`mfu run jobs/*.yaml --label $SHA` (the --history forgotten) ran, stored nothing and said nothing:
    the scheduled run's trend silently lost the run. The label is stored only in a history."""
    t, _ = synth_trace()
    job = write(tmp_path, "a", t)
    assert main(["run", str(job), "--out", str(tmp_path / "r"), "--label", "abc123"]) == 2
    assert capsys.readouterr().err == ("error: --label is stored with the run in a history: give --history PATH "
                                       "too\n")
    assert not (tmp_path / "r").exists()


def batch_doubled(r: dict) -> dict:
    """The run after global batch went from 1000 to 2000 tokens a step: twice the model FLOPs per step, a new
    job file hash."""
    return {**r, "job": {**r["job"], "config_sha256": "d" * 64},
            "flops": {**r["flops"], "model_flops_per_step": 8 * 10**15, "tokens_per_step": 2000}}


def test_a_batch_change_is_not_comparable_and_the_next_run_is_compared_with_it(tmp_path, capsys):
    """Global batch doubled between runs 2 and 3: the step took twice as long (+100 %) at the same MFU, and the
    history flagged run 3 'regression' on step time with '(changed)' beside the config hash. mfu compare refuses
    step time across a change of model FLOPs and tokens per step (MFU stays comparable): so does the history now,
    and run 4 is measured against run 3, the new baseline, not against run 2."""
    folder = tmp_path / "h"
    append(folder, [fake("a", 40.0, 1.0, [1.0] * 5)], label="r1")
    append(folder, [fake("a", 40.0, 1.0, [1.0] * 5)], label="r2")
    append(folder, [batch_doubled(fake("a", 40.0, 2.0, [2.0] * 5))], label="b2")       # 2x work in 2x time
    append(folder, [batch_doubled(fake("a", 40.0 / 1.1, 2.2, [2.2] * 5))], label="slow")  # 10 % slower than run 3
    assert main(["history", str(folder), "--out", str(tmp_path / "out")]) == 0
    doc = json.loads((tmp_path / "out/history.json").read_text())
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    runs = doc["jobs"][0]["runs"]
    assert [r["compared_with_run"] for r in runs] == [None, 1, 2, 3]
    assert runs[2]["inputs"]["model FLOPs per step"] == 8 * 10**15 and runs[2]["inputs"]["tokens per step"] == 2000
    # run 3: step time 2.0 / 1.0 - 1 = +100 %, not comparable; MFU 40 vs 40 unchanged, comparable, no change
    assert runs[2]["step_change_pct"] == pytest.approx(100.0) and runs[2]["mfu_change_pt"] == pytest.approx(0.0)
    assert runs[2]["not_comparable"] == [{
        "metrics": ["step_time_median_s"], "figures": ["step time (median)"],
        "reasons": ["model FLOPs per step: 8,000,000,000,000,000 vs baseline 4,000,000,000,000,000",
                    "tokens per step: 2,000 vs baseline 1,000"]}]
    assert runs[2]["changes"] == [] and runs[2]["flag"] is None and runs[2]["config_changed"] is True
    # run 4 against run 3: step 2.2 / 2.0 - 1 = +10 % (against run 2 it would be +120 %); MFU (40/1.1) / 40 - 1
    assert runs[3]["not_comparable"] == [] and runs[3]["config_changed"] is False
    assert runs[3]["step_change_pct"] == pytest.approx(10.0)
    assert runs[3]["mfu_change_pct"] == pytest.approx(100 * (1 / 1.1 - 1))
    # 5 tied samples a side, all worse: exact p = 1 / C(10, 5) = 1/252
    assert [(c["metric"], c["outcome"]) for c in runs[3]["changes"]] == [("mfu_pct_wall", "regression"),
                                                                         ("step_time_median_s", "regression")]
    assert runs[3]["changes"][1]["test"]["p_value"] == pytest.approx(1 / 252)
    assert doc["jobs"][0]["flagged_runs"] == [4]
    err = capsys.readouterr().err
    assert ("not comparable: a run 3 (b2) step time (median) with run 2: model FLOPs per step: 8,000,000,000,000,000 "
            "vs baseline 4,000,000,000,000,000; tokens per step: 2,000 vs baseline 1,000") in err
    assert "regression: a run 3" not in err and "regression: a run 4 (slow) step time (median): +10.00 %" in err
    md = (tmp_path / "out/history.md").read_text()
    assert "Changes at run 4. Not comparable with the run before: run 3." in md
    row3 = next(ln for ln in md.splitlines() if ln.startswith("| 3 |"))
    assert "| +0.00 |" in row3 and "| +100.0 ⚠ |" in row3 and "⚑" not in row3
    assert row3.endswith("| ⚠ not comparable with run 2: step time (median) (model FLOPs per step: "
                         "8,000,000,000,000,000 vs baseline 4,000,000,000,000,000; tokens per step: 2,000 vs "
                         "baseline 1,000) |")
    row4 = next(ln for ln in md.splitlines() if ln.startswith("| 4 |"))
    assert "| +10.0 |" in row4 and "⚑ **regression**: step time (median) +10.00 % (worse)" in row4
    html = (tmp_path / "out/history.html").read_text()
    assert "Not comparable with the run before: run 3." in html
    assert html.count("⚠ not comparable with run 2: step time (median)") == 1


@pytest.mark.parametrize("change, metrics, reason", [
    (lambda r: {**r, "hardware": {**r["hardware"], "precision": "fp8"}},
     ["mfu_pct_wall", "step_time_median_s"], "precision: fp8 vs baseline bf16"),
    (lambda r: {**r, "hardware": {**r["hardware"], "num_gpus": 16}},
     ["step_time_median_s"], "GPU count: 16 vs baseline 8"),
    (lambda r: {**r, "region": {**r["region"], "steps_per_occurrence": 2}},
     ["mfu_pct_wall", "step_time_median_s"], "occurrence scope: 2 step(s) per occurrence vs baseline 1 step(s) per "
                                             "occurrence"),
])
def test_each_figure_is_refused_by_the_inputs_compare_says_it_rests_on(tmp_path, change, metrics, reason):
    """Precision and scope underlie MFU and step time; GPU count only the step time (MFU is per GPU): by compare's
    UTILIZATION and WORK lists. A 30 % drop behind the change is not flagged."""
    folder = tmp_path / "h"
    append(folder, [fake("a", 40.0, 1.0, [1.0] * 5)])
    append(folder, [change(fake("a", 28.0, 1.3, [1.3] * 5))])
    run = history.trend(folder)["jobs"][0]["runs"][1]
    assert [(g["metrics"], g["reasons"]) for g in run["not_comparable"]] == [(metrics, [reason])]
    assert [c["metric"] for c in run["changes"]] == [m for m in ("mfu_pct_wall", "step_time_median_s")
                                                     if m not in metrics]


def test_the_summary_links_a_flagged_job_to_its_own_section(tmp_path):
    """Jobs a (steady) and b (MFU 40 -> 32 %, step 1.25 -> 1.5625 s on 5 samples a side: flagged) are sections
    job-1 and job-2; the summary's link to b pointed at #job-1, a's section (its place among the flagged jobs)."""
    path = tmp_path / "h"
    append(path, [fake("a", 40.0, 1.0, [1.0] * 5), fake("b", 40.0, 1.25, [1.25] * 5)])
    append(path, [fake("a", 40.0, 1.0, [1.0] * 5), fake("b", 32.0, 1.5625, [1.5625] * 5)])
    doc = history.trend(path)
    assert [(j["name"], j["flagged_runs"]) for j in doc["jobs"]] == [("a", []), ("b", [2])]
    html = render.render_all(doc, kind="history")["history.html"]
    assert 'changes flagged in <a href="#job-2">b</a> (run 2)' in html and '<h2 id="job-2">b</h2>' in html


def test_a_change_with_the_same_trace_is_said_to_come_from_the_job_file(tmp_path, capsys):
    """Only global_batch changed in the job file, the trace the same: the history flagged 'regression, statistically
    clear' as if the run were slower. The test is right by its rule (MFU compares across FLOPs), but nothing was
    measured again: every output now says the change comes from the job file. A run on a new trace says nothing."""
    folder = tmp_path / "h"
    append(folder, [fake("a", 40.0, 1.25, [1.25] * 5)], label="before")          # 4e15 / (1.25 s x 8 x 1e15) = 40 %
    halved = fake("a", 20.0, 1.25, [1.25] * 5)                                      # half the FLOPs, same times
    halved["job"]["config_sha256"] = "d" * 64
    halved["flops"].update(model_flops_per_occurrence=2 * 10**15, model_flops_per_step=2 * 10**15)
    append(folder, [halved], label="smaller-batch")
    retraced = fake("a", 10.0, 2.5, [2.5] * 5)                                      # a new trace, twice as slow
    retraced["job"]["config_sha256"] = "e" * 64
    retraced["trace"]["sha256"] = "cd" * 32
    retraced["flops"].update(model_flops_per_occurrence=2 * 10**15, model_flops_per_step=2 * 10**15)
    append(folder, [retraced], label="retraced")
    assert main(["history", str(folder), "--out", str(tmp_path / "out")]) == 0
    runs = json.loads((tmp_path / "out/history.json").read_text())["jobs"][0]["runs"]
    # 5 tied samples each side, all worse: exact p = 1 / C(10, 5) = 1/252; 20 / 40 - 1 = -50 %, 10 / 20 - 1 = -50 %
    for run in runs[1:]:
        (mfu,) = [c for c in run["changes"] if c["metric"] == "mfu_pct_wall"]
        assert (mfu["outcome"], mfu["change_pct"]) == ("regression", pytest.approx(-50.0))
        assert mfu["test"]["p_value"] == pytest.approx(1 / 252)
    said = ("the trace is the one of run 1 and the job file changed, so the change comes from the job file (its "
            "FLOPs, GPUs or peak), not from a new measurement")
    assert runs[1]["changes"][0]["detail"].endswith("; " + said)
    assert "job file" not in runs[2]["changes"][0]["detail"]
    err = capsys.readouterr().err
    assert "regression: a run 2 (smaller-batch) MFU (wall): " in err and said in err
    page = "(same trace as run 1, job file changed: not a new measurement)"
    md = (tmp_path / "out/history.md").read_text()
    rows = {ln.split(" | ")[0]: ln for ln in md.splitlines() if ln.startswith("| 2 |") or ln.startswith("| 3 |")}
    assert page in rows["| 2"] and "same trace" not in rows["| 3"]
    html = (tmp_path / "out/history.html").read_text()
    assert html.count(page) == 1


def _append_three(db: str, worker: int) -> list[int]:
    return [append(Path(db), [fake(f"w{worker}", 40.0 + i)]) for i in range(3)]


def test_concurrent_appends_to_a_duckdb_file_lose_no_row(tmp_path):
    """Four processes appending at once: DuckDB's file lock refused all but one ("Conflicting lock is held") and
    their rows were lost; each now waits its turn, and every run gets its own number."""
    import multiprocessing
    db = tmp_path / "h.duckdb"
    with multiprocessing.get_context("fork").Pool(4) as pool:
        runs = sorted(r for got in pool.starmap(_append_three, [(str(db), w) for w in range(4)]) for r in got)
    assert runs == list(range(1, 13))
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT job, count(*) FROM history GROUP BY job ORDER BY job").fetchall()
    assert rows == [(f"w{w}", 3) for w in range(4)]


def test_a_new_duckdb_history_file_appears_whole(tmp_path, monkeypatch):
    """Four runs creating one history file at once: one opened it while another's DuckDB was still writing its
    header and stopped with "not a valid DuckDB database file" (4 in 150 tries). The file is now made under
    another name and linked into place: whenever a connection opens the history path, a whole database is there."""
    db = tmp_path / "h.duckdb"
    real, seen = history.duckdb_connect, []

    def connect(path: str, **kw):
        if Path(path) == db:                 # DuckDB's file header: its magic bytes "DUCK" at offset 8
            seen.append(db.is_file() and db.read_bytes()[8:12] == b"DUCK")
        return real(path, **kw)
    monkeypatch.setattr(history, "duckdb_connect", connect)
    assert append(db, [fake("a", 40.0)]) == 1
    assert seen == [True]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.duckdb"]      # no temporary file left beside it
    assert append(db, [fake("a", 41.0)]) == 2


def test_a_long_history_gives_the_latest_runs_and_summarises_the_older(tmp_path, monkeypatch):
    """Issue #33: a job's latest RECENT_RUNS runs in full (here 2), the older ones summarised: job a's runs 1-5 at
    MFU 40, 41, 39, 42, 38: runs 4 and 5 listed (run 4 compared with run 3, left out), runs 1-3 summarised, MFU 39
    to 41, median 40. The page says so, and its table has the two rows."""
    monkeypatch.setattr(history, "RECENT_RUNS", 2)
    db = tmp_path / "h.duckdb"
    for mfu in (40.0, 41.0, 39.0, 42.0, 38.0):
        append(db, [fake("a", mfu)])
    doc = history.write(db, tmp_path / "out")
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    [job] = doc["jobs"]
    assert [(r["run"], r["compared_with_run"], r["mfu_change_pt"]) for r in job["runs"]] == \
        [(4, 3, pytest.approx(3.0)), (5, 4, pytest.approx(-4.0))]
    assert job["older"] == {"runs": 3, "first_run": 1, "last_run": 3, "invalid_runs": 0, "failed_runs": 0,
                            "mfu_pct_wall_min": 39.0, "mfu_pct_wall_median": 40.0, "mfu_pct_wall_max": 41.0}
    md = (tmp_path / "out/history.md").read_text()
    assert "The table and the chart show the latest 2 runs. The 3 older ones (runs 1–3) are not listed or tested " \
           "for changes here, only summarised; the history file keeps them: MFU (wall) from 39.00 to 41.00 %, median " \
           "40.00 %; 0 invalid, 0 failed without a result." in md
    assert re.findall(r"^\| (\d+) \|", md, re.M) == ["4", "5"]
    assert "The 3 older ones (runs 1–3)" in (tmp_path / "out/history.html").read_text()
