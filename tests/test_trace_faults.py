"""Damaged inputs are named, not crashed on: a broken cache entry is rebuilt with a warning; trace
contents the export schema does not allow are exit 4 naming table, column and row count."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest

from clock import past_change_time
from pipeline.cli import main
from pipeline.errors import TraceError

JOB = {"name": "faults", "region": {"name": "train_step"}, "hardware": {"num_gpus": 2, "precision": "bf16"},
       "model": {"flops_per_step": 4.0e+13}, "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}


def job_on(trace: Path, folder: Path) -> Path:
    path = folder / "job.yaml"
    path.write_text(json.dumps({**JOB, "trace": str(trace)}))
    return path


def run(job: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["run", str(job), "--out", str(job.parent / "out"), *extra])
    return code, capsys.readouterr().err


# The quick tier damages the entry one way; the slow tier (pytest -m slow) the other two as well.
@pytest.mark.parametrize("damage", ["garbage", pytest.param("truncate", marks=pytest.mark.slow),
                                    pytest.param("remove", marks=pytest.mark.slow)])
def test_a_damaged_cache_entry_is_rebuilt_with_a_warning(synth_trace, tmp_path, capsys, damage):
    trace, _ = synth_trace()
    job, cache = job_on(trace, tmp_path), tmp_path / "cache"
    assert run(job, capsys, "--cache", str(cache)) == (0, "")
    first = (tmp_path / "out/faults/result.json").read_bytes()
    victim = next(cache.glob("*/raw_kernel.parquet"))
    if damage == "truncate":
        victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    elif damage == "garbage":
        victim.write_bytes(b"not parquet at all" * 100)
    else:
        victim.unlink()
    code, err = run(job, capsys, "--cache", str(cache))
    assert code == 0 and err.startswith("warning: cache entry ") and "is damaged (raw_kernel.parquet" in err
    assert "rebuilding it from" in err and "Traceback" not in err
    assert (tmp_path / "out/faults/result.json").read_bytes() == first
    assert run(job, capsys, "--cache", str(cache)) == (0, "")          # the rebuilt entry is whole again


def copy_with(trace: Path, folder: Path, *sql: str) -> Path:
    """A copy of the trace changed by `sql`; the kernel table is re-created without NOT NULL first."""
    path = Path(shutil.copyfile(trace, folder / "bad.sqlite"))
    with sqlite3.connect(path) as con:
        ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'").fetchone()[0]
        con.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO old_kernels")
        con.execute(ddl.replace("NOT NULL", ""))
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM old_kernels")
        con.execute("DROP TABLE old_kernels")
        for statement in sql:
            con.execute(statement)
    return path


@pytest.mark.parametrize("sql, message", [
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE rowid IN (3, 4, 5)",
     "CUPTI_ACTIVITY_KIND_KERNEL.start: 3 rows hold text or non-integer values"),
    ('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = NULL WHERE rowid IN (3, 4)',
     "CUPTI_ACTIVITY_KIND_KERNEL.end: 2 rows are NULL"),
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = NULL, \"end\" = NULL WHERE rowid = 7",
     "CUPTI_ACTIVITY_KIND_KERNEL.start: 1 rows are NULL; CUPTI_ACTIVITY_KIND_KERNEL.end: 1 rows are NULL"),
    ("UPDATE NVTX_EVENTS SET start = 'x' WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS LIMIT 1)",
     "NVTX_EVENTS.start: 1 rows hold text or non-integer values"),
])
def test_contents_the_schema_does_not_allow_are_trace_errors(synth_trace, tmp_path, capsys, sql, message):
    trace, _ = synth_trace()
    bad = copy_with(trace, tmp_path, sql)
    for extra in ((), ("--cache", str(tmp_path / "cache"))):
        code, err = run(job_on(bad, tmp_path), capsys, *extra)
        assert code == 4 and f"{bad}: {message}" in err and "Traceback" not in err, err
    code = main(["inspect", str(bad)])
    err = capsys.readouterr().err
    assert code == 4 and message in err and "Traceback" not in err


def test_null_times_in_one_of_several_small_rank_files_name_that_file(synth_trace, tmp_path, capsys):
    """Several small files' rows share one table per raw view (issue 34, open.attach pool): the NULL check reads
    each file's own rows there, so NULL ends in the second file are found and said of it, not of the first."""
    trace, _ = synth_trace()
    good = Path(shutil.copyfile(trace, tmp_path / "good.sqlite"))
    bad = copy_with(trace, tmp_path, 'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = NULL WHERE rowid IN (3, 4)')
    (tmp_path / "job.yaml").write_text(json.dumps({**JOB, "trace": [str(good), str(bad)]}))
    code, err = run(tmp_path / "job.yaml", capsys, "--no-cache")
    assert code == 4 and f"{bad}: CUPTI_ACTIVITY_KIND_KERNEL.end: 2 rows are NULL" in err, err
    assert f"{good}:" not in err


def test_marks_without_an_end_are_fine(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    marked = copy_with(trace, tmp_path, "INSERT INTO NVTX_EVENTS (start, \"end\", eventType, text, globalTid) "
                                       "VALUES (5, NULL, 34, 'a mark', 1)")
    assert run(job_on(marked, tmp_path), capsys)[0] == 0


@pytest.mark.parametrize("missing, says", [
    (100, "but its SQLite header says {size:,} ({pages:,} pages of 4,096 bytes)"),    # part of the last page
    (4096, "but its SQLite header says {size:,} ({pages:,} pages of 4,096 bytes)"),   # the whole last page
    ("all but 50", "shorter than the 100-byte SQLite header"),
])
def test_a_truncated_trace_is_refused_not_read_short(synth_trace, tmp_path, capsys, missing, says):
    """SQLite reads a partial last page as zeros: cut 100 bytes short, the synthetic trace lost rows and
    `mfu run` printed other figures with exit 0. Whole pages missing were refused only as 'database disk
    image is malformed'. Each is a trace error saying it is cut short and what to do."""
    trace, _ = synth_trace()
    size = trace.stat().st_size
    assert size % 4096 == 0                                          # the synthetic trace's page size
    cut = 50 if missing == "all but 50" else size - missing
    short = tmp_path / "short.sqlite"
    short.write_bytes(trace.read_bytes()[:cut])
    before = short.read_bytes()
    needle = f"{short}: truncated: {cut:,} bytes, " + says.format(size=size, pages=size // 4096)
    for extra in ((), ("--cache", str(tmp_path / "cache"))):
        code, err = run(job_on(short, tmp_path), capsys, *extra)
        assert code == 4 and needle in err and "export it again" in err and "Traceback" not in err, err
    for command in (["inspect", str(short)], ["init", str(short)]):
        assert main(command) == 4 and needle in capsys.readouterr().err
    assert short.read_bytes() == before and not (tmp_path / "out/faults").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.yaml", "out", "short.sqlite"]    # no cache, nothing beside


@pytest.mark.parametrize("table, column", [("CUPTI_ACTIVITY_KIND_KERNEL", "start"),   # the others: slow tier
                                           pytest.param("CUPTI_ACTIVITY_KIND_KERNEL", "end", marks=pytest.mark.slow),
                                           ("NVTX_EVENTS", "globalTid")])
def test_a_table_lacking_a_column_it_needs_is_named(synth_trace, tmp_path, capsys, table, column):
    """A kernel table whose `start` was renamed crashed every command (exit 5: DuckDB's binder error on
    the view that was to treat the table as absent); a run now names the table and the column."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        con.execute(f'ALTER TABLE {table} RENAME COLUMN "{column}" TO renamed')
    needle = f"{bad}: its {table} table lacks columns ['{column}'], which every Nsight Systems export has"
    for extra in ((), ("--cache", str(tmp_path / "cache")), ("--cache", str(tmp_path / "cache"))):
        code, err = run(job_on(bad, tmp_path), capsys, *extra)
        assert code == 4 and needle in err and "nsys export --type sqlite" in err and "Traceback" not in err, err
    assert main(["inspect", str(bad)]) == 0
    assert f"note: {table} lacks columns ['{column}']; treated as absent" in capsys.readouterr().out
    assert main(["init", str(bad)]) == 4          # the table treated as absent leaves no kernels or no ranges
    assert "No job file written" in capsys.readouterr().err


EXPORT_AGAIN = "export the report again with `nsys export --type sqlite`"


@pytest.mark.parametrize("table, columns, code, says", [
    ("StringIds", ["value"], 4, "its StringIds table lacks columns ['value'], which every Nsight Systems export has"),
    ("CUPTI_ACTIVITY_KIND_KERNEL", ["correlationId"], 4,
     "its CUPTI_ACTIVITY_KIND_KERNEL table has no correlationId column, which launch attribution needs"),
    ("CUPTI_ACTIVITY_KIND_KERNEL", ["shortName", "demangledName"], 4, "its CUPTI_ACTIVITY_KIND_KERNEL table lacks "
     "columns ['demangledName', 'shortName'] (one of ['demangledName', 'shortName'] would do)"),
    ("NVTX_EVENTS", ["text", "textId"], 4,
     "its NVTX_EVENTS table lacks columns ['text', 'textId'] (one of ['text', 'textId'] would do)"),
    ("TARGET_INFO_GPU", ["name"], 3, "/hardware/gpu: bad.sqlite: the GPU cannot be identified: its TARGET_INFO_GPU table "
     "has no name column, which GPU identification needs"),
])
def test_each_table_s_required_columns_are_checked_as_it_is_opened(synth_trace, tmp_path, capsys, table, columns,
                                                                      code, says):
    """Issue 33: a kernel table without correlationId was measured as a capture whose kernels all lay outside the
    region (INVALID, 'trimmed capture?'); StringIds without value as 'no NVTX range matches'; a GPU table without
    name as a row without one. Each names the table and the column and says to export again."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        for column in columns:
            con.execute(f'ALTER TABLE {table} RENAME COLUMN "{column}" TO renamed_{column}')
    exit_code, err = run(job_on(bad, tmp_path), capsys)
    assert exit_code == code and says.format(bad=bad) in err and EXPORT_AGAIN in err and "Traceback" not in err, err
    assert not (tmp_path / "out/faults").exists()


def test_columns_only_one_analysis_needs_disable_it_with_a_note(synth_trace, tmp_path, capsys):
    """A runtime table without correlationId matches no launch: the run measures by time window and says which
    column of which table made it (it said 'no CUPTI_ACTIVITY_KIND_RUNTIME table'). A kernel table without
    correlationId still measures by time: a GPU-active window, or an NVTX region with attribution: window; and
    inspect says why ranges are seen to launch nothing. A kernel table without streamId is measured, its streams
    table said to show none."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        con.execute('ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME RENAME COLUMN "correlationId" TO renamed')
    assert run(job_on(bad, tmp_path), capsys)[0] == 0
    [note] = [w["message"] for w in json.loads((tmp_path / "out/faults/result.json").read_text())["warnings"]
              if w["code"] == "attribution_window"]
    assert note.endswith("its CUPTI_ACTIVITY_KIND_RUNTIME table lacks columns ['correlationId'], which every Nsight "
                         f"Systems export has (a file edited or written by another tool?); {EXPORT_AGAIN}"), note
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        con.execute('ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN "correlationId" TO renamed')
    for region in ({"kind": "gpu_active"}, {"name": "train_step", "attribution": "window"}):
        job = json.loads(job_on(bad, tmp_path).read_text()) | {"region": region}
        (tmp_path / "job.yaml").write_text(json.dumps(job))
        assert run(tmp_path / "job.yaml", capsys)[0] == 0
    assert main(["inspect", str(bad)]) == 0
    assert "no kernel can be matched to its launch, so `mfu run` refuses an NVTX region attributed by launch (the " \
           "default) and no range is seen to launch kernels: its CUPTI_ACTIVITY_KIND_KERNEL table has no " \
           "correlationId column" in capsys.readouterr().out
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))     # streamId: only the per-stream table needs it
    with sqlite3.connect(bad) as con:
        con.execute('ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN "streamId" TO renamed')
    assert run(job_on(bad, tmp_path), capsys)[0] == 0
    r = json.loads((tmp_path / "out/faults/result.json").read_text())
    assert [w["message"] for w in r["warnings"] if w["code"] == "column_missing"] == [
        "time per CUDA stream shows no stream ('—'): its CUPTI_ACTIVITY_KIND_KERNEL table has no streamId column, "
        "which time per CUDA stream needs and every Nsight Systems export has (a file edited or written by another "
        f"tool?); {EXPORT_AGAIN}"]
    assert {s["stream_id"] for s in r["stream_times"]} == {None}


def every_command_says(bad: Path, folder: Path, capsys, message: str) -> None:
    """run, inspect and init each exit 4 naming the problem, without a traceback."""
    for command in (["run", str(job_on(bad, folder)), "--out", str(folder / "out")], ["inspect", str(bad)],
                    ["init", str(bad)]):
        code = main(command)
        err = capsys.readouterr().err
        assert code == 4 and message in err and "Traceback" not in err, (command, err)


def test_text_in_a_not_null_time_column_is_named_by_every_command(synth_trace, tmp_path, capsys):
    """Nsight Systems declares kernel times NOT NULL, so nothing is checked when the trace is attached; the
    first query meets the text. run and inspect named it, init crashed on DuckDB's type error (exit 5)."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE rowid IN (3, 4)")
    message = f"{bad}: CUPTI_ACTIVITY_KIND_KERNEL.start: 2 rows hold text or non-integer values"
    every_command_says(bad, tmp_path, capsys, message)


def test_ranges_without_a_name_are_listed_as_such_and_never_proposed(synth_trace, tmp_path, capsys):
    """NVTX textIds pointing at no StringIds row leave ranges without a name: inspect crashed on them
    (exit 5), and init proposed the nameless group as the step (`name: null`)."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        con.execute("UPDATE NVTX_EVENTS SET text = NULL, textId = 999999")
    assert main(["inspect", str(bad)]) == 0
    out = capsys.readouterr().out
    assert "2 proc  (no name: NVTX text NULL and textId not in StringIds)" in out
    assert "NVTX regions by the GPU work they launch: none" in out
    assert "20 NVTX ranges have no name" in out and "has no NVTX ranges" not in out     # 2 ranks x 5 steps, 5 ops
    assert main(["init", str(bad)]) == 0                      # no name to select: the GPU-active window
    assert "  kind: gpu_active " in capsys.readouterr().out
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 4 and "Most frequent range names: (no name: a textId in no StringIds row)." in err


def test_a_trace_cut_short_while_the_run_reads_it_is_a_trace_error(synth_trace, tmp_path, capsys, monkeypatch):
    """A copy or export still writing the trace (here: the file cut to half its pages right after the checks
    at attach) made the next query fail with SQLite's 'database disk image is malformed': exit 5."""
    from pipeline.trace import integrity
    trace, _ = synth_trace()
    moving = Path(shutil.copyfile(trace, tmp_path / "moving.sqlite"))
    size = moving.stat().st_size
    checked = integrity.check

    def check_then_cut(t, *suffix):
        checked(t, *suffix)
        with open(moving, "r+b") as fh:
            fh.truncate(size // 2)
    monkeypatch.setattr(integrity, "check", check_then_cut)
    code, err = run(job_on(moving, tmp_path), capsys, "--no-cache")
    assert code == 4 and "Traceback" not in err, err
    assert f"{moving}: truncated: {size // 2:,} bytes, but its SQLite header says {size:,}" in err
    assert err.rstrip().endswith("(it changed while this run read it)")


def test_sqlite_damage_in_an_intact_looking_file_is_a_trace_error(synth_trace):
    from pipeline.trace.integrity import explain
    trace, _ = synth_trace()
    got = explain(duckdb.Error("database disk image is malformed"), [trace])
    assert isinstance(got, TraceError) and str(got).startswith(
        f"{trace}: SQLite says 'database disk image is malformed' while reading it: the file is damaged")
    other = duckdb.Error("Out of Memory Error: could not allocate")
    assert explain(other, [trace]) is other


def test_a_trace_another_program_holds_locked_says_so(synth_trace, tmp_path, capsys):
    """A trace another process holds an exclusive lock on (an export still writing it) said only DuckDB's
    'Failed to prepare query "SELECT name FROM sqlite_master ...": database is locked'."""
    import subprocess
    import sys
    trace, _ = synth_trace()
    locked = Path(shutil.copyfile(trace, tmp_path / "locked.sqlite"))
    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], "
                               "isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); "
                               "sys.stdin.read()", str(locked)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        assert main(["inspect", str(locked)]) == 4
        assert capsys.readouterr().err == (
            f"error: {locked}: cannot be read as SQLite (database is locked); another program holds a lock on it "
            "(an export or copy still writing it?): run again when it has finished\n")
    finally:
        holder.communicate("")
    assert main(["inspect", str(locked)]) == 0


def test_names_that_are_not_utf8_are_shown_as_hex_not_crashed_on(synth_trace, tmp_path, capsys):
    """SQLite keeps whatever bytes a program gave it (an NVTX name pushed as Latin-1). A kernel name or
    range name that is not UTF-8 made inspect, init and run fail with DuckDB's 'Invalid unicode' (exit 5)."""
    trace, _ = synth_trace(layers=2)
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    kernel, layer = "gemm_caf\xe9".encode("latin-1"), "decoder_layer\xe9".encode("latin-1")
    with sqlite3.connect(bad) as con:
        kid = con.execute("SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY end - start DESC LIMIT 1").fetchone()[0]
        con.execute("UPDATE StringIds SET value = CAST(? AS TEXT) WHERE id = ?", (kernel, kid))
        con.execute("UPDATE StringIds SET value = CAST(? AS TEXT) WHERE value = 'decoder_layer'", (layer,))
    shown = {name: "not UTF-8: 0x" + name.hex().upper() for name in (kernel, layer)}
    assert main(["inspect", str(bad)]) == 0
    assert f"  {shown[layer]}\n" in capsys.readouterr().out
    assert main(["init", str(bad)]) == 0
    capsys.readouterr()
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 0 and err == ""
    assert shown[kernel] in (tmp_path / "out/faults/report.md").read_text()


def test_a_trace_rewritten_while_the_run_reads_it_is_refused(synth_trace, tmp_path, capsys, monkeypatch):
    """A trace rewritten in place during a run (same size: an export writing over it) was measured from a
    mix of both versions with exit 0. Its modification time moved: exit 4, no report."""
    import os
    from pipeline.trace import integrity
    trace, _ = synth_trace()
    moving = Path(shutil.copyfile(trace, tmp_path / "moving.sqlite"))
    checked = integrity.check

    def check_then_rewrite(t, *suffix):
        checked(t, *suffix)
        with open(moving, "r+b") as fh:
            data = fh.read()
            fh.seek(0)
            fh.write(data)                                # the same bytes again: only the mtime moves
        os.utime(moving, ns=(0, moving.stat().st_mtime_ns + 1_000_000))
        assert moving.read_bytes() == trace.read_bytes()
    monkeypatch.setattr(integrity, "check", check_then_rewrite)
    code, err = run(job_on(moving, tmp_path), capsys, "--no-cache")
    assert (code, err) == (4, REWRITTEN.format(moving))
    assert not (tmp_path / "out/faults").exists()


def test_a_trace_rewritten_with_its_modification_time_put_back_is_refused(synth_trace, tmp_path, capsys,
                                                                           monkeypatch):
    """Bytes written over the trace during a run, with size and modification time put back as they were (`touch -r`,
    a copy tool keeping times), went unseen: only size and mtime were compared. The change time (ctime) moved, and
    no file tool can set it back: exit 4, no report."""
    import os
    from pipeline.trace import integrity
    trace, _ = synth_trace()
    moving = Path(shutil.copyfile(trace, tmp_path / "moving.sqlite"))
    checked = integrity.check

    def check_then_rewrite_keeping_times(t, *suffix):
        checked(t, *suffix)
        before = moving.stat()
        past_change_time(moving)                          # past the file system's clock step
        with open(moving, "r+b") as fh:
            data = fh.read()
            fh.seek(0)
            fh.write(data)
        os.utime(moving, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = moving.stat()
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        assert after.st_ctime_ns != before.st_ctime_ns
    monkeypatch.setattr(integrity, "check", check_then_rewrite_keeping_times)
    code, err = run(job_on(moving, tmp_path), capsys, "--no-cache")
    assert (code, err) == (4, REWRITTEN.format(moving))
    assert not (tmp_path / "out/faults").exists()


REWRITTEN = ("error: {}: changed while this run read it (its size, modification or change time moved, or it is "
             "gone), so the figures could mix two versions of it; run again when nothing writes the file\n")


def test_kernels_that_end_before_they_start_are_a_warning(synth_trace, tmp_path, capsys):
    """Kernel rows ending before they start subtracted their negative length from every kernel-time sum (the
    roofline then said 'above roof') with no word about the trace."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        con.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 1000 WHERE rowid % 5 = 0')
        # attributed (docs/figures.md §4): launched, by the kernel's process, inside one of its train_step ranges
        # (every occurrence is selected); duplicate launch rows of one kernel count it once
        rows = con.execute("""
            SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
            WHERE k."end" < k.start AND EXISTS (
                SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r
                JOIN NVTX_EVENTS AS n ON (n.globalTid & ~16777215) = (r.globalTid & ~16777215)
                 AND r.start BETWEEN n.start AND n."end"
                JOIN StringIds AS s ON s.id = n.textId AND s.value = 'train_step'
                WHERE r.correlationId = k.correlationId AND (r.globalTid & ~16777215) = k.globalPid)""").fetchone()[0]
    assert rows > 0
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 0 and err == ""
    warnings = json.loads((tmp_path / "out/faults/result.json").read_text())["warnings"]
    (backwards,) = [w for w in warnings if w["code"] == "kernels_end_before_start"]
    assert backwards["message"].startswith(f"{rows} attributed kernel or memory row(s) end before they start "
                                           "(occurrence 1: ")
    assert f"; {1000 * rows:,} ns backwards in all): the trace's clock or the export is broken" in backwards["message"]
    fine = Path(shutil.copyfile(trace, tmp_path / "fine.sqlite"))
    run(job_on(fine, tmp_path), capsys)
    assert "kernels_end_before_start" not in (tmp_path / "out/faults/result.json").read_text()


@pytest.mark.parametrize("value", [b"\xff\xfe", b"ab"])
def test_a_blob_where_a_name_belongs_is_named(synth_trace, tmp_path, capsys, value):
    """A blob in StringIds.value stopped DuckDB's scanner with a type error (exit 5) in every command, and its
    message, quoting bytes that are not UTF-8, could not even be decoded."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        con.execute("UPDATE StringIds SET value = ? WHERE id = (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL "
                    "LIMIT 1)", (value,))
    message = f"{bad}: StringIds.value: 1 rows hold a blob or a number where the export schema has text"
    every_command_says(bad, tmp_path, capsys, message)


def test_inspect_verify_names_a_page_whose_rows_sqlite_reads_short(tmp_path, capsys):
    """The kernel table's one leaf page says it holds 3 cells where it holds 4 (its cell count, bytes 3-4 of
    the b-tree page header, lowered by one): SQLite reads 3 kernels without complaint, so plain `mfu inspect`
    counts 3 and exits 0. With --verify SQLite's quick_check finds the page's space unaccounted for: exit 4
    naming the page and its table, the file untouched and nothing written beside it."""
    from nsys_export import two_rank_steps
    good = two_rank_steps().write(tmp_path / "good.sqlite")            # 4 kernels
    with sqlite3.connect(good) as con:
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'").fetchone()[0]
    con.close()
    data = bytearray(good.read_bytes())
    header = (root - 1) * page_size
    assert data[header] == 13 and int.from_bytes(data[header + 3:header + 5], "big") == 4    # a table leaf, 4 cells
    data[header + 3:header + 5] = (3).to_bytes(2, "big")
    folder = tmp_path / "damaged"
    folder.mkdir()
    bad = folder / "bad.sqlite"
    bad.write_bytes(bytes(data))

    assert main(["inspect", str(bad), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["kernels"] == 3
    assert main(["inspect", str(bad), "--verify"]) == 4
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.startswith(f"error: {bad}: damaged: SQLite's quick_check finds: ")
    assert f"on page {root} (in CUPTI_ACTIVITY_KIND_KERNEL)" in captured.err
    assert "export it again with `nsys export --type sqlite`" in captured.err
    assert bad.read_bytes() == bytes(data) and [p.name for p in folder.iterdir()] == ["bad.sqlite"]

    assert main(["inspect", str(good), "--verify", "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["trace"]["quick_check"] == "ok" and info["counts"]["kernels"] == 4


@pytest.mark.parametrize("sql, message", [
    # values of another type in the ids, names and GPU rows the pipeline reads: DuckDB's scanner stopped on
    # each (a type mismatch or conversion error), an internal error (exit 5) with a traceback
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 1.5 WHERE rowid = 3",
     "CUPTI_ACTIVITY_KIND_KERNEL.shortName: 1 rows hold text or non-integer values"),
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 'x y' WHERE rowid < 10",
     "CUPTI_ACTIVITY_KIND_KERNEL.streamId: 9 rows hold text or non-integer values"),
    ("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = x'00ff' WHERE rowid = 3",
     "CUPTI_ACTIVITY_KIND_RUNTIME.globalTid: 1 rows hold text or non-integer values"),
    ("UPDATE NVTX_EVENTS SET textId = 'train' WHERE rowid = 1", "NVTX_EVENTS.textId: 1 rows hold text or non-integer"),
    ("UPDATE TARGET_INFO_GPU SET name = x'00ff'", "TARGET_INFO_GPU.name: 2 rows hold a blob or a number where"),
    ("UPDATE META_DATA_EXPORT SET value = x'00ff' WHERE rowid = 1",       # read when the trace is attached
     "META_DATA_EXPORT.value: 1 rows hold a blob or a number where"),
    # -2^63 ns: DuckDB cannot subtract it from a time (an INT64 overflow), also exit 5
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775808 WHERE rowid = 100",
     "CUPTI_ACTIVITY_KIND_KERNEL.start: 1 rows hold a time beyond ±2^62 ns"),
    ("UPDATE NVTX_EVENTS SET \"end\" = -9223372036854775808 WHERE rowid = 1",
     "NVTX_EVENTS.end: 1 rows hold a time beyond ±2^62 ns"),
])
def test_every_column_read_is_checked_for_its_type(synth_trace, tmp_path, capsys, sql, message):
    trace, _ = synth_trace(steps=6, layers=4, warmup_steps=1)         # the quickstart's trace
    bad = copy_with(trace, tmp_path, sql)
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 4 and f"{bad}: {message}" in err and "Traceback" not in err, err
    code = main(["inspect", str(bad)])                                # inspect reads no stream
    err = capsys.readouterr().err
    assert (code, message in err) == ((0, False) if "streamId" in sql else (4, True)) and "Traceback" not in err, err


@pytest.mark.parametrize("where, occurrences", [("", 10), (" WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS)", 1)])
def test_region_ranges_without_a_thread_are_a_trace_error(synth_trace, tmp_path, capsys, where, occurrences):
    """NVTX_EVENTS.globalTid NULL on every row crashed the rank labels (exit 5); on one range it was measured as a
    third rank that launched nothing, with exit 0. 2 ranks x 5 steps: all of them, or the first one."""
    trace, _ = synth_trace()
    bad = copy_with(trace, tmp_path, f"UPDATE NVTX_EVENTS SET globalTid = NULL{where}")
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 4 and "Traceback" not in err, err
    assert f"{bad}: {occurrences} occurrence(s) of region 'train_step' have no thread (NVTX_EVENTS.globalTid" in err


def test_inspect_says_when_rows_end_before_they_start(synth_trace, tmp_path, capsys):
    """One kernel ending at 0 made inspect print negative sums and shares and guess that no range is a step,
    with no word of why (`mfu run` warns); an NVTX range ending before it starts printed a negative duration."""
    trace, _ = synth_trace()
    bad = copy_with(trace, tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = 0 WHERE rowid = 50",
                    "UPDATE NVTX_EVENTS SET \"end\" = start - 5 WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS)")
    assert main(["inspect", str(bad)]) == 0
    out = capsys.readouterr().out
    assert ("note: 1 kernel row(s) and 1 NVTX range(s) end before they start: the trace's clock or the export is "
            "broken there. The range durations and kernel time sums and shares above subtract their negative") in out
    assert main(["inspect", str(trace)]) == 0 and "end before they start" not in capsys.readouterr().out


def test_kernels_without_time_suggest_no_precision(synth_trace, tmp_path, capsys):
    """Every kernel zero-length: the precision shares divided by a total of 0 (exit 5 with a traceback from inspect
    and init); no matrix-kernel time suggests no precision, and init finds no GPU work to write a job for."""
    trace, _ = synth_trace()
    bad = copy_with(trace, tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start")
    assert main(["inspect", str(bad), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["precision_by_kernel_names"] == []
    assert main(["init", str(bad), "-o", str(tmp_path / "job.yaml")]) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err and "No job file written" in err and not (tmp_path / "job.yaml").exists()


@pytest.mark.parametrize("table, written, declared, message", [
    ("CUPTI_ACTIVITY_KIND_KERNEL", "deviceId INTEGER", "deviceId BLOB",
     "CUPTI_ACTIVITY_KIND_KERNEL.deviceId: declared BLOB, where the export schema has INTEGER"),
    ("StringIds", "value TEXT", "value REAL", "StringIds.value: declared REAL, where the export schema has TEXT"),
    ("META_DATA_EXPORT", "name TEXT", "name REAL", "META_DATA_EXPORT.name: declared REAL, where the export schema"),
])
def test_a_column_declared_another_type_is_named(synth_trace, tmp_path, capsys, table, written, declared, message):
    """DuckDB reads a column by its declared type: deviceId declared BLOB stopped every query on a cast error
    (exit 5) though each value is an integer, and names in a column declared REAL on a type mismatch."""
    trace, _ = synth_trace()
    bad = Path(shutil.copyfile(trace, tmp_path / "bad.sqlite"))
    with sqlite3.connect(bad) as con:
        ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        assert written in ddl
        con.execute(f"ALTER TABLE {table} RENAME TO old_rows")
        con.execute(ddl.replace(written, declared))
        con.execute(f"INSERT INTO {table} SELECT * FROM old_rows")
        con.execute("DROP TABLE old_rows")
    con.close()
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 4 and f"{bad}: {message}" in err and "Traceback" not in err, err
    assert main(["inspect", str(bad)]) == 4
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_a_negative_process_id_is_named(synth_trace, tmp_path, capsys):
    """globalTid -2^63 overflowed inspect's process comparison (exit 5); no id of (pid, tid, host) is negative."""
    trace, _ = synth_trace()
    bad = copy_with(trace, tmp_path, "UPDATE NVTX_EVENTS SET globalTid = -9223372036854775808 WHERE rowid = 1")
    assert main(["inspect", str(bad)]) == 4
    err = capsys.readouterr().err
    assert f"{bad}: NVTX_EVENTS.globalTid: 1 rows hold a negative id" in err and "Traceback" not in err, err


def test_kernels_without_time_are_not_said_to_be_missing(synth_trace, tmp_path, capsys):
    """Every kernel zero-length: inspect's verdict said 'this trace holds no GPU kernels ... capture again with CUDA
    tracing on', and init repeated it, while the kernels are all there and only their end times were lost. Both
    now say how many kernels have no length and to export again (init still writes no file); a trace with time
    keeps its verdict."""
    trace, _ = synth_trace()
    bad = copy_with(trace, tmp_path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start")
    with sqlite3.connect(bad) as con:
        (kernels,) = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    said = (f"this trace's {kernels:,} kernels all have no length (each ends at or before its start): it lost their "
            "GPU timestamps")
    assert main(["inspect", str(bad)]) == 0
    out = capsys.readouterr().out
    assert f"  verdict: {said}" in out and "holds no GPU kernels" not in out and "warning kernels_without_length" in out
    assert main(["init", str(bad), "-o", str(tmp_path / "job.yaml")]) == 4
    err = capsys.readouterr().err
    assert said in err and "No job file written" in err and not (tmp_path / "job.yaml").exists()
    assert main(["inspect", str(trace)]) == 0 and "have no length" not in capsys.readouterr().out


def test_a_selected_range_with_a_negative_thread_id_is_a_trace_error(synth_trace, tmp_path, capsys):
    """One train_step range of the second process with the sign bit of its globalTid set (an id that does not
    overflow, unlike -2^63): no query failed, so it was measured as a third process with no kernels, exit 0,
    with rank warnings about misaligned and missing occurrences. It is refused (exit 4) naming the table,
    column and the range, its start and id read here from the file."""
    trace, _ = synth_trace()
    with sqlite3.connect(trace) as con:
        rowid, start, tid = con.execute(
            "SELECT n.rowid, n.start, n.globalTid FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId "
            "WHERE coalesce(n.text, s.value) = 'train_step' AND n.globalTid = (SELECT max(globalTid) FROM NVTX_EVENTS) "
            "ORDER BY n.start LIMIT 1").fetchone()
    broken = tid - 2 ** 63
    assert broken < 0
    bad = copy_with(trace, tmp_path, f"UPDATE NVTX_EVENTS SET globalTid = {broken} WHERE rowid = {rowid}")
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 4 and "Traceback" not in err, err
    assert (f"{bad}: NVTX_EVENTS.globalTid: 1 occurrence(s) of region 'train_step' have a negative thread id (e.g. "
            f"the range starting at {start} ns, globalTid {broken})") in err


def test_a_kernel_with_a_negative_process_id_is_a_trace_error(synth_trace, tmp_path, capsys):
    """A kernel of the selected occurrences with the sign bit of its globalPid set matched no launch and no
    process, and was left out of every figure, exit 0. It is refused (exit 4) naming the table, column and row."""
    trace, _ = synth_trace()
    with sqlite3.connect(trace) as con:
        rowid, start, device, corr, pid = con.execute(
            "SELECT rowid, start, deviceId, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL "
            "ORDER BY start DESC LIMIT 1").fetchone()              # the last kernel: inside the last occurrence
    broken = pid - 2 ** 63
    bad = copy_with(trace, tmp_path, f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = {broken} "
                                     f"WHERE rowid = {rowid}")
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 4 and "Traceback" not in err, err
    assert (f"{bad}: CUPTI_ACTIVITY_KIND_KERNEL.globalPid: a row inside the selected occurrences has a negative "
            f"process id (start {start} ns, deviceId {device}, correlationId {corr}, globalPid {broken})") in err


def test_a_launch_row_with_a_negative_thread_id_is_a_trace_error(synth_trace, tmp_path, capsys):
    """The one launch row of a kernel of the last occurrence with the sign bit of its globalTid set: the kernel
    was reported as 'no launch record in the trace (trimmed capture or CUDA graphs)', exit 0. The row is there,
    under an id no process has: refused (exit 4) naming table, column and row."""
    trace, _ = synth_trace()
    with sqlite3.connect(trace) as con:
        rowid, start, corr, tid = con.execute(
            "SELECT r.rowid, r.start, r.correlationId, r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
            "JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k ON k.correlationId = r.correlationId "
            "AND k.globalPid = r.globalTid - (r.globalTid % 16777216) "
            "WHERE (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS o WHERE o.correlationId = r.correlationId "
            "AND o.globalTid - (o.globalTid % 16777216) = k.globalPid) = 1 "
            "ORDER BY k.start DESC LIMIT 1").fetchone()
    broken = tid - 2 ** 63
    bad = copy_with(trace, tmp_path, f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = {broken} "
                                     f"WHERE rowid = {rowid}")
    code, err = run(job_on(bad, tmp_path), capsys)
    assert code == 4 and "Traceback" not in err, err
    assert (f"{bad}: CUPTI_ACTIVITY_KIND_RUNTIME.globalTid: the launch row of a kernel inside the selected occurrences "
            f"has a negative thread id (start {start} ns, correlationId {corr}, globalTid {broken})") in err
