"""A lone job's built window kept in the trace's cache entry (issue #10): a warm run reads it
instead of building it and writes byte-identical reports; each input the build reads is part
of the key, so changing one builds again; a damaged kept window is built again with a warning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.analysis import classes, kept_window, ranks
from pipeline.cli import main
from pipeline.errors import TraceError
from pipeline.job.config import load_job
from pipeline.trace.synth import SynthSpec, generate
from tests.test_run_synth import write_job

REPORT_FILES = ("result.json", "report.md", "report.html")


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    """Launch rows dropped (unattributed kernels: the record's per-occurrence table is not empty) and nested ranges."""
    path = tmp_path / "traces" / "run.sqlite"
    path.parent.mkdir()
    generate(SynthSpec(ranks=2, steps=5, kernels_per_step=30, drop_launch_every=7, layers=2), path)
    return path


@pytest.fixture
def builds(monkeypatch) -> list[str]:
    """The regions whose window was built (not read from the cache)."""
    built: list[str] = []
    real = kept_window.build_window

    def counting(trace, region, params):
        built.append(region.name)
        return real(trace, region, params)
    monkeypatch.setattr(kept_window, "build_window", counting)
    return built


def job_file(folder: Path, trace: Path, **region) -> Path:
    return write_job(folder, trace, name="kept", region={"occurrences": {"first": 2, "last": 4}, **region})


def run(job: Path, out: Path, capsys, *where: str) -> tuple[int, str]:
    code = main(["run", str(job), "--out", str(out), *where])
    return code, capsys.readouterr().err


def reports(out: Path) -> dict[str, bytes]:
    return {name: (out / "kept" / name).read_bytes() for name in REPORT_FILES}


def test_a_warm_run_reads_the_kept_window_and_writes_the_same_reports(trace, tmp_path, capsys, builds):
    job, cache = job_file(tmp_path, trace), str(tmp_path / "cache")
    code, err = run(job, tmp_path / "direct", capsys, "--no-cache")
    assert err == ""
    assert run(job, tmp_path / "cold", capsys, "--cache", cache) == (code, "")
    assert builds == ["train_step"]
    assert run(job, tmp_path / "warm", capsys, "--cache", cache) == (code, "")
    assert builds == ["train_step"]                                       # read, not built
    assert reports(tmp_path / "warm") == reports(tmp_path / "cold") == reports(tmp_path / "direct")
    result = json.loads(reports(tmp_path / "warm")["result.json"])
    assert sum(o["unattributed_kernel_count"] for o in result["occurrences"]) > 0
    [kept] = (tmp_path / "cache").glob("*/windows/*")
    assert sorted(p.name for p in kept.iterdir()) == ["window.duckdb", "window.json"]


def _variations(job, rules):
    """(what changed, job, rules): each differs from the base in one input the build reads."""
    r = job.region
    theirs = [classes.Rule("mine", "gemm")] + rules
    shipped = [replace(rules[0], pattern=rules[0].pattern + "|never_a_kernel")] + rules[1:]
    return [("name", replace(job, region=replace(r, name="decoder_layer")), rules),
            ("match", replace(job, region=replace(r, match="prefix")), rules),
            ("first", replace(job, region=replace(r, first=3)), rules),
            ("last", replace(job, region=replace(r, last=5)), rules),
            ("open end", replace(job, region=replace(r, last=None)), rules),
            ("attribution", replace(job, region=replace(r, attribution="thread")), rules),
            ("job rule", job, theirs),
            ("shipped rule", job, shipped)]


def _build(job, rules, cache: Path):
    ts = ranks.open_set(job.trace_files(), cache_dir=cache)
    try:
        return ranks.build_set(ts, job, rules).window
    finally:
        ts.close()


def test_each_input_of_the_build_is_part_of_the_key(trace, tmp_path, builds, monkeypatch):
    monkeypatch.setattr(kept_window, "KEPT", 100)                      # every variation stays kept
    job = load_job(job_file(tmp_path, trace))
    rules, cache = classes.load_rules(), tmp_path / "cache"
    base = _build(job, rules, cache)
    assert _build(job, rules, cache) == base and len(builds) == 1
    for what, other, other_rules in _variations(job, rules):
        _build(other, other_rules, cache)
        assert len(builds) == 2, what
        _build(other, other_rules, cache)                               # kept under its own key
        assert len(builds) == 2, what
        builds.clear()
        builds.append("base")
    assert _build(job, rules, cache) == base and builds == ["base"]     # the base is still kept
    with pytest.raises(TraceError, match="in domain 'elsewhere'"):     # another domain: built (and not found)
        _build(replace(job, region=replace(job.region, domain="elsewhere")), rules, cache)
    assert len(builds) == 2
    said = classes.load_precision_rules()
    monkeypatch.setattr(classes, "load_precision_rules",
                        lambda *a: replace(said, rules=(("fp8", "never_a_kernel"),) + said.rules))
    _build(job, rules, cache)
    assert len(builds) == 3, "precision rules"


def test_the_modules_building_a_window_are_part_of_the_key():
    """A kept window holds what build_window made, its warnings' words included, and is read back while the code
    that made it is unchanged (kept_window.BUILD_CODE, hashed into the key). Its warnings and refusals moved from
    measure.py to analysis/trace_warnings.py, which the list never named: with that file changed (a warning
    reworded), a warm run still printed the old words a cold run no longer does. Every analysis module measure.py
    takes part of the build from is in the list."""
    import ast
    import pipeline
    source = Path(pipeline.__file__).parent / "analysis" / "measure.py"
    used = {node.module.removeprefix("pipeline.").replace(".", "/") + ".py"
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pipeline.analysis.")}
    assert "analysis/trace_warnings.py" in used
    assert used - set(kept_window.BUILD_CODE) == set()


def test_another_trace_file_is_another_key(trace, tmp_path, builds):
    job, cache = load_job(job_file(tmp_path, trace)), tmp_path / "cache"
    rules = classes.load_rules()
    _build(job, rules, cache)
    copy = tmp_path / "elsewhere" / trace.name
    copy.parent.mkdir()
    shutil.copyfile(trace, copy)                                        # same content, another file
    _build(load_job(job_file(copy.parent, copy)), rules, cache)
    generate(SynthSpec(ranks=2, steps=6, kernels_per_step=30, drop_launch_every=7, layers=2), trace)
    rebuilt = _build(job, rules, cache)                                 # the same file, rewritten
    assert len(builds) == 3 and rebuilt.counts_per_process == {"4000": 6, "4001": 6}


@pytest.mark.parametrize("damage", ["garbage", "no record", *(pytest.param(d, marks=pytest.mark.slow)   # quick: one of
                                   for d in ("truncate", "no database", "bad record"))])     # each file's
def test_a_damaged_kept_window_is_built_again_with_a_warning(trace, tmp_path, capsys, builds, damage):
    job, cache = job_file(tmp_path, trace), str(tmp_path / "cache")
    code, err = run(job, tmp_path / "cold", capsys, "--cache", cache)
    assert err == ""
    [kept] = (tmp_path / "cache").glob("*/windows/*")
    database, record = kept / "window.duckdb", kept / "window.json"
    if damage == "truncate":
        database.write_bytes(database.read_bytes()[: database.stat().st_size // 2])
    elif damage == "garbage":
        database.write_bytes(b"not a database" * 1000)
    elif damage == "no database":
        database.unlink()
    elif damage == "no record":
        record.unlink()
    else:
        record.write_text(record.read_text()[:40])
    warm, err = run(job, tmp_path / "warm", capsys, "--cache", cache)
    assert warm == code and err.startswith("warning: kept window ") and "is damaged (" in err
    assert "building it again" in err and "Traceback" not in err and len(builds) == 2
    assert reports(tmp_path / "warm") == reports(tmp_path / "cold")
    assert run(job, tmp_path / "again", capsys, "--cache", cache) == (code, "")  # kept whole again
    assert len(builds) == 2


def test_jobs_of_a_batch_on_one_trace_keep_no_window(trace, tmp_path, capsys, builds):
    one = job_file(tmp_path, trace)
    (tmp_path / "two").mkdir()
    two = job_file(tmp_path / "two", trace, occurrences={"first": 3})
    two.write_text(two.read_text().replace('"kept"', '"kept2"'))
    assert main(["run", str(one), str(two), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")]) in (0, 1)
    assert builds == [] and not list((tmp_path / "cache").glob("*/windows"))


def test_only_the_most_recently_used_windows_stay(trace, tmp_path, builds, monkeypatch):
    monkeypatch.setattr(kept_window, "KEPT", 2)
    job, cache = load_job(job_file(tmp_path, trace)), tmp_path / "cache"
    rules = classes.load_rules()
    at = [replace(job, region=replace(job.region, first=k, last=k)) for k in (1, 2, 3)]
    _build(at[0], rules, cache)
    _build(at[1], rules, cache)
    _build(at[0], rules, cache)                     # read: now the most recently used
    assert len(builds) == 2
    _build(at[2], rules, cache)                     # a third: the least recently used (at[1]) goes
    assert len(list(cache.glob("*/windows/*"))) == 2
    _build(at[0], rules, cache)
    assert len(builds) == 3
    _build(at[1], rules, cache)
    assert len(builds) == 4


@pytest.fixture
def copies(monkeypatch) -> list[Path]:
    """The kept databases whose tables were copied onto a connection (an analysis not answered from rows)."""
    copied: list[Path] = []
    real = kept_window._read_tables

    def counting(con, database):
        copied.append(database)
        return real(con, database)
    monkeypatch.setattr(kept_window, "_read_tables", counting)
    return copied


def test_a_warm_run_asking_what_the_kept_analysis_asked_reads_no_table(trace, tmp_path, capsys, builds, copies):
    job, cache = job_file(tmp_path, trace), str(tmp_path / "cache")
    code, _ = run(job, tmp_path / "direct", capsys, "--no-cache")
    run(job, tmp_path / "cold", capsys, "--cache", cache)
    assert run(job, tmp_path / "warm", capsys, "--cache", cache) == (code, "")
    assert builds == ["train_step"] and copies == []
    assert reports(tmp_path / "warm") == reports(tmp_path / "direct")
    [kept] = (tmp_path / "cache").glob("*/windows/*")
    assert json.loads((kept / "window.json").read_text())["calls"]


def test_an_analysis_asking_more_reads_the_tables_and_is_recorded_too(trace, tmp_path, capsys, builds, copies):
    job, cache = job_file(tmp_path, trace), str(tmp_path / "cache")
    run(job, tmp_path / "cold", capsys, "--cache", cache)
    body = json.loads(job.read_text())
    body["analysis"] = {"figures": [{"name": "gemm", "kernels": "gemm", "flops": 1e12}]}
    job.write_text(json.dumps(body))                                   # same window, one more query
    code, _ = run(job, tmp_path / "direct", capsys, "--no-cache")
    assert run(job, tmp_path / "warm", capsys, "--cache", cache) == (code, "")
    assert builds == ["train_step"] and len(copies) == 1
    assert reports(tmp_path / "warm") == reports(tmp_path / "direct")
    assert run(job, tmp_path / "again", capsys, "--cache", cache) == (code, "")
    assert len(copies) == 1 and reports(tmp_path / "again") == reports(tmp_path / "direct")


def test_a_damaged_database_found_when_its_tables_are_needed_is_built_again(trace, tmp_path, capsys, builds, copies):
    job, cache = job_file(tmp_path, trace), str(tmp_path / "cache")
    code, _ = run(job, tmp_path / "cold", capsys, "--cache", cache)
    [kept] = (tmp_path / "cache").glob("*/windows/*")
    database = kept / "window.duckdb"
    database.write_bytes(b"\0" * database.stat().st_size)             # the size it was written with
    record = json.loads((kept / "window.json").read_text())
    (kept / "window.json").write_text(json.dumps({**record, "calls": {}}))   # nothing recorded: tables needed
    warm, err = run(job, tmp_path / "warm", capsys, "--cache", cache)
    assert warm == code and err.startswith("warning: kept window ") and "building it again" in err
    assert "Traceback" not in err and len(builds) == 2
    assert reports(tmp_path / "warm") == reports(tmp_path / "cold")
    assert run(job, tmp_path / "again", capsys, "--cache", cache) == (code, "") and len(builds) == 2


def test_a_warm_run_answered_from_recorded_rows_never_imports_numpy(trace, tmp_path, capsys):
    """numpy (0.04 s of start-up) is imported only where unions are computed or tables handed over;
    concurrent.futures (with logging) only where a trace file is hashed."""
    job, cache = job_file(tmp_path, trace), str(tmp_path / "cache")
    code, _ = run(job, tmp_path / "cold", capsys, "--cache", cache)
    script = ("import sys\n"
              "from pipeline.cli import main\n"
              "code = main(['run', '--cache', sys.argv[1], '--out', sys.argv[2], sys.argv[3]])\n"
              "print(code, [m for m in ('numpy', 'concurrent.futures') if m in sys.modules])\n")
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script, cache, str(tmp_path / "warm"), str(job)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo)}, check=True)
    assert done.stdout.split("\n")[-2] == f"{code} []", done.stdout + done.stderr
    assert reports(tmp_path / "warm") == reports(tmp_path / "cold")


def test_an_analysis_reading_a_table_around_queries_runs_on_the_tables(trace, tmp_path, capsys, builds, copies,
                                                                       monkeypatch):
    """SQL run directly on the connection cannot be replayed: the tables are copied and the analysis runs for real."""
    job, cache = job_file(tmp_path, trace), str(tmp_path / "cache")
    code, _ = run(job, tmp_path / "cold", capsys, "--cache", cache)
    real = classes.communication

    def direct(trace, m):
        trace.con.execute("SELECT count(*) FROM classified").fetchone()
        return real(trace, m)
    monkeypatch.setattr(classes, "communication", direct)
    assert run(job, tmp_path / "warm", capsys, "--cache", cache) == (code, "")
    assert len(copies) == 1 and builds == ["train_step"]
    assert reports(tmp_path / "warm") == reports(tmp_path / "cold")
