"""Jobs of a batch that would build the same window share one (issue #10): the same reports as alone.

A batch groups its jobs by trace; within a group, jobs whose window is built from the same
inputs (sharing.key) get one window over all their occurrences, and each job analyses its own.
Every job's result.json must equal, byte for byte, the one it gets when run on its own.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pipeline.analysis import classes, ranks, sharing
from pipeline.batch import run_batch
from pipeline.run import class_rules, load_checked
from pipeline.trace import connection as trace_connection
from pipeline.trace import queries

# 8 steps, back to back (no gap) with GPU work running 1.5 ms past each range: occurrences overlap
# in time, kernels launched in one step run inside the next; every 7th launch row is missing.
SPEC = {"steps": 8, "ranks": 2, "kernels_per_step": 30, "step_gap_ns": 0, "drop_launch_every": 7}


def write(folder: Path, name: str, trace: Path | list[str], first: int, last: int | None = None, **over) -> Path:
    occurrences = {"first": first, **({} if last is None else {"last": last})}
    body = {"name": name, "trace": trace if isinstance(trace, list) else str(trace),
            "region": {"name": "train_step", "occurrences": occurrences, **over.pop("region", {})},
            "hardware": {"gpu": "auto", "num_gpus": 2, "precision": "bf16", **over.pop("hardware", {})},
            "model": {"flops_per_step": 4.0e+13}, "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8},
            **over}
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps(body))
    return path


@pytest.fixture(scope="module")
def jobs(synth_trace, tmp_path_factory):
    trace, _ = synth_trace(**SPEC)
    tmp_path = tmp_path_factory.mktemp("jobs")
    rule = {"analysis": {"kernel_classes": [{"class": "mine", "pattern": "RMSNorm"}]}}
    return trace, [
        write(tmp_path, "a", trace, 1, 3),
        write(tmp_path, "b", trace, 2, 5, analysis={"figures": [{"name": "gemm", "kernels": "gemm", "flops": 1e12}]}),
        write(tmp_path, "c", trace, 4),                                            # to the last occurrence
        write(tmp_path, "thread", trace, 2, 6, region={"attribution": "thread"}),  # another key: its own window
        write(tmp_path, "rules", trace, 3, 4, **rule),                             # another key: its own window
        write(tmp_path, "d", trace, 5, 8),
        write(tmp_path, "scope", trace, 2, 3, hardware={"num_gpus": 1}),            # fails after measuring (exit 3)
    ]


def _alone(files: list[Path], out: Path) -> list[dict]:
    rows = []
    for f in files:
        rows += run_batch([f], out, workers=1, progress=io.StringIO())
    return rows


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """Each job file run on its own, once per module, into one folder (the jobs' names differ): four tests compare
    their batches with the same jobs alone (issue #35). (rows, that folder)."""
    out, seen = tmp_path_factory.mktemp("alone"), {}

    def get(files: list[Path]) -> tuple[list[dict], Path]:
        for f in files:
            if f not in seen:
                seen[f] = _alone([f], out)
        return [row for f in files for row in seen[f]], out
    return get


def _same_reports(rows: list[dict], alone: list[dict], out: Path, out_alone: Path) -> None:
    assert [(r["job"], r["exit_code"], r["status"]) for r in rows] == \
        [(r["job"], r["exit_code"], r["status"]) for r in alone]
    assert [r["reason"] for r in rows] == [r["reason"] for r in alone]
    for r in rows:
        if r["status"] in ("ok", "threshold", "invalid"):
            name = Path(r["report"]).name
            assert (out / name / "result.json").read_bytes() == (out_alone / name / "result.json").read_bytes(), name


def _count_builds(monkeypatch) -> list[tuple[int, int | None]]:
    """From now on, the (first, last) occurrences of every window built (ranks.build_set)."""
    built: list[tuple[int, int | None]] = []
    real = ranks.build_set
    monkeypatch.setattr(ranks, "build_set", lambda ts, job, rules: built.append(
        (job.region.first, job.region.last)) or real(ts, job, rules))
    return built


def test_a_shared_window_gives_every_job_its_own_report(jobs, alone, tmp_path, monkeypatch):
    _, files = jobs
    by_itself, folder = alone(files)
    built = _count_builds(monkeypatch)
    rows = run_batch(files, tmp_path / "together", workers=1, progress=io.StringIO())
    assert [r["status"] for r in rows] == ["ok"] * 6 + ["error"] and rows[-1]["exit_code"] == 3
    _same_reports(rows, by_itself, tmp_path / "together", folder)
    # one window for c and d inside it (4 to the last), one for a, b and scope (1-5), thread and rules their own
    assert sorted(built, key=repr) == sorted([(4, None), (1, 5), (2, 6), (3, 4)], key=repr)
    res = json.loads((tmp_path / "together/c/result.json").read_text())
    assert [o["index"] for o in res["occurrences"]] == [4, 5, 6, 7, 8]
    codes = {w["code"] for w in res["warnings"]}
    assert {"unattributed_kernels", "occurrences_overlap"} <= codes          # the cases sharing could get wrong


def test_a_job_asking_for_missing_occurrences_gets_its_own_error(jobs, alone, tmp_path, monkeypatch):
    trace, files = jobs
    files = [files[0], write(tmp_path, "far", trace, 6, 12), files[5], write(tmp_path, "e", trace, 5, 6)]
    by_itself, folder = alone(files)
    built = _count_builds(monkeypatch)
    rows = run_batch(files, tmp_path / "together", workers=1, progress=io.StringIO())
    assert [r["exit_code"] for r in rows] == [0, 4, 0, 0]
    assert "fewer occurrences than asked (6..12)" in rows[1]["reason"]
    _same_reports(rows, by_itself, tmp_path / "together", folder)
    assert built == [(1, 3), (5, 12), (5, 8)]             # 5-8 and 5-6 still share one window without 6-12


def test_jobs_selecting_the_same_occurrences_are_analysed_once(jobs, alone, tmp_path, monkeypatch):
    """Two models judged on the same steps: one analysis of those steps, a copy for the second job, and each
    report as alone; other figures asked are another analysis."""
    trace, files = jobs
    files = [files[0], write(tmp_path, "a_other_model", trace, 1, 3, model={"flops_per_step": 8.0e+13}),
             files[1], write(tmp_path, "b_no_figures", trace, 2, 5)]
    by_itself, folder = alone(files)
    analysed: list[tuple[int, int, int]] = []
    real = ranks.analyse_set
    monkeypatch.setattr(ranks, "analyse_set", lambda ts, built, figures: analysed.append(
        (built.window.first, built.window.last, len(figures))) or real(ts, built, figures))
    rows = run_batch(files, tmp_path / "together", workers=1, progress=io.StringIO())
    assert [r["status"] for r in rows] == ["ok"] * 4
    _same_reports(rows, by_itself, tmp_path / "together", folder)
    assert analysed == [(1, 3, 0), (2, 5, 1), (2, 5, 0)]
    metrics = [json.loads((tmp_path / "together" / n / "result.json").read_text())["metrics"]
               for n in ("a", "a_other_model")]
    assert metrics[0] != metrics[1]              # the copy is the measurement, not the other job's report


def _queries_of_one_window(jobs, alone, tmp_path, monkeypatch) -> list[str]:
    """The queries a batch of three jobs sharing one window (1-3, 2-5, 5-8) ran, in order, once its reports are
    checked to be those of the jobs run alone."""
    _, files = jobs
    files = [files[0], files[1], files[5]]
    by_itself, folder = alone(files)
    asked: list[str] = []
    real = queries.run
    monkeypatch.setattr(queries, "run", lambda con, name, /, **kw: asked.append(name) or real(con, name, **kw))
    rows = run_batch(files, tmp_path / "together", workers=1, progress=io.StringIO())
    _same_reports(rows, by_itself, tmp_path / "together", folder)
    return asked


def test_rows_ending_before_they_start_are_looked_for_once_per_shared_window(jobs, alone, tmp_path, monkeypatch):
    """backwards_kernels.sql scans the shared window once; each job keeps the rows of its own occurrences
    (test_a_trace_warning_of_another_jobs_occurrence_stays_with_that_job: the warning stays with its job)."""
    asked = _queries_of_one_window(jobs, alone, tmp_path, monkeypatch)
    assert asked.count("backwards_kernels") == 1 and asked.count("window_cut") == 3


def test_the_jobs_of_a_shared_window_are_analysed_on_one_thread(jobs, alone, tmp_path, monkeypatch):
    """A job's own statements on a shared window are small (SharedWindow.serving): one DuckDB thread while the jobs
    run, the connection's own count again for the window's build before and its close after."""
    _, files = jobs
    files = [files[0], files[1], files[5]]                     # 1-3, 2-5, 5-8: one window
    by_itself, folder = alone(files)
    seen: dict[str, list[int]] = {"build": [], "analyse": [], "close": []}

    def threads(con) -> int:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    real_build, real_analyse, real_close = sharing.build, ranks.analyse_set, sharing.SharedWindow.close

    def build(ts, *a):
        seen["build"].append(threads(ts.con))
        return real_build(ts, *a)
    monkeypatch.setattr(sharing, "build", build)
    monkeypatch.setattr(ranks, "analyse_set", lambda ts, *a: seen["analyse"].append(threads(ts.con)) or real_analyse(ts, *a))
    monkeypatch.setattr(sharing.SharedWindow, "close",
                        lambda self: seen["close"].append(threads(self.ts.con)) or real_close(self))
    # two threads whatever the machine and pytest-xdist give (conftest: one per test worker on two cores)
    monkeypatch.setattr(trace_connection, "_worker_threads", [2])
    rows = run_batch(files, tmp_path / "together", workers=1, progress=io.StringIO())
    _same_reports(rows, by_itself, tmp_path / "together", folder)
    assert seen == {"build": [2], "analyse": [1, 1, 1], "close": [2]}


def _key(folder: Path, trace: Path, name: str = "k", **over):
    job = load_checked(write(folder, name, trace, 1, 2, **over))
    return sharing.key(job, class_rules(job))


def test_the_key_holds_what_building_the_window_reads(synth_trace, tmp_path):
    trace, _ = synth_trace(**SPEC)
    other, _ = synth_trace(**SPEC, seed=1)
    base = _key(tmp_path, trace)
    assert base is not None
    # occurrences, model, hardware, thresholds and figures are read after the window is built
    assert _key(tmp_path, trace, "other_name", hardware={"num_gpus": 1}, thresholds={"mfu_pct_wall_min": 50},
                analysis={"figures": [{"name": "g", "kernels": "gemm", "flops": 1e12}]}) == base
    different = [_key(tmp_path, other), _key(tmp_path, trace, region={"name": "train_ste", "match": "prefix"}),
                 _key(tmp_path, trace, region={"match": "contains"}),
                 _key(tmp_path, trace, region={"domain": "PyTorch"}),
                 _key(tmp_path, trace, region={"attribution": "thread"}),
                 _key(tmp_path, trace, region={"attribution": "window"}),
                 _key(tmp_path, trace, analysis={"kernel_classes": [{"class": "mine", "pattern": "gemm"}]}),
                 _key(tmp_path, trace, analysis={"kernel_classes": [{"class": "mine", "pattern": "gemm2"}]})]
    assert None not in different and len({base, *different}) == len(different) + 1


def test_the_key_holds_the_precision_rules(synth_trace, tmp_path, monkeypatch):
    trace, _ = synth_trace(**SPEC)
    base = _key(tmp_path, trace)
    said = classes.load_precision_rules()
    monkeypatch.setattr(classes, "load_precision_rules",
                        lambda *a: classes.PrecisionRules(said.classes, said.rules[1:]))
    assert _key(tmp_path, trace) != base


def test_several_files_are_not_shared(synth_trace, tmp_path):
    """Their labels, per-file occurrence checks and combination are per job: each builds its own window."""
    trace, _ = synth_trace(**SPEC)
    other, _ = synth_trace(**SPEC, seed=1)
    two = load_checked(write(tmp_path, "two", [str(trace), str(other)], 1, 2))
    assert len(two.trace_files()) == 2 and sharing.key(two, class_rules(two)) is None


def test_jobs_share_a_window_only_when_it_holds_no_more_occurrences_than_theirs(synth_trace, tmp_path):
    trace, _ = synth_trace(**SPEC)
    jobs = {name: load_checked(write(tmp_path, name, trace, first, last)) for name, first, last in (
        ("early", 1, 2), ("late", 7, 8), ("mid", 3, 5), ("mid2", 4, 6), ("open", 6, None), ("inside", 7, 8))}

    def runs(*names):
        return [[j.name for j in run] for run in sharing.clusters([jobs[n] for n in names])]
    assert runs("early", "late") == [["early"], ["late"]]               # 1-8 would be 8 occurrences for 4
    assert runs("early", "mid", "mid2", "late") == [["early", "mid", "mid2", "late"]]     # 8 for 2+3+3+2
    assert runs("early", "mid", "late") == [["early", "mid"], ["late"]]                  # 8 > 2+3+2; 5 = 2+3
    # to the last occurrence from 6: one window, with the jobs inside it
    assert runs(*jobs) == [["open", "late", "inside"], ["early", "mid", "mid2"]]


def test_a_group_building_one_window_reads_the_trace_where_it_is(jobs, alone, tmp_path, monkeypatch):
    """Copying the trace into DuckDB pays only when several windows read it; one shared build reads it once anyway."""
    _, files = jobs
    real, asked = ranks.open_set, []
    monkeypatch.setattr(ranks, "open_set", lambda paths, **kw: asked.append(kw["materialize"]) or real(paths, **kw))
    one_window = [files[0], files[1], files[5]]                     # a (1-3), b (2-5), d (5-8): one key, one run
    rows = run_batch(one_window, tmp_path / "together", workers=1, progress=io.StringIO())
    several = run_batch(files, tmp_path / "several", workers=1, progress=io.StringIO())
    assert asked == [False, True]
    monkeypatch.setattr(ranks, "open_set", real)
    by_itself, folder = alone(one_window)
    _same_reports(rows, by_itself, tmp_path / "together", folder)
    assert [r["status"] for r in several].count("ok") == 6


def test_one_window_builds_no_cache_entry_but_reads_one_there_is(jobs, alone, tmp_path, monkeypatch):
    """With a cache, one shared build reads the trace itself: a Parquet copy made for it would read the file
    once more. An entry some earlier run built is read instead of the file, and is neither rebuilt nor damaged."""
    from pipeline.trace import cache
    _, files = jobs
    one_window, cached = [files[0], files[1], files[5]], tmp_path / "cache"
    copies, attached = [], []
    real_build, real_attach = cache._build, ranks.attach
    monkeypatch.setattr(cache, "_build", lambda *a: copies.append(a[0]) or real_build(*a))
    monkeypatch.setattr(ranks, "attach", lambda *a, **kw: attached.append(a[1]) or real_attach(*a, **kw))
    direct = run_batch(one_window, tmp_path / "direct", workers=1, progress=io.StringIO(), cache_dir=cached)
    assert copies == [] and len(attached) == 1 and not list(cached.glob("*/manifest.json"))
    run_batch(files[:1], tmp_path / "lone", workers=1, progress=io.StringIO(), cache_dir=cached)   # builds one
    assert len(copies) == 1 and len(list(cached.glob("*/manifest.json"))) == 1
    attached.clear()
    warm = run_batch(one_window, tmp_path / "warm", workers=1, progress=io.StringIO(), cache_dir=cached)
    assert len(copies) == 1 and attached == []
    _same_reports(direct, warm, tmp_path / "direct", tmp_path / "warm")
    by_itself, folder = alone(one_window)
    _same_reports(direct, by_itself, tmp_path / "direct", folder)


def _warned_together_as_alone(a: Path, b: Path, tmp_path: Path, code: str,
                              statuses: list[str] | None = None) -> dict[str, list[str]]:
    """Jobs a and b run in one batch (sharing a window) give the reports each gives alone; the messages of
    warning `code` in each job's result."""
    rows = run_batch([a, b], tmp_path / "both", workers=1, progress=io.StringIO())
    alone = _alone([a, b], tmp_path / "alone")
    if statuses is not None:
        assert [r["status"] for r in rows] == statuses
    _same_reports(rows, alone, tmp_path / "both", tmp_path / "alone")
    return {job: [w["message"] for w in json.loads((tmp_path / "both" / job / "result.json").read_text())["warnings"]
                  if w["code"] == code] for job in ("a", "b")}

def test_a_trace_warning_of_another_jobs_occurrence_stays_with_that_job(tmp_path):
    """kernels_end_before_start was worded when the window was built, so every job sharing the window got it,
    also a job whose occurrences hold no such row (alone it had none). By hand: pid 100, `step` ranges
    1000..2000, 3000..4000, 5000..6000, one kernel each, step 1's recorded 1500..1200 (300 ns backwards).
    Jobs a (occurrence 1) and b (2-3) share one window (their spans add up to its span)."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    for k, (start, end) in enumerate(((1500, 1200), (3200, 3500), (5200, 5500)), start=1):
        e.range(2000 * k - 1000, 2000 * k, gtid(100, 100), "step")
        e.launch(2000 * k - 900, gtid(100, 100), k)
        e.kernel(start, end, gpid(100), k)
    trace = e.write(tmp_path / "steps.sqlite")
    over = {"region": {"name": "step"}, "hardware": {"num_gpus": 1, "peak_tflops": 1e-3},
            "model": {"flops_per_step": 100.0}}
    a, b = write(tmp_path, "a", trace, 1, 1, **over), write(tmp_path, "b", trace, 2, 3, **over)
    assert len(sharing.clusters([load_checked(a), load_checked(b)])) == 1
    warned = _warned_together_as_alone(a, b, tmp_path, "kernels_end_before_start")
    assert warned["b"] == []
    assert [m.split(":")[0] for m in warned["a"]] == [
        "1 attributed kernel or memory row(s) end before they start (occurrence 1"]
    assert "; 300 ns backwards in all)" in warned["a"][0]


def test_a_device_shared_by_hosts_in_another_jobs_occurrence_stays_with_that_job(tmp_path):
    """devices_of_several_hosts was worded when the window was built, over every occurrence it held. By hand:
    pid 100 on host 1 has `step` ranges 1000..2000, 3000..4000, 5000..6000; pid 200 on host 2 has one,
    1000..2000; every kernel runs on device 0. Occurrence 1 holds both hosts' kernels on device 0 (the warning);
    occurrences 2-3 only host 1's (alone, none). Jobs a (1) and b (2-3) share one window."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    for k, (pid, host, start) in enumerate(((100, 1, 1000), (100, 1, 3000), (100, 1, 5000), (200, 2, 1000)),
                                           start=1):
        e.range(start, start + 1000, gtid(pid, pid, host), "step")
        e.launch(start + 100, gtid(pid, pid, host), k)
        e.kernel(start + 200, start + 500, gpid(pid, host), k)
    trace = e.write(tmp_path / "hosts.sqlite")
    over = {"region": {"name": "step"}, "hardware": {"num_gpus": 2, "peak_tflops": 1e-3},
            "model": {"flops_per_step": 100.0}}
    a, b = write(tmp_path, "a", trace, 1, 1, **over), write(tmp_path, "b", trace, 2, 3, **over)
    assert len(sharing.clusters([load_checked(a), load_checked(b)])) == 1
    warned = _warned_together_as_alone(a, b, tmp_path, "devices_of_several_hosts", ["ok", "ok"])
    assert warned["b"] == []
    assert [m.split(";")[0] for m in warned["a"]] == ["device(s) 0 ran kernels of processes on 2 hosts of one file"]


def test_a_shared_windows_jobs_take_their_occurrence_rows_and_timeline_from_the_window(jobs, alone, tmp_path,
                                                                                        monkeypatch):
    """The window's figures per occurrence, device and rank are computed once and cut per job (occurrence_cut.sql,
    measure.OCCURRENCE_ROWS), and each job's timeline step comes from the window's sorted rows
    (timeline._step_from_sorted), not from queries of its own; the reports as alone. Without this the comparisons
    above pass as well when a job falls back to its own queries, so they would not show the cut path is right."""
    asked = _queries_of_one_window(jobs, alone, tmp_path, monkeypatch)
    assert asked.count("occurrence_cut") == 3 and asked.count("timeline") == 3
    assert {name: asked.count(name) for name in ("kernel_union", "occurrence_times", "device_times", "rank_times",
                                                 "rank_union", "timeline_islands", "timeline_busy")} == \
        {"kernel_union": 1, "occurrence_times": 1, "device_times": 1, "rank_times": 1, "rank_union": 1,
         "timeline_islands": 0, "timeline_busy": 0}


def test_a_job_whose_own_window_places_no_kernels_is_not_placed_by_another_jobs_occurrence(synth_trace, tmp_path):
    """Kernels are placed in operators only where a window has an operator range or a label besides the region's
    (measure.places). A named range inside occurrence 1 alone made the shared window 1-3 place the kernels of the
    job 2-3 too, whose own window places none: its counted FLOPs' GEMM coverage said 4 occurrences and their GEMM
    time outside any counted operator where alone it says none (seen on a real capture, jsun-012's Forward)."""
    trace, _ = synth_trace(steps=4, ranks=1, kernels_per_step=20)
    copy = tmp_path / "trace.sqlite"
    shutil.copyfile(trace, copy)
    with contextlib.closing(sqlite3.connect(copy)) as con, con:
        con.execute("DELETE FROM NVTX_EVENTS WHERE text LIKE 'aten::%'")       # no operator range: nothing placed
        con.execute("INSERT INTO StringIds VALUES ((SELECT max(id) + 1 FROM StringIds), 'data loading')")
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) "
                    "SELECT start + 10, start + 20, eventType, (SELECT max(id) FROM StringIds), globalTid, domainId "
                    "FROM NVTX_EVENTS WHERE textId = (SELECT id FROM StringIds WHERE value = 'train_step') "
                    "ORDER BY start LIMIT 1")
    files = [write(tmp_path, "first", copy, 1, 3, hardware={"num_gpus": 1}),
             write(tmp_path, "later", copy, 2, 3, hardware={"num_gpus": 1})]
    rows = run_batch(files, tmp_path / "together", workers=1, progress=io.StringIO())
    by_itself = _alone(files, tmp_path / "alone")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    _same_reports(rows, by_itself, tmp_path / "together", tmp_path / "alone")
    counted = [json.loads((tmp_path / "together" / n / "result.json").read_text())["counted_flops"]
               for n in ("first", "later")]
    assert counted[0]["occurrences"] == 3 and counted[1]["occurrences"] == 0      # the case the test is about
