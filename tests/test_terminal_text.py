"""Names from traces, job files and file names reach the terminal through errors.shown (issue 33): control and
invisible characters are written out as escapes, so an ESC cannot rewrite the screen and a zero-width space
cannot make an unknown region name read as an existing one."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main
from pipeline.errors import shown
from pipeline.trace.synth import SynthSpec, generate

ESCAPES = "train\x1b[2J\x1b]8;;http://e.vil\x07step\r"


def test_shown_writes_out_control_and_invisible_characters():
    assert shown("a\x1b[31mb\rc\u200bd\u202ee\x9bf\U000e0041") == "a\\x1b[31mb\\rc\\u200bd\\u202ee\\x9bf\\U000e0041"
    assert shown("kept:\tline\nbreaks, é, 日本, …") == "kept:\tline\nbreaks, é, 日本, …"


def test_inspect_shows_a_range_name_s_escapes_not_its_effect(tmp_path, capsys):
    generate(SynthSpec(region=ESCAPES), tmp_path / "t.sqlite")
    assert main(["inspect", str(tmp_path / "t.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "train\\x1b[2J\\x1b]8;;http://e.vil\\astep\\r" in out
    assert not {"\x1b", "\x07", "\r"} & set(out)


def test_a_zero_width_space_in_a_region_name_is_visible_in_not_found(tmp_path, capsys):
    """'train_step' not found read as if the existing region were missing: the name asked for differs."""
    generate(SynthSpec(), tmp_path / "t.sqlite")
    job = {"name": "zw", "trace": "t.sqlite", "region": {"name": "train\u200b_step"},
           "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
           "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}
    (tmp_path / "job.yaml").write_text(json.dumps(job), encoding="utf-8")
    assert main(["run", str(tmp_path / "job.yaml"), "--out", str(tmp_path / "out")]) == 4
    err = capsys.readouterr().err
    assert "train\\u200b_step" in err and "\u200b" not in err
    for page in ("index.md", "index.html"):              # the index says why the job failed: visibly too
        text = (tmp_path / "out" / page).read_text(encoding="utf-8")
        assert "u200b" in text and "\u200b" not in text, page


def test_a_file_name_s_escapes_in_an_error(tmp_path, capsys):
    name = tmp_path / "job\x1b[31m.yaml"
    assert main(["validate", str(name)]) == 3
    err = capsys.readouterr().err
    assert "job\\x1b[31m.yaml: no such job file" in err and "\x1b" not in err
