"""History format 4: a job that failed without a result is a row of its run (exit code, error, hashes when known),
never a change or a baseline; the pages show it and the charts break their line at it. Expected values by hand."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import duckdb
import pytest

from pipeline import history
from pipeline.batch import job_names
from pipeline.cli import main
from pipeline.errors import ConfigError
from pipeline.history import append, failures_of
from pipeline.job.config import load_job
from pipeline.job.documents import validator
from pipeline.run import load_checked
from pipeline.report import render
from pipeline.report.charts import history_charts
from tests.test_batch import write
from tests.test_history import fake
from tests.test_sql_history_migrate import V2_DDL


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def failure(job: str, code: int = 4, error: str = "t.sqlite: no NVTX range matches 'x'", config: str | None = "e" * 64,
            trace: str | None = None) -> dict:
    return {"job": job, "exit_code": code, "error": error, "config_sha256": config, "trace_sha256": trace}


@pytest.mark.parametrize("text, name", [
    ("name: c\ntrace: t.sqlite\n", "c"),                # problems elsewhere (region, model...): the name stands
    ("name: ../c\ntrace: t.sqlite\n", None),            # a problem with the name itself: not taken
    ("name: c\ntrace: [unclosed\n", None),              # not YAML: nothing was parsed
    ("- name: c\n", None),                              # not a mapping
])
def test_a_job_file_that_does_not_load_says_its_name_and_hash(tmp_path, text, name):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_job(path)
    assert (info.value.job_name, info.value.config_sha256) == (name, sha(text.encode()))


def test_a_job_whose_name_breaks_a_job_rule_is_not_taken_by_that_name(tmp_path):
    """Schema-valid, but 'history' is the output folder's own (job_file.name_is_a_folder, a rule load_checked
    applies after load_job): the name is a problem, so, as load_job says it, not the name of the failed job.
    It was 'history'; a problem elsewhere (the region's occurrences out of order) leaves the name standing."""
    body = "trace: t.sqlite\nregion: {name: step%s}\nhardware: {num_gpus: 1, precision: bf16}\n" \
           "model: {flops_per_step: 1.0e+12}\nworkload: {mode: training, seq_len: 8, global_batch: 1}\n"
    for name, region, taken in (("history", "", None), ("c", ", occurrences: {first: 3, last: 2}", "c")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"name: {name}\n" + body % region)
        with pytest.raises(ConfigError) as info:
            load_checked(path)
        assert (info.value.job_name, info.value.config_sha256) == (taken, sha(path.read_bytes()))


def test_the_hash_of_a_job_file_that_extends_a_base_covers_the_base(tmp_path):
    """As a loaded job's config hash does (load_job: the job's bytes, a NUL, the base's bytes)."""
    base, job = b"kind: base\nhardware: {num_gpus: 8, precision: bf16}\n", b"extends: base.yaml\nname: c\n"
    (tmp_path / "base.yaml").write_bytes(base)
    (tmp_path / "c.yaml").write_bytes(job)
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "c.yaml")
    assert (info.value.job_name, info.value.config_sha256) == ("c", sha(job + b"\0" + base))


def test_a_job_file_that_cannot_be_read_has_neither(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "none.yaml")
    assert (info.value.job_name, info.value.config_sha256) == (None, None)


def test_failures_of_a_batch_name_each_job_once(tmp_path):
    """Rows as batch.run_batch makes them (by hand); job 'a' has a result."""
    job = tmp_path / "jobs" / "b.yaml"
    rows = [
        {"job": "jobs/a.yaml", "name": "a", "status": "ok", "exit_code": 0, "metrics": {}},
        {"job": str(job), "name": "b", "status": "error", "exit_code": 4, "config_sha256": "c" * 64,
         "trace_sha256": "d" * 64, "name_in_file": None,
         "reason": f"{tmp_path}/jobs/traces/t.sqlite: no NVTX range matches 'x'"},
        {"job": "jobs/c.yaml", "name": None, "status": "error", "exit_code": 3, "config_sha256": "e" * 64,
         "trace_sha256": None, "name_in_file": "c", "reason": "jobs/c.yaml:2:1: /model: required\n"
                                                              "jobs/c.yaml:3:1: /workload: required\n"
                                                              "jobs/c.yaml:4:1: /hardware: required"},
        {"job": "jobs/a2.yaml", "name": None, "status": "error", "exit_code": 3, "config_sha256": "f" * 64,
         "trace_sha256": None, "name_in_file": "a", "reason": "jobs/a2.yaml:1:1: /region: required"},
        {"job": "jobs/x.yaml", "name": None, "status": "error", "exit_code": 3, "config_sha256": None,
         "trace_sha256": None, "name_in_file": None, "reason": "jobs/x.yaml: job file not found"},
        {"job": "jobs/e.yaml", "name": "e", "status": "internal error", "exit_code": 5, "config_sha256": "0" * 64,
         "trace_sha256": None, "name_in_file": None,
         "reason": "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'mfu'"},
        {"job": "jobs/base.yaml", "name": None, "status": "skipped", "exit_code": 0, "reason": "a base file"},
    ]
    assert failures_of(rows, job_names(rows)) == [
        # the trace path relative to the job file's folder, as the index says it
        {"job": "b", "exit_code": 4, "error": "traces/t.sqlite: no NVTX range matches 'x'", "config_sha256": "c" * 64,
         "trace_sha256": "d" * 64},
        # a file that did not load: the name it gives itself; its first problem and how many more
        {"job": "c", "exit_code": 3, "error": "c.yaml:2:1: /model: required (+2 more lines)",
         "config_sha256": "e" * 64, "trace_sha256": None},
        # claims the name of job a, which has a result in this run: named by its file's name, not the path typed
        {"job": "a2.yaml", "exit_code": 3, "error": "a2.yaml:1:1: /region: required", "config_sha256": "f" * 64,
         "trace_sha256": None},
        {"job": "x.yaml", "exit_code": 3, "error": "x.yaml: job file not found", "config_sha256": None,
         "trace_sha256": None},
        # a bug: the traceback's last line, the exception
        {"job": "e", "exit_code": 5, "error": "KeyError: 'mfu'", "config_sha256": "0" * 64, "trace_sha256": None},
    ]


def test_a_job_file_that_did_not_load_never_takes_the_name_of_a_failed_job_given_after_it():
    """jobs/0copy.yaml (did not load, names itself 'a') comes before jobs/a.yaml (job a, failed at its trace):
    job a's failure is a's row, the copy is named by its file's name. It was the other way round: the copy took 'a'
    first, and job a's own failure was filed under 'jobs/a.yaml', a job that never existed."""
    rows = [
        {"job": "jobs/0copy.yaml", "name": None, "status": "error", "exit_code": 3, "config_sha256": "f" * 64,
         "trace_sha256": None, "name_in_file": "a", "reason": "jobs/0copy.yaml:1:1: /region: required"},
        {"job": "jobs/a.yaml", "name": "a", "status": "error", "exit_code": 4, "config_sha256": "c" * 64,
         "trace_sha256": "d" * 64, "name_in_file": None, "reason": "jobs/t.sqlite: no NVTX range matches 'x'"},
    ]
    assert failures_of(rows, job_names(rows)) == [
        {"job": "0copy.yaml", "exit_code": 3, "error": "0copy.yaml:1:1: /region: required",
         "config_sha256": "f" * 64, "trace_sha256": None},
        {"job": "a", "exit_code": 4, "error": "t.sqlite: no NVTX range matches 'x'", "config_sha256": "c" * 64,
         "trace_sha256": "d" * 64},
    ]


def test_a_failed_run_is_no_change_and_no_baseline(tmp_path, capsys):
    """Runs: ok (MFU 40 %, step 1.25 s), failed (exit 4), ok (32 %, 1.5625 s). Without failed rows the history
    showed runs 1 and 3 only, as if the job had not been scheduled for run 2."""
    folder = tmp_path / "h"
    append(folder, [fake("a", 40.0, 1.25, [1.25] * 5), fake("b", 30.0)], label="good")
    append(folder, [fake("b", 30.0)], label="broken", failures=[failure("a", trace="ab" * 32)])
    append(folder, [fake("a", 32.0, 1.5625, [1.5625] * 5), fake("b", 30.0)], label="slower")
    assert main(["history", str(folder), "--out", str(tmp_path / "out")]) == 0
    doc = json.loads((tmp_path / "out/history.json").read_text())
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    assert doc["format_version"] == 4
    job = doc["jobs"][0]
    assert (job["name"], job["failed_runs"], doc["jobs"][1]["failed_runs"]) == ("a", [2], [])
    runs = job["runs"]
    assert [(r["status"], r["exit_code"], r["error"]) for r in runs] == [
        ("ok", None, None), ("failed", 4, "t.sqlite: no NVTX range matches 'x'"), ("ok", None, None)]
    failed = runs[1]
    assert (failed["mfu_pct_wall"], failed["mfu_change_pt"], failed["step_change_pct"], failed["changes"],
            failed["flag"], failed["not_comparable"]) == (None, None, None, [], None, [])
    # its config hash ('e'*64) differs from run 1's ('c'*64); its trace hash is run 1's; its label is kept
    assert (failed["config_changed"], failed["trace_changed"], failed["label"]) == (True, False, "broken")
    # run 3 against run 1: 32 - 40 = -8 pt, 32 / 40 - 1 = -20 %; step 1.5625 / 1.25 - 1 = +25 %
    assert runs[2]["compared_with_run"] == 1 and runs[2]["config_changed"] is False
    assert runs[2]["mfu_change_pt"] == pytest.approx(-8.0) and runs[2]["mfu_change_pct"] == pytest.approx(-20.0)
    assert runs[2]["step_change_pct"] == pytest.approx(25.0)
    # 5 tied samples a side, all worse: exact p = 1 / C(10, 5) = 1/252
    assert runs[2]["changes"][0]["test"]["p_value"] == pytest.approx(1 / 252) and job["flagged_runs"] == [3]
    err = capsys.readouterr().err
    assert "failed: a run 2 (broken) exit 4: t.sqlite: no NVTX range matches 'x'\n" in err
    md = (tmp_path / "out/history.md").read_text()
    row2 = next(ln for ln in md.splitlines() if ln.startswith("| 2 | broken |"))
    assert row2 == ("| 2 | broken | eeeeeeeeeeee (changed) | abababababab | failed (exit 4): t.sqlite: no NVTX range "
                    "matches 'x' | — | — | — | — | — | — |  |")
    assert "Changes at run 3. Failed without a result: run 2." in md
    assert "the same for a run in which the job failed without a result" in md
    assert "Runs stored before history format 3" not in md          # a failed run records no inputs: no such run
    html = (tmp_path / "out/history.html").read_text()
    assert ('<td data-label="status" class="run-status"><span class="fail">failed (exit 4)</span>: <span class="error">'
            "t.sqlite: no NVTX range matches &#39;x&#39;</span></td>") in html
    assert "; failed without a result: a (run 2).</p>" in html and "Failed without a result: run 2." in html


def test_an_unknown_hash_is_a_dash_and_no_change(tmp_path):
    """A job file that could not be read, a trace never opened: no hash, so nothing to call changed."""
    path = tmp_path / "h.duckdb"
    append(path, [fake("a", 40.0)])
    append(path, [], failures=[failure("a", 3, "a.yaml: job file not found", config=None)])
    run = history.trend(path)["jobs"][0]["runs"][1]
    assert (run["config_sha256"], run["trace_sha256"], run["config_changed"], run["trace_changed"]) == \
        (None, None, False, False)
    md = render.render_all(history.trend(path), kind="history")["history.md"]
    assert "| 2 | — | — | — | failed (exit 3): a.yaml: job file not found |" in md


def test_the_chart_line_breaks_at_a_failed_run_and_keeps_the_threshold(tmp_path):
    """Runs 1, 2 ok, 3 failed, 4 ok: one line through runs 1-2, a new one from run 4 (it joined 2 and 4, as if the
    job had run between). The latest run failed stores no threshold: the line of the last result's stays."""
    gated = {"thresholds": [{"name": "mfu_pct_wall_min", "limit": 35.0, "value": 40.0, "passed": True}]}
    path = tmp_path / "h"
    for mfu in (40.0, 41.0):
        append(path, [{**fake("a", mfu), **gated}])
    append(path, [], failures=[failure("a")])
    append(path, [{**fake("a", 39.0), **gated}])
    svg = history_charts(history.trend(path))["history-mfu.svg"]
    assert re.findall(r"<title>a, run (\d+)", svg) == ["1", "2", "4"]
    lines = re.findall(r'<polyline [^>]*points="([^"]*)"', svg)
    assert [len(pts.split()) for pts in lines] == [2, 1]
    append(path, [], failures=[failure("a")])
    svg = history_charts(history.trend(path))["history-mfu.svg"]
    assert svg.count('class="threshold"') == 1 and "a threshold 35.00" in svg


@pytest.mark.parametrize("name", ["h.duckdb", "h"])
def test_a_run_of_failures_only_is_a_run(tmp_path, name):
    """In a folder, a run without results wrote no file: a run in which every job failed is still a run."""
    path = tmp_path / name
    assert append(path, [], failures=[failure("a")]) == 1
    assert append(path, [fake("a", 40.0)]) == 2
    assert [(r["run"], r["status"]) for r in history.trend(path)["jobs"][0]["runs"]] == [(1, "failed"), (2, "ok")]


def test_a_format_3_history_is_read_and_appended_to(tmp_path):
    """Its rows all have results (exit code and error NULL); a failure appended makes it format 4."""
    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(V2_DDL[:-1] + ", mfu_pct_wall_min DOUBLE, comparability_inputs VARCHAR)")
        con.execute("INSERT INTO history VALUES (1, 'a', ?, ?, 'ok', 40.0, 40.0, 1.0, 1000.0, NULL, NULL, "
                    "'step_time_s', [1.0], [40.0], 3, NULL, NULL)", ["c" * 64, "ab" * 32])
    doc = history.trend(db)
    assert doc["format_version"] == 3 and doc["jobs"][0]["runs"][0]["exit_code"] is None
    assert append(db, [], failures=[failure("a")]) == 2
    doc = history.trend(db)
    assert doc["format_version"] == 4 and doc["jobs"][0]["failed_runs"] == [2]
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []


def test_mfu_run_appends_its_failed_jobs(synth_trace, tmp_path, capsys):
    """Run 1: a and b have results. Run 2: b's region is not in its trace (exit 4, after the trace was opened) and
    c's job file lacks keys (exit 3): appended as failures, 'nothing appended' was said only when no job had a
    result. Run 3: b runs again and is compared with run 1."""
    t, _ = synth_trace()
    folder, trace_sha = tmp_path / "hist", sha(Path(t).read_bytes())
    a = write(tmp_path, "a", t)
    assert main(["run", str(a), str(write(tmp_path, "b", t)), "--out", str(tmp_path / "r1"),
                 "--history", str(folder), "--label", "r1"]) == 0
    capsys.readouterr()
    b = write(tmp_path, "b", t, region={"name": "no_such_range"})
    b_sha = sha(b.read_bytes())                                              # run 3 rewrites the file
    c = tmp_path / "c.yaml"
    c.write_text("name: c\ntrace: t.sqlite\n")
    assert main(["run", str(a), str(b), str(c), "--out", str(tmp_path / "r2"), "--history", str(folder),
                 "--label", "r2"]) == 4                                      # the worst exit code, as before
    assert f"history: appended 1 result and 2 failures as run 2 to {folder}\n" in capsys.readouterr().err
    assert main(["run", str(a), str(write(tmp_path, "b", t)), "--out", str(tmp_path / "r3"),
                 "--history", str(folder), "--label", "r3"]) == 0
    doc = history.trend(folder)
    assert [e.message for e in validator("history.schema.json").iter_errors(doc)] == []
    jobs = {j["name"]: j for j in doc["jobs"]}
    assert sorted(jobs) == ["a", "b", "c"] and jobs["b"]["failed_runs"] == [2] and jobs["c"]["failed_runs"] == [2]
    b2 = jobs["b"]["runs"][1]
    assert (b2["status"], b2["exit_code"], b2["label"]) == ("failed", 4, "r2")
    assert b2["error"].startswith(f"{t}: no NVTX range matches 'no_such_range'")     # the trace as the job names it
    assert (b2["config_sha256"], b2["trace_sha256"]) == (b_sha, trace_sha)
    c2 = jobs["c"]["runs"][0]
    assert (c2["run"], c2["exit_code"], c2["config_sha256"], c2["trace_sha256"]) == (2, 3, sha(c.read_bytes()), None)
    assert c2["error"].startswith("c.yaml:") and c2["error"].endswith("more lines)")
    assert [r["compared_with_run"] for r in jobs["b"]["runs"]] == [None, 1, 1]


def test_a_job_whose_trace_pattern_matches_nothing_fails_under_its_own_name(synth_trace, tmp_path, capsys):
    """Run 1 measures job a over traces/r*.sqlite; by run 2 the traces are gone (a nightly capture that did not
    happen): the job file loaded, so its failure is job a's run 2 (exit 4, its config hash, no trace hash). It was
    filed under the job file's path, a second job beside a, and without the hash of a file that was read."""
    t, _ = synth_trace()
    (tmp_path / "traces").mkdir()
    rank = tmp_path / "traces" / "r0.sqlite"
    rank.write_bytes(Path(t).read_bytes())
    job = write(tmp_path, "a", tmp_path / "traces" / "r*.sqlite")
    folder = tmp_path / "hist"
    assert main(["run", str(job), "--out", str(tmp_path / "r1"), "--history", str(folder)]) == 0
    rank.unlink()
    assert main(["run", str(job), "--out", str(tmp_path / "r2"), "--history", str(folder)]) == 4
    capsys.readouterr()
    [a] = history.trend(folder)["jobs"]
    assert (a["name"], a["failed_runs"]) == ("a", [2])
    failed = a["runs"][1]
    assert (failed["exit_code"], failed["config_sha256"], failed["trace_sha256"]) == (4, sha(job.read_bytes()), None)
    assert "matches no file" in failed["error"]


def test_a_job_file_that_did_not_load_has_one_name_from_any_folder(tmp_path, monkeypatch, capsys):
    """A broken job file was recorded under the path as typed: `mfu run jobs/bad.yaml` from the checkout and
    `mfu run bad.yaml` from jobs/ made two jobs of one file in the history and the summary. Now it is named
    by its file's name, as the index shows it (a valid job by its `name:`, wherever it is run from), and a
    second file of that name by the shortest end of its path that is free."""
    (tmp_path / "jobs/other").mkdir(parents=True)
    for path in ("jobs/bad.yaml", "jobs/other/bad.yaml"):
        (tmp_path / path).write_text("name: [unclosed\n")          # not YAML: it names itself nothing
    runs = [(tmp_path, ["jobs/bad.yaml", "jobs/other/bad.yaml"], "."),
            (tmp_path / "jobs", ["bad.yaml", "other/bad.yaml"], ".."),
            (tmp_path / "jobs/other", ["../bad.yaml", "bad.yaml"], "../..")]
    for folder, given, up in runs:
        monkeypatch.chdir(folder)
        assert main(["run", *given, "--out", f"{up}/out", "--history", f"{up}/hist.duckdb"]) == 3
        table = capsys.readouterr().out.splitlines()
        assert [line.split()[:3] for line in table[1:]] == [["bad.yaml", "error", "3"], ["other/bad.yaml", "error", "3"]]
    with duckdb.connect(str(tmp_path / "hist.duckdb"), read_only=True) as con:
        found = con.execute("SELECT run, job FROM history ORDER BY run, job").fetchall()
    assert found == [(run, job) for run in (1, 2, 3) for job in ("bad.yaml", "other/bad.yaml")]


def test_a_failed_runs_quoted_names_are_code_on_the_pages(tmp_path):
    """Errors quote names and commands in backticks, as the terminal shows them; the index and the reports show
    those parts as code, but the history pages showed the backticks themselves ("a job's `trace:` is ...")."""
    path = tmp_path / "h"
    error = "x.sqlite: trace file not found; check the path (a job's `trace:` is relative to the job file)"
    append(path, [], failures=[failure("a", 4, error)])
    pages = render.render_all(history.trend(path), kind="history")
    row = next(ln for ln in pages["history.md"].splitlines() if ln.startswith("| 1 |"))
    assert "failed (exit 4): x.sqlite: trace file not found; check the path (a job's `trace:` is relative to the " \
           "job file) |" in row
    assert ('<span class="error">x.sqlite: trace file not found; check the path (a job&#39;s <code>trace:</code> is '
            "relative to the job file)</span>") in pages["history.html"]
