"""Report folders swap in whole, temp files never outlive a failure, status records feed the index.

Faults (disk full, Ctrl-C) are injected in-process at the write and rename steps; concurrency
uses real processes writing the same folder while this one reads it.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.errors import UsageError
from pipeline.report import index, publish


def files_of(run: str) -> dict[str, str]:
    return {name: f"{run}\n" for name in ("report.md", "report.html", "result.json")}


def read_folder(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir()}


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".") and p.name != publish.LOCK_FILE)


def test_replace_folder_swaps_the_whole_folder_with_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        folder = tmp_path / "job"
        publish.replace_folder(folder, {**files_of("one"), "extra.txt": "only in the first run\n"})
        publish.replace_folder(folder, files_of("two"))
    finally:
        os.umask(old)
    assert read_folder(folder) == files_of("two")          # nothing of the first run survives
    assert {oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {"0o644"}
    assert oct(folder.stat().st_mode & 0o777) == "0o755"
    assert leftovers(tmp_path) == []


def test_without_rename_exchange_the_fallback_also_replaces_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(publish, "_exchange", lambda a, b: False)
    folder = tmp_path / "job"
    publish.replace_folder(folder, {**files_of("one"), "extra.txt": "x"})
    publish.replace_folder(folder, files_of("two"))
    assert read_folder(folder) == files_of("two") and leftovers(tmp_path) == []


class _DiskFull:
    """open() whose files take a few bytes and then raise ENOSPC, like a full disk."""

    def __init__(self, real):
        self.real = real

    def __call__(self, *args, **kwargs):
        fh = self.real(*args, **kwargs)

        def write(text: str) -> int:
            fh.buffer.write(text[:3].encode())
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        fh.write = write
        return fh


def test_disk_full_while_writing_keeps_the_old_folder_and_no_temp(tmp_path, monkeypatch):
    folder = tmp_path / "job"
    publish.replace_folder(folder, files_of("one"))
    monkeypatch.setattr(publish, "open", _DiskFull(open), raising=False)
    with pytest.raises(UsageError, match="No space left on device"):
        publish.replace_folder(folder, files_of("two"))
    with pytest.raises(UsageError, match="No space left on device"):
        publish.write_files(tmp_path, {"index.md": "x" * 100, "index.html": "y"})
    assert read_folder(folder) == files_of("one")
    assert leftovers(tmp_path) == [] and not (tmp_path / "index.md").exists()


@pytest.mark.parametrize("step", ["_exchange", "rename"])
def test_interrupt_at_the_swap_leaves_old_or_new_complete(tmp_path, monkeypatch, step):
    folder = tmp_path / "job"
    publish.replace_folder(folder, files_of("one"))

    def interrupted(*args):
        raise KeyboardInterrupt
    if step == "rename":
        monkeypatch.setattr(publish, "_exchange", lambda a, b: False)
        real = os.rename
        monkeypatch.setattr(publish.os, "rename", lambda a, b: interrupted() if ".new-" in str(a) and
                            folder.exists() is False else real(a, b))
    else:
        monkeypatch.setattr(publish, "_exchange", interrupted)
    with pytest.raises(KeyboardInterrupt):
        publish.replace_folder(folder, files_of("two"))
    monkeypatch.undo()
    assert leftovers(tmp_path) == []
    assert not folder.exists() if step == "rename" else read_folder(folder) == files_of("one")


def test_interrupt_between_file_renames_removes_the_remaining_temps(tmp_path, monkeypatch):
    real, calls = os.replace, []

    def second_fails(a, b):
        calls.append(b)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(a, b)
    monkeypatch.setattr(publish.os, "replace", second_fails)
    with pytest.raises(KeyboardInterrupt):
        publish.write_files(tmp_path, {"index.md": "a", "index.html": "b"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.md"]


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from pipeline.report import publish
    run, folder = sys.argv[1], Path(sys.argv[2])
    for i in range(150):
        tag = f"{run}-{i}"
        publish.replace_folder(folder, {n: tag + "\\n" + "x" * 20000 for n in ("report.md", "report.html", "result.json")})
""")


def test_two_processes_replacing_one_folder_never_show_a_mixed_folder(tmp_path):
    folder = tmp_path / "job"
    publish.replace_folder(folder, files_of("start"))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, run, str(folder)]) for run in ("A", "B")]
    seen = 0
    while any(p.poll() is None for p in procs):
        try:
            fd = os.open(folder, os.O_RDONLY)         # one version of the folder, whatever is swapped meanwhile
        except FileNotFoundError:
            continue
        try:
            tags = [open(n, opener=lambda p, f: os.open(p, f, dir_fd=fd)).readline() for n in os.listdir(fd)]
            current = os.stat(folder).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:                     # that version was swapped out and removed while read
            continue
        finally:
            os.close(fd)
        if current:                                   # still the folder at its path after the whole read
            assert len(tags) == 3 and len(set(tags)) == 1, tags
            seen += 1
    assert [p.returncode for p in procs] == [0, 0] and seen > 10
    assert len({t.splitlines()[0] for t in read_folder(folder).values()}) == 1
    assert leftovers(tmp_path) == []


def test_status_records_replace_earlier_ones_of_the_same_job(tmp_path):
    job = tmp_path / "a.yaml"
    publish.record(tmp_path / "out", {"job": str(job), "name": None, "exit_code": 3, "status": "error",
                                      "reason": "broken"})
    publish.record(tmp_path / "out", {"job": str(job), "name": "a", "exit_code": 0, "status": "ok",
                                      "reason": "", "report": str(tmp_path / "out/a")})
    records = publish.read_records(tmp_path / "out")
    assert [(r["name"], r["exit_code"], r["report"]) for r in records] == [("a", 0, "a")]


def test_index_lists_failed_jobs_with_exit_code_and_reason(tmp_path):
    out = tmp_path / "out"
    publish.record(out, {"job": str(tmp_path / "x.yaml"), "name": None, "exit_code": 3, "status": "error",
                         "reason": f"{tmp_path}/x.yaml:2:1: /: invalid YAML\nsecond line"})
    publish.record(out, {"job": str(tmp_path / "t.yaml"), "name": "t", "exit_code": 4, "status": "error",
                         "reason": f"{tmp_path}/missing.sqlite: trace file not found"})
    index.write_index(out)
    md = (out / "index.md").read_text()
    assert "| t | error (exit 4): missing.sqlite: trace file not found |" in md
    assert "| x.yaml | error (exit 3): x.yaml:2:1: /: invalid YAML |" in md
    assert "second line" not in md and str(tmp_path) not in md


def _report(out: Path, name: str, status: str = "ok", warnings: int = 0, failed: tuple[str, ...] = ()) -> Path:
    """A report folder whose result.json holds what the index reads of it."""
    folder = out / name
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps({
        "job": {"name": name}, "status": status, "status_reason": "" if status == "ok" else "MFU above 100 %",
        "metrics": {"mfu_pct_wall": 40.0, "hfu_pct_wall": 41.0, "tokens_per_s": 1000.0},
        "step_time": {"median_s": 0.05}, "hardware": {"num_gpus": 2, "gpu": "H100", "precision": "bf16"},
        "thresholds": [{"name": t, "passed": False} for t in failed] + [{"name": "step_time_max_s", "passed": True}],
        "warnings": [{"code": "w", "message": f"warning {i}"} for i in range(warnings)]}))
    return folder


def test_index_counts_each_job_once_by_its_verdict(tmp_path):
    """index.md and index.html print the same counts, made once by index.counts (the templates counted
    apart). Eight jobs: a failed threshold or an invalid result is not also counted as warned, a job
    without a report is "failed", and an old record without a warning count is read again."""
    out = tmp_path / "out"
    for name, exit_code, status, warnings, failed in (("good", 0, "ok", 0, ()), ("warned", 0, "ok", 1, ()),
                                                      ("slow", 1, "ok", 3, ("mfu_pct_wall_min",)),
                                                      ("huge", 1, "invalid", 2, ())):
        folder = _report(out, name, status, warnings, failed)
        row = {"job": str(tmp_path / f"{name}.yaml"), "name": name, "exit_code": exit_code, "status": status,
               "reason": "", "report": str(folder)}
        publish.record(out, row, index.summary(row))
    old_row = {"job": str(tmp_path / "old.yaml"), "name": "old", "exit_code": 0, "status": "ok", "reason": "",
               "report": str(_report(out, "old", warnings=2))}
    kept = index.summary(old_row)
    del kept["row"]["warnings"]                                          # a record from before warnings were counted
    publish.record(out, old_row, kept)
    _report(out, "legacy")                                               # a report from before status records
    for name, exit_code in (("broken", 3), ("gone", 4)):
        publish.record(out, {"job": str(tmp_path / f"{name}.yaml"), "name": name, "exit_code": exit_code,
                             "status": "error", "reason": "no report"})
    rows = index.entries(out)
    assert [r["name"] for r in rows] == ["broken", "gone", "good", "huge", "legacy", "old", "slow", "warned"]
    assert index.counts(rows) == {"jobs": 8, "ok": 4, "warned": 2, "missed": 1, "invalid": 1, "failed": 2}
    index.write_index(out)
    line = "8 jobs: 4 ok (2 with warnings), 1 failed a threshold, 1 invalid, 2 failed without a report."
    assert f"**{line}**" in (out / "index.md").read_text()
    assert f'<p class="status"><strong>{line}</strong></p>' in (out / "index.html").read_text()


def test_two_real_runs_into_one_out_both_appear_in_the_index(synth_trace, tmp_path):
    trace, _ = synth_trace()
    jobs = []
    for name in ("first", "second"):
        body = {"name": name, "trace": str(trace), "region": {"name": "train_step"},
                "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
                "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}
        jobs.append(tmp_path / f"{name}.yaml")
        jobs[-1].write_text(json.dumps(body))
    (tmp_path / "bad.yaml").write_text("name: [\n")
    out = tmp_path / "out"
    procs = [subprocess.Popen([sys.executable, "-m", "pipeline.cli", "run", *map(str, js), "--out", str(out),
                               "--no-cache"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for js in ([jobs[0]], [jobs[1], tmp_path / "bad.yaml"])]
    codes = [p.wait() for p in procs]
    assert codes == [0, 3], [p.stderr.read() for p in procs]
    md = (out / "index.md").read_text()
    assert "[first](first/report.md)" in md and "[second](second/report.md)" in md
    assert "| bad.yaml | error (exit 3)" in md


def test_the_index_reads_a_report_once_not_at_every_later_run(synth_trace, tmp_path, monkeypatch):
    """The record keeps the report's index row; a result.json replaced since is read again."""
    from pipeline.batch import run_batch
    trace, _ = synth_trace()
    job = tmp_path / "kept.yaml"
    job.write_text(json.dumps({"name": "kept", "trace": str(trace), "region": {"name": "train_step"},
                               "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
                               "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}))
    out = tmp_path / "out"
    [row] = run_batch([job], out, workers=1)
    index.write_index(out)
    first = {name: (out / name).read_text() for name in ("index.md", "index.html")}
    assert f"| {row['metrics']['mfu_pct_wall']:.2f} |" in first["index.md"]

    def no_reading(folder):
        raise AssertionError(f"read {folder}/result.json again")
    with monkeypatch.context() as m:
        m.setattr(index, "_from_result", no_reading)
        index.write_index(out)
    assert {name: (out / name).read_text() for name in first} == first

    result = json.loads((out / "kept/result.json").read_text())
    result["metrics"]["mfu_pct_wall"] = 12.3456
    (out / "kept/result.json").write_text(json.dumps(result))        # replaced since the record was made
    index.write_index(out)
    line = next(ln for ln in (out / "index.md").read_text().splitlines() if ln.startswith("| [kept]"))
    assert [c.strip() for c in line.split("|")][3] == "12.35"                # the MFU column, read again


def test_rerunning_a_job_leaves_the_same_bytes_everywhere(synth_trace, tmp_path):
    """Reports are checked into repositories: a rerun of unchanged inputs changes no file, the status
    records (which the index is built from) included; it used to record result.json's mtime."""
    from pipeline.batch import run_batch
    trace, _ = synth_trace()
    job = tmp_path / "same.yaml"
    job.write_text(json.dumps({"name": "same", "trace": str(trace), "region": {"name": "train_step"},
                               "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
                               "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}))
    runs = []
    for name in ("a", "b"):
        run_batch([job], tmp_path / name, workers=1)
        index.write_index(tmp_path / name)
        runs.append({p.relative_to(tmp_path / name): p.read_bytes() for p in sorted((tmp_path / name).rglob("*"))
                     if p.is_file() and p.name != publish.LOCK_FILE})
    assert runs[0] == runs[1] and Path(publish.STATUS_DIR, "same.json") in runs[0]


def test_a_job_that_fails_after_a_good_run_shows_its_latest_outcome_once(synth_trace, tmp_path):
    """A scheduled run that fails (here: its region vanished) must not leave the previous 'ok' figures in the
    index beside an unnamed failure row: one row per job name, the latest outcome."""
    from pipeline.batch import run_batch
    trace, _ = synth_trace()
    body = {"name": "nightly", "trace": str(trace), "region": {"name": "train_step"},
            "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
            "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}
    job, out = tmp_path / "nightly.yaml", tmp_path / "out"
    job.write_text(json.dumps(body))
    assert run_batch([job], out, workers=1)[0]["exit_code"] == 0
    job.write_text(json.dumps({**body, "region": {"name": "no_such_range"}}))
    [row] = run_batch([job], out, workers=1)
    assert (row["exit_code"], row["name"]) == (4, "nightly")
    index.write_index(out)
    md = (out / "index.md").read_text()
    assert "**1 job: 0 ok, 1 failed without a report.**" in md
    [line] = [ln for ln in md.splitlines() if "nightly" in ln]
    assert "exit 4" in line and "no NVTX range matches 'no_such_range'" in line


def test_the_index_strikes_out_the_figures_of_an_invalid_result(synth_trace, tmp_path):
    """An invalid job's MFU (here 4e16 FLOPs: far above 100 %) stays visible for diagnosis, struck out; so do its
    tokens/s, which rest on the same scope (tokens per step over the occurrences), as compare strikes them."""
    from pipeline.batch import run_batch
    trace, _ = synth_trace()
    job = tmp_path / "huge.yaml"
    job.write_text(json.dumps({"name": "huge", "trace": str(trace), "region": {"name": "train_step"},
                               "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+16},
                               "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}))
    [row] = run_batch([job], tmp_path / "out", workers=1)
    index.write_index(tmp_path / "out")
    mfu = f"{row['metrics']['mfu_pct_wall']:,.2f}"                       # thousands separated
    assert row["status"] == "invalid" and row["metrics"]["mfu_pct_wall"] > 100
    [line] = [ln for ln in (tmp_path / "out" / "index.md").read_text().splitlines() if ln.startswith("| [huge]")]
    assert f"| ~~{mfu}~~ | ~~{mfu}~~ |" in line
    assert f'<s title="not a measurement">{mfu}</s>' in (tmp_path / "out" / "index.html").read_text()
    totals = json.loads((tmp_path / "out" / "huge" / "result.json").read_text())["totals"]
    tokens = f"{2048 * 8 * totals['occurrences'] / totals['wall_time_s']:,.0f}"   # seq_len x global_batch a step
    assert f"| ~~{tokens}~~ |" in line
    assert f'<td class="n" data-label="tokens/s"><s title="not a measurement">{tokens}</s></td>' in (
        tmp_path / "out" / "index.html").read_text()


def _job_folder(root: Path, trace: Path) -> Path:
    """A checkout's job folder: a good job, a nameless broken one, one whose trace is missing; traces inside."""
    jobs = root / "jobs"
    (jobs / "traces").mkdir(parents=True)
    (jobs / "traces" / "t.sqlite").write_bytes(trace.read_bytes())
    body = {"name": "a", "trace": "traces/t.sqlite", "region": {"name": "train_step"},
            "hardware": {"num_gpus": 2, "precision": "bf16"}, "model": {"flops_per_step": 4.0e+13},
            "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}
    (jobs / "a.yaml").write_text(json.dumps(body))
    (jobs / "lost.yaml").write_text(json.dumps({**body, "name": "lost", "trace": "traces/gone.sqlite"}))
    (jobs / "broken.yaml").write_text("name: [\n")
    return jobs


def test_the_output_folder_is_the_same_from_any_cwd_and_any_checkout_place(synth_trace, tmp_path, monkeypatch):
    """Status records kept the job file as typed (relative to the cwd) and its absolute path, and the index
    sorted a nameless failed job by the typed path: the same jobs run from another folder, or from a copy
    of the checkout elsewhere, gave other bytes and another row order."""
    from pipeline.cli import main
    trace, _ = synth_trace()
    one, two = tmp_path / "one" / "tree", tmp_path / "two" / "deeper" / "tree"
    for root in (one, two):
        _job_folder(root, trace)
    monkeypatch.chdir(one)
    assert main(["run", "jobs/a.yaml", "jobs/broken.yaml", "jobs/lost.yaml", "--out", "reports", "-j", "1",
                 "--no-cache"]) == 4
    monkeypatch.chdir(two / "jobs")
    assert main(["run", "lost.yaml", "broken.yaml", "a.yaml", "--out", "../reports", "-j", "1", "--no-cache"]) == 4

    def tree(out: Path) -> dict[Path, bytes]:
        return {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*"))
                if p.is_file() and p.name != publish.LOCK_FILE}
    first, second = tree(one / "reports"), tree(two / "reports")
    assert first == second
    records = {json.loads(text)["job"]: json.loads(text) for p, text in first.items() if p.parts[0] == ".status"}
    assert set(records) == {"../jobs/a.yaml", "../jobs/broken.yaml", "../jobs/lost.yaml"}   # from reports/
    assert records["../jobs/lost.yaml"]["reason"].startswith("traces/gone.sqlite: trace file not found")
    assert records["../jobs/broken.yaml"]["reason"].startswith("broken.yaml:2:1: ")
    assert all("job_path" not in r for r in records.values())
    assert not any(str(tmp_path).encode() in text for text in first.values())
    md = first[Path("index.md")].decode()
    assert [ln.split(" | ")[0] for ln in md.splitlines() if ln.startswith("| ") and "exit" in ln or
            ln.startswith("| [")] == ["| [a](a/report.md)", "| broken.yaml", "| lost"]       # by the name shown


def test_a_record_written_before_relative_paths_is_still_listed_and_replaced(tmp_path):
    """Output folders hold records with `job_path` (absolute) from earlier versions: the index still strips
    the job's folder from their reason, and a new record of the same job file replaces the old one."""
    out, job = tmp_path / "out", tmp_path / "jobs" / "x.yaml"
    (out / publish.STATUS_DIR).mkdir(parents=True)
    old = {"job": "jobs/x.yaml", "job_path": str(job), "name": None, "exit_code": 3, "status": "error",
           "reason": f"{job}:2:1: /: invalid YAML", "report": None}
    (out / publish.STATUS_DIR / "job-0123456789abcdef.json").write_text(json.dumps(old))
    index.write_index(out)
    assert "| x.yaml | error (exit 3): x.yaml:2:1: /: invalid YAML |" in (out / "index.md").read_text()
    publish.record(out, {"job": str(job), "name": "x", "exit_code": 4, "status": "error", "reason": "gone"})
    assert [(r["job"], r["name"]) for r in publish.read_records(out)] == [("../jobs/x.yaml", "x")]


def test_two_runs_of_two_jobs_each_sharing_out_cache_and_history_all_appear(synth_trace, tmp_path):
    """Issue 33: two runs with different jobs into one --out left an index missing one of them. Each run records
    its jobs and rebuilds the index from every record on disk under the folder's lock, so whichever writes last
    lists all four; the shared cache and history lose nothing either."""
    from pipeline.trace.connection import duckdb_connect
    trace, _ = synth_trace()
    jobs = []
    for name in ("a1", "a2", "b1", "b2"):
        jobs.append(tmp_path / f"{name}.yaml")
        jobs[-1].write_text(json.dumps({"name": name, "trace": str(trace), "region": {"name": "train_step"},
                                        "hardware": {"num_gpus": 2, "precision": "bf16"},
                                        "model": {"flops_per_step": 4.0e+13},
                                        "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}))
    out, shared = tmp_path / "out", ["--cache", str(tmp_path / "cache"), "--history", str(tmp_path / "h.duckdb")]
    procs = [subprocess.Popen([sys.executable, "-m", "pipeline.cli", "run", *map(str, js), "--out", str(out),
                               *shared], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for js in (jobs[:2], jobs[2:])]
    assert [p.wait() for p in procs] == [0, 0], [p.stderr.read() for p in procs]
    md, html = (out / "index.md").read_text(), (out / "index.html").read_text()
    for name in ("a1", "a2", "b1", "b2"):
        assert f"[{name}]({name}/report.md)" in md and f'href="{name}/report.html"' in html
    assert "**4 jobs: 4 ok.**" in md
    with duckdb_connect(str(tmp_path / "h.duckdb"), read_only=True) as con:
        assert con.execute("SELECT job, count(DISTINCT run) OVER () FROM history ORDER BY job").fetchall() == \
            [("a1", 2), ("a2", 2), ("b1", 2), ("b2", 2)]
