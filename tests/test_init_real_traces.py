"""From a real trace to a report, as a new user goes (issue 30): `mfu init` on every trace in the shared
folder, whatever its name, writes a job whose only TODOs are what a trace cannot know (filling.py fails on any
other); filled in, `mfu run` exits 0 or 1 with a report. A trace without GPU work (no kernel, CUDA graph launch
or memory operation row, counted here with sqlite3) gets no file: exit 4, saying what to capture."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import traces_dir
from filling import fill
from pipeline.cli import main
from test_real_traces import read_only, tables
from tiers import sweep

FOLDER = traces_dir()
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET")


def gpu_rows(path) -> int:
    con = read_only(path)
    try:
        have = tables(con)
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in GPU_TABLES if t in have)
    finally:
        con.close()


@pytest.mark.parametrize("name", sweep(sorted(p.name for p in FOLDER.glob("*.sqlite"))) if FOLDER else ["(no folder)"])
def test_init_then_run_reaches_a_report(real_trace, tmp_path, capsys, name):
    path = real_trace(name)
    job = tmp_path / "job.yaml"
    code = main(["init", str(path), "-o", str(job)])
    err = capsys.readouterr().err
    if not gpu_rows(path):
        assert code == 4 and "No job file written" in err and "--trace=cuda" in err and not job.exists(), err
        return
    assert code == 0, err
    text = job.read_text()
    job.write_text(fill(text))
    code = main(["run", str(job), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code in (0, 1) and "Traceback" not in err, err
    folder = tmp_path / "out" / yaml.safe_load(text)["name"]
    result = json.loads((folder / "result.json").read_text())
    assert (folder / "report.md").is_file() and result["status"] in ("ok", "invalid")
