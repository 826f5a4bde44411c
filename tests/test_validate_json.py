"""`mfu validate --format json`: a CI checking job files before a nightly run gets the problems as data, with the
text form's locations and words, the same exit code, and no folder of the machine it ran on."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main
from pipeline.job.documents import validator

BASE = "kind: base\nhardware: {num_gpus: 8, precision: bf16}\n"
BAD = """\
extends: base.yaml
name: bad
trace: t.sqlite
region: {name: train_step}
hardware: {num_gpus: 0}
model: {flops_per_step: 1.0e+12}
workload: {mode: training, seq_len: 35%, global_batch: 1}
"""
GOOD = """\
name: good
trace: t.sqlite
region: {name: train_step}
hardware: {num_gpus: 8, precision: bf16}
model: {flops_per_step: 1.0e+12}
workload: {mode: training, seq_len: 2048, global_batch: 1}
"""
GIVEN = ["good.yaml", "jobs/base.yaml", "jobs/bad.yaml", "nosuch.yaml"]


def _files(folder: Path) -> Path:
    (folder / "jobs").mkdir(parents=True)
    (folder / "good.yaml").write_text(GOOD)
    (folder / "jobs" / "base.yaml").write_text(BASE)
    (folder / "jobs" / "bad.yaml").write_text(BAD)
    return folder


def _validate(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["validate", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_each_job_file_is_listed_with_its_problems_located_as_the_text_form_says(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_files(tmp_path / "runs"))
    text_code, text_out, text_err = _validate(capsys, *GIVEN)
    code, out, err = _validate(capsys, "--format", "json", *GIVEN)
    assert code == text_code == 3
    assert err == text_err                 # stderr is the text form's, as `mfu run --format json` keeps it
    assert text_out.startswith("ok: good.yaml\n")
    rows = json.loads(out)
    assert [(r["job"], r["status"], r["exit_code"]) for r in rows] == [
        ("good.yaml", "valid", 0), ("jobs/base.yaml", "skipped", 0), ("jobs/bad.yaml", "invalid", 3),
        ("nosuch.yaml", "invalid", 3)]
    assert rows[0]["problems"] == rows[1]["problems"] == [] and rows[0]["reason"] == ""
    assert rows[1]["reason"].startswith("skipped: a base file (kind: base)")
    gpus, seq = rows[2]["problems"]
    # line 5 `hardware: {num_gpus: 0}`: the 0 after 'hardware: {' (11) and 'num_gpus: ' (10) is column 22
    assert {k: gpus[k] for k in ("file", "line", "column", "pointer", "message")} == {
        "file": "jobs/bad.yaml", "line": 5, "column": 22, "pointer": "/hardware/num_gpus",
        "message": "0 is less than the minimum of 1"}
    assert gpus["hint"].startswith("what goes here: GPUs that did the work of one occurrence")
    # line 7: 'workload: {' (11) + 'mode: training, ' (16) + 'seq_len: ' (9): 35% at column 37
    assert (seq["file"], seq["line"], seq["column"], seq["pointer"]) == ("jobs/bad.yaml", 7, 37, "/workload/seq_len")
    assert seq["hint"] == "write the number alone, without '%' (35 for 35 %)"
    assert rows[2]["reason"] == "\n".join(ln for ln in err.splitlines() if ln.startswith("jobs/bad.yaml:"))
    assert f"jobs/bad.yaml:5:22: /hardware/num_gpus: 0 is less than the minimum of 1 (fix: {gpus['hint']})" in err
    # a file that is not there: no line, column or pointer to give, and no current folder (stderr names it)
    assert rows[3]["problems"] == [{"file": "nosuch.yaml", "line": None, "column": None, "pointer": None,
                                    "message": "no such job file", "hint": None}]
    assert rows[3]["reason"] == "nosuch.yaml: no such job file"
    assert f"nosuch.yaml: no such job file (relative to the current folder, {Path.cwd()})" in err
    assert str(tmp_path) not in out
    assert [e.message for e in validator("validate.schema.json").iter_errors(rows)] == []
    rows[3]["problems"][0]["column"] = 0
    rows[0]["extra"] = 1
    assert len(list(validator("validate.schema.json").iter_errors(rows))) == 2


def test_valid_files_exit_0_and_the_output_is_the_same_bytes_in_any_folder(tmp_path, monkeypatch, capsys):
    outs = []
    for where in ("a", "b/deeper"):
        monkeypatch.chdir(_files(tmp_path / where))
        code, out, err = _validate(capsys, "--format", "json", "good.yaml", "jobs/base.yaml")
        assert code == 0 and err == ""
        assert [(r["job"], r["status"]) for r in json.loads(out)] == [("good.yaml", "valid"),
                                                                      ("jobs/base.yaml", "skipped")]
        code, again, _ = _validate(capsys, "--format", "json", *GIVEN)
        assert code == 3 and str(tmp_path) not in again
        outs.append(out + again)
    assert outs[0] == outs[1]
