"""Batch runs: many jobs, one broken; each trace read once; summary and worst exit code."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pipeline.analysis import ranks
from pipeline.batch import run_batch, summary_table, worst
from pipeline.cli import main


def write(folder: Path, name: str, trace: Path | str, threshold: float = 0, **extra) -> Path:
    body = {"name": name, "trace": str(trace), "region": {"name": "train_step"},
            "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
            "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8},
            "thresholds": {"mfu_pct_wall_min": threshold}, **extra}
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps(body))
    return path


@pytest.fixture
def batch(synth_trace, tmp_path):
    t1, _ = synth_trace()
    t2, _ = synth_trace(seed=1)
    (tmp_path / "broken.yaml").write_text("name: broken\ntrace: [unclosed\n")
    return [write(tmp_path, "a", t1), write(tmp_path, "b", t1, threshold=99), tmp_path / "broken.yaml",
            write(tmp_path, "c", t2), write(tmp_path, "d", tmp_path / "missing.sqlite")]


@pytest.mark.parametrize("workers", [1, 2])
def test_broken_job_does_not_stop_the_others(batch, tmp_path, workers):
    out = tmp_path / f"out{workers}"
    rows = run_batch(batch, out, workers=workers, progress=io.StringIO())
    assert [(r["job"], r["exit_code"], r["status"]) for r in rows] == [
        (str(batch[0]), 0, "ok"), (str(batch[1]), 1, "threshold"), (str(batch[2]), 3, "error"),
        (str(batch[3]), 0, "ok"), (str(batch[4]), 4, "error")]
    assert worst(rows) == 4
    reports = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert reports == ["a", "b", "c"]                                    # d and broken wrote no report
    table = summary_table(rows)
    assert "mfu_pct_wall_min 99 not met" in table and "invalid YAML" in table and "trace file not found" in table


def test_a_shared_trace_is_attached_once(batch, tmp_path, monkeypatch):
    calls: list[Path] = []
    real = ranks.attach
    monkeypatch.setattr(ranks, "attach", lambda con, path, **kw: calls.append(Path(path)) or real(con, path, **kw))
    run_batch(batch[:2], tmp_path / "o", workers=1, progress=io.StringIO())
    assert len(calls) == 1


def test_shared_trace_gives_the_same_report_as_alone(batch, tmp_path):
    run_batch(batch[:2], tmp_path / "together", workers=1, progress=io.StringIO())
    run_batch(batch[:1], tmp_path / "alone", workers=1, progress=io.StringIO())
    assert (tmp_path / "together/a/result.json").read_bytes() == (tmp_path / "alone/a/result.json").read_bytes()


def test_duplicate_names_fail_the_second_job(synth_trace, tmp_path):
    t, _ = synth_trace()
    sub = tmp_path / "sub"
    sub.mkdir()
    rows = run_batch([write(tmp_path, "a", t), write(sub, "a", t)], tmp_path / "o", workers=1,
                     progress=io.StringIO())
    assert [r["exit_code"] for r in rows] == [0, 3] and "same report folder" in rows[1]["reason"]


def test_a_job_file_given_twice_runs_once(synth_trace, tmp_path, capsys, monkeypatch):
    """`mfu run jobs/*.yaml jobs/a.yaml` (overlapping globs) failed the second copy with exit 3, 'job name 'a' is
    also used by jobs/a.yaml; both would write the same report folder': a file clashing with itself."""
    t, _ = synth_trace()
    (tmp_path / "jobs").mkdir()
    write(tmp_path / "jobs", "a", t)
    write(tmp_path / "jobs", "b", t)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "jobs/a.yaml", "jobs/b.yaml", "./jobs/../jobs/a.yaml", "--out", "o", "-j", "1"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "note: jobs/../jobs/a.yaml is jobs/a.yaml again: run once" in err      # as pathlib spells it
    assert [ln.split()[:3] for ln in out.splitlines()[1:]] == [["a", "ok", "0"], ["b", "ok", "0"]]
    index = (tmp_path / "o/index.md").read_text()
    assert "**2 jobs: 2 ok.**" in index and "same report folder" not in index


def test_a_job_file_named_twice_alike_is_said_given_twice(tmp_path, monkeypatch):
    """The overlapping globs of the case above, `jobs/*.yaml jobs/a.yaml`, name the file with the same text
    twice: the note read 'jobs/a.yaml is jobs/a.yaml again', a file said to be itself."""
    from pipeline.batch import distinct
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs/a.yaml").write_text("")
    (tmp_path / "jobs/b.yaml").write_text("")
    files = [Path("jobs/a.yaml"), Path("jobs/b.yaml"), Path("jobs/a.yaml")]
    assert distinct(files) == ([Path("jobs/a.yaml"), Path("jobs/b.yaml")], ["note: jobs/a.yaml is given twice: run once"])


def test_cli_batch_exit_code_is_the_worst_and_progress_goes_to_stderr(batch, tmp_path, capsys):
    code = main(["run", *map(str, batch), "--out", str(tmp_path / "o"), "--jobs", "2"])
    out, err = capsys.readouterr()
    assert code == 4
    assert "[5/5]" in err and "Traceback" not in err
    assert out.splitlines()[0].split() == ["job", "status", "exit", "detail"]
    assert len(out.splitlines()) == 6


def test_index_links_every_report_with_its_headline(batch, tmp_path, capsys):
    out = tmp_path / "o"
    main(["run", *map(str, batch), "--out", str(out), "--jobs", "1"])
    capsys.readouterr()
    md = (out / "index.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| [")]
    assert [r.split("]")[0][3:] for r in rows] == ["a", "b", "c"]
    for row, name in zip(rows, "abc"):
        res = json.loads((out / name / "result.json").read_text())
        assert f"({name}/report.md)" in row and f"| {res['metrics']['mfu_pct_wall']:.2f} |" in row
    assert "| ok |" in rows[0] and "| passed (1) |" in rows[0]
    assert "| threshold failed |" in rows[1] and "**failed**: mfu_pct_wall_min" in rows[1]
    # jobs without a report are listed too, with their exit code, and the verdict of the whole run comes first
    assert md.count("| error (exit ") == 2 and "| error (exit 3): " in md
    assert "**5 jobs: 2 ok, 1 failed a threshold, 2 failed without a report.**" in md.split("| job |")[0]
    html = (out / "index.html").read_text()
    assert 'href="a/report.html"' in html and str(tmp_path) not in html + md


def test_index_verdict_counts_warnings_as_the_report_does(synth_trace, tmp_path, capsys):
    """A job whose report said "warnings: 1" was "ok" in the index: a reader of the index never saw them."""
    clean, _ = synth_trace()
    lossy, _ = synth_trace(drop_launch_every=7, seed=3)        # kernels without a launch row: one warning
    out = tmp_path / "o"
    assert main(["run", str(write(tmp_path, "clean", clean)), str(write(tmp_path, "lossy", lossy)),
                 "--out", str(out), "--jobs", "1"]) == 0
    capsys.readouterr()
    codes = [w["code"] for w in json.loads((out / "lossy" / "result.json").read_text())["warnings"]]
    assert codes == ["unattributed_kernels"]
    assert json.loads((out / "clean" / "result.json").read_text())["warnings"] == []
    rows = {line.split("]")[0][3:]: line for line in (out / "index.md").read_text().splitlines()
            if line.startswith("| [")}
    assert "| ok |" in rows["clean"] and "| warnings: 1 |" in rows["lossy"]
    assert 'class="badge warn">warnings: 1</span>' in (out / "index.html").read_text()
    assert "**2 jobs: 2 ok (1 with warnings).**" in (out / "index.md").read_text()   # the count says so too
    for name, shown in (("clean", "ok"), ("lossy", "warnings: 1")):     # the report's own badge says the same
        assert f">{shown}</span>" in (out / name / "report.html").read_text()


def test_a_report_of_a_run_links_back_to_its_folders_index(batch, tmp_path, capsys):
    """`mfu run` writes index.md / index.html beside the report folders; a report had no way back to it.
    The link is relative (the folder can be moved or published), so reruns leave the same bytes."""
    out = tmp_path / "o"
    main(["run", *map(str, batch[:2]), "--out", str(out), "--jobs", "1"])
    capsys.readouterr()
    for name in ("a", "b"):
        md = (out / name / "report.md").read_text()
        html = (out / name / "report.html").read_text()
        assert "[← All reports](../index.md)" in md.splitlines()[:4]          # under the title
        assert '<a href="../index.html">← All reports</a>' in html
        assert (out / name / "../index.md").is_file() and (out / name / "../index.html").is_file()
        assert str(tmp_path) not in md + html


def test_a_report_outside_a_run_has_no_index_link(tmp_path):
    """`mfu demo` writes no index beside its report: a link there would lead nowhere."""
    from pipeline.demo import run_demo
    _, folder = run_demo(tmp_path)
    assert not (tmp_path / "index.md").exists()
    assert "index.md" not in (folder / "report.md").read_text()
    assert "index.html" not in (folder / "report.html").read_text()


def test_index_says_why_a_report_is_invalid(synth_trace, tmp_path, capsys):
    """An invalid job wrote a report; its index row gives the result's reason, not a bare "invalid"."""
    t, _ = synth_trace()
    job = write(tmp_path, "huge", t, model={"flops_per_step": 4.0e+17})     # MFU far above 100 %
    out = tmp_path / "o"
    assert main(["run", str(job), "--out", str(out)]) == 1
    capsys.readouterr()
    reason = json.loads((out / "huge/result.json").read_text())["status_reason"]
    assert "physically impossible" in reason
    (row,) = [line for line in (out / "index.md").read_text().splitlines() if line.startswith("| [huge]")]
    assert f"| invalid: {reason} |" in row
    assert reason in (out / "index.html").read_text()


def test_batch_summary_prints_no_invalid_figure(synth_trace, tmp_path, capsys):
    """The batch summary printed an invalid job's "MFU 2000.00 %" as a plain figure, which its report strikes
    through; it now says no figure is a measurement and why, and a valid job beside it keeps its MFU."""
    t, _ = synth_trace()
    jobs = [write(tmp_path, "huge", t, model={"flops_per_step": 4.0e+17}), write(tmp_path, "fine", t)]
    out = tmp_path / "o"
    assert main(["run", *map(str, jobs), "--out", str(out), "--no-cache"]) == 1
    printed = capsys.readouterr().out
    huge = json.loads((out / "huge/result.json").read_text())
    fine = json.loads((out / "fine/result.json").read_text())
    (huge_line,) = [ln for ln in printed.splitlines() if ln.startswith("huge ")]
    (fine_line,) = [ln for ln in printed.splitlines() if ln.startswith("fine ")]
    assert f"{huge['metrics']['mfu_pct_wall']:.2f} %" not in huge_line and "MFU" not in huge_line.split(";")[0]
    assert "no figure is a measurement" in huge_line and huge["status_reason"] in huge_line
    assert f"MFU {fine['metrics']['mfu_pct_wall']:.2f} %" in fine_line


def test_each_job_is_loaded_once_and_its_model_resolved_once(synth_trace, tmp_path, monkeypatch):
    """Issue #10: `mfu run` loaded a job three times and resolved its model twice."""
    from pipeline import run
    trace, _ = synth_trace()
    big = {"num_gpus": 2, "precision": "bf16", "peak_tflops": 1e5}     # Llama-3-8B on a 50 ms synthetic step
    files = [write(tmp_path, n, trace, model={"preset": "llama-3-8b"}, hardware=big) for n in ("a", "b")]
    calls = {"load_job": 0, "resolve_model": 0}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapper
    monkeypatch.setattr(run, "load_job", counted("load_job", run.load_job))
    monkeypatch.setattr(run, "resolve_model", counted("resolve_model", run.resolve_model))
    rows = run_batch(files, tmp_path / "out", workers=1, progress=io.StringIO())
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert calls == {"load_job": 2, "resolve_model": 2}


@pytest.mark.parametrize("lossy, shown", [(False, "ok"), (True, "warnings: 1")])
def test_index_reads_rows_kept_before_warnings_were_counted(synth_trace, tmp_path, capsys, lossy, shown):
    """A status record written before index rows counted warnings has no 'warnings': the index still
    renders, and reads the row again rather than taking 0 (which listed a job with a warning "ok")."""
    from pipeline.report.index import write_index
    trace, _ = synth_trace(drop_launch_every=7, seed=3) if lossy else synth_trace()   # dropped launches: a warning
    out = tmp_path / "o"
    assert main(["run", str(write(tmp_path, "old", trace)), "--out", str(out)]) == 0
    capsys.readouterr()
    assert len(json.loads((out / "old" / "result.json").read_text())["warnings"]) == lossy
    [record] = (out / ".status").glob("*.json")
    kept = json.loads(record.read_text())
    del kept["summary"]["row"]["warnings"]
    record.write_text(json.dumps(kept))
    write_index(out)
    assert f"| [old](old/report.md) | {shown} |" in (out / "index.md").read_text()


def test_errors_name_paths_as_the_user_gave_them(synth_trace, tmp_path, monkeypatch):
    """Errors found by the worker named the job file and its trace by the absolute paths the worker saw
    ('/home/me/proj/jobs/e.yaml:1:1: /hardware/gpu: ...'), where `mfu validate` and a job file that fails
    to load say 'jobs/e.yaml': one mistake spelled two ways, and this machine's folders in a CI log."""
    trace, _ = synth_trace(gpu_name="NVIDIA Mystery GPU")       # gpu: auto cannot identify it: exit 3
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs").mkdir()
    write(tmp_path / "jobs", "d", "missing.sqlite")
    write(tmp_path / "jobs", "e", trace)
    rows = run_batch([Path("jobs/d.yaml"), Path("jobs/e.yaml")], Path("out"), workers=1, progress=io.StringIO())
    assert [(r["job"], r["exit_code"]) for r in rows] == [("jobs/d.yaml", 4), ("jobs/e.yaml", 3)]
    assert rows[0]["reason"].startswith("jobs/missing.sqlite: trace file not found")
    assert rows[1]["reason"].startswith("jobs/e.yaml:1:")
    assert "/hardware/gpu" in rows[1]["reason"]
    assert all(str(tmp_path) not in r["reason"] for r in rows)
    # given by its absolute path, a job is named so, as the user wrote it
    (row,) = run_batch([tmp_path / "jobs/d.yaml"], Path("out"), workers=1, progress=io.StringIO())
    assert row["reason"].startswith(f"{tmp_path}/jobs/missing.sqlite: trace file not found")


def test_the_summary_shows_each_job_name_whole():
    """Names were cut at 32 characters ('hpcgroup__pipit__saxpy-mpi-cuda_', the name `mfu init` gives a job from
    its trace's file name): the name is the report folder and what `mfu compare --baseline` takes."""
    long = "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0"                     # 48 characters
    rows = [{"job": "a.yaml", "name": long, "status": "error", "exit_code": 4, "reason": "trace file not found"},
            {"job": "b.yaml", "name": "b", "status": "error", "exit_code": 3, "reason": "bad"}]
    header, first, second = summary_table(rows).splitlines()
    assert first.startswith(long + " error")
    assert second.startswith("b" + " " * 48 + "error")             # the columns still line up
    assert header.index("status") == first.index("error") == second.index("error") == 49


def test_the_index_summary_comes_from_the_result_in_memory_as_it_reads_back(synth_trace, tmp_path, monkeypatch,
                                                                               capsys):
    """Issue #33: a finished job's index row is taken from the result the worker holds, not parsed back from
    result.json (33 MB at 30,000 occurrences); the record is what reading the file gives, and no printed or
    returned row carries it."""
    from pipeline.report import index
    trace, _ = synth_trace()
    parsed: list[Path] = []
    read_back = index._from_result
    monkeypatch.setattr(index, "_from_result", lambda folder: parsed.append(folder) or read_back(folder))
    out = tmp_path / "o"
    assert main(["run", str(write(tmp_path, "mem", trace)), "--out", str(out), "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert "_index_summary" not in row and parsed == []
    [record] = (out / ".status").glob("*.json")
    kept = json.loads(record.read_text())["summary"]
    assert kept == index.summary({"report": str(out / "mem"), "exit_code": 0})
