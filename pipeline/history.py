"""History for scheduled runs: result rows appended per run, rendered as a trend per job.

Two forms, told apart by the path alone (see `is_folder`): a DuckDB file (`*.duckdb`),
or a folder holding one Parquet file per run (`run-000001.parquet`, ...), which suits
object stores and tools that read Parquet, and lets runs append at once without a
database lock. Rows are keyed by job name, config hash and trace hash, so a change of
config or trace is visible next to a change of MFU. Runs are numbered in order instead
of time-stamped, so the rendered history is byte-identical for the same rows, in
either form.

Concurrent appends never lose a row. A folder takes them at once (each run hard-links its own file). A DuckDB
file is held by one process at a time (DuckDB's file lock): a run finding it held retries with backoff for up
to LOCK_WAIT_S (`_connect_waiting`) and numbers its run while it holds the lock; readers wait the same way.

Format 2 stores with each row the run's optional label (e.g. a commit)
and the per-occurrence samples, and marks the row with the format it was written in;
`table_version` tells a format from the columns. A format-1 DuckDB file is migrated in
place when a run is appended, and in memory when it is read; format-1 Parquet files are
read as they are. Within format 2 a nullable column may be added (the job's MFU threshold,
`mfu_pct_wall_min`, for the charts' threshold line): it is no part of what tells a format, and
history_migrate.sql adds it, NULL, to a table written before it existed. Between a run of a job and
its previous valid run (an invalid one is no measurement) the same noise-aware test as the compare
gate (pipeline/gate.py) flags the run where MFU or step time changed.

Format 3 stores with each row the inputs `mfu compare` decides comparability on (compare.inputs_of),
and the trend applies compare's rules to them (compare.input_reasons) before testing a figure: a change
of batch, precision, GPUs, model or scope makes the figures resting on it "not comparable", never a
regression or improvement, and that run is the one the next is compared with. Rows written before
format 3 (migrated) have no inputs: unknown, so their figures are not comparable, as compare treats an
unknown input. An older mfu-pipeline refuses to read a format-3 history, and to append to a DuckDB file
of it (`check`); to a folder it appended its own runs (no file was read to append), rows without inputs that
a newer one reads as it reads migrated ones. `check` reads a folder's runs too (format 4 on): a newer
format, or run files that are no history, are refused before any job runs, as a DuckDB file's table.

Within format 4, `what_ran` (nullable, NULL before it) keeps what a flagged change is decomposed from
(changes.what_ran: step parts, top kernels, devices), so the history says where a step-time change went.

Format 4 also records the jobs of a run that failed without a result (`failures_of`: status 'failed', the
exit code, the error's first line, the config and trace hashes when known), so a job broken for a week reads
as failing, not as not scheduled. A failed run, like an invalid one, is no change and no baseline. An older
mfu-pipeline would take it for a baseline (it skips 'invalid' rows only), hence the new format it refuses
to read (an older one appending to a folder adds format-3 rows, which hold no failure to misread).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from pipeline import changes, compare, gate
from pipeline.trace import queries
from pipeline.trace.connection import duckdb_connect
from pipeline.report import publish, render
from pipeline.errors import ExitCode, UsageError, io_reason

_RUN_FILE = re.compile(r"^run-(\d+)\.parquet$")
FORMAT_VERSION = 4
# The columns of format 1 (before versioning): a table holding them, and no format-2 column, is format 1.
V1_COLUMNS = ("run", "job", "config_sha256", "trace_sha256", "status", "mfu_pct_wall", "hfu_pct_wall",
              "step_time_median_s", "tokens_per_s", "straggler_s")
V2_COLUMNS = V1_COLUMNS + ("label", "samples_field", "step_samples_s", "mfu_samples_pct", "format_version")
DEFAULT_MIN_CHANGE_PCT = 5.0
# Runs per job that history.json and the pages give in full, tested for changes: the latest. Older ones are
# summarised from SQL (history_older.sql: how many, their run numbers, MFU range); the history file keeps them all.
# 100,000 runs given in full took minutes: a 158 MB history.json, a test and a table row each (issue #33).
RECENT_RUNS = 100
# The figures the trend tests, with compare's label and direction and the inputs compare says they rest on.
TESTED = {m[0]: m for m in compare.METRICS if m[0] in ("mfu_pct_wall", "step_time_median_s")}


def is_folder(path: Path) -> bool:
    """The rule between the two forms: a name ending in .duckdb is a DuckDB file, anything else a folder.

    Decided by name, not by what exists, so the first `--history` run creates the
    form the user will get on every later run.
    """
    return path.suffix.lower() != ".duckdb"


def check(path: Path) -> None:
    """Refuse a path that breaks the rule, or a history this version cannot append to (no history, a newer
    format), before any job runs, not after the batch: a folder's runs as a file's table."""
    if is_folder(path):
        _not_a_file(path)
        if path.is_dir() and _runs(path):
            _open(path)[0].close()
    elif path.is_file():                                # a table in another format: refused now, not after the jobs
        try:
            con = _connect_waiting(path, read_only=True)
        except duckdb.Error as exc:
            raise _not_duckdb(path, exc) from None
        try:
            if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'history'").fetchall()[0][0]:
                version = table_version(con)
                if version is None or version > FORMAT_VERSION:
                    _require_version(con, path, None)
        finally:
            con.close()


def _not_duckdb(path: Path, exc: duckdb.Error) -> UsageError:
    """A *.duckdb path DuckDB cannot open: an SQLite file is named as one (DuckDB's own words would name the
    scanner extension it did not load), anything else with DuckDB's first line."""
    with open(path, "rb") as fh:
        sqlite = fh.read(16) == b"SQLite format 3\x00"
    why = "it holds an SQLite database" if sqlite else str(exc).splitlines()[0]
    return UsageError(f"{path}: not a DuckDB history file ({why}); give a history written by `mfu run --history`")


def _not_a_file(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path}: is a file, but a history path not ending in .duckdb is a folder of "
                         "Parquet files; give a folder, or a DuckDB file named *.duckdb")


def append(path: Path, results: list[dict[str, Any]], label: str | None = None,
           failures: list[dict[str, Any]] | None = None) -> int:
    """Append one run (all its jobs' results and failures, with an optional label) as the next run number;
    return it. A failure is a dict as `failures_of` makes it."""
    check(path)
    rows = (results, failures or [], label)
    return _append_folder(path, *rows) if is_folder(path) else _append_db(path, *rows)


def failures_of(rows: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """The jobs of a batch (batch rows) that ended without a result, as history rows: job name, exit code,
    the error's first line (paths relative to the job file's folder, as the index says them), config and
    trace hashes when known. `names`: each row's name as the run's summary gives it (batch.job_names): a job
    file that did not load by the name it gives itself unless a job of the run has that name (two rows of one
    job in one run), else by its file's name, the same from whichever folder it is run."""
    return [{"job": name, "exit_code": row["exit_code"], "error": _one_line(row),
             "config_sha256": row.get("config_sha256"), "trace_sha256": row.get("trace_sha256")}
            for row, name in zip(rows, names) if "metrics" not in row and row["status"] != "skipped"]


def _one_line(row: dict[str, Any]) -> str:
    """The first line of the error (of a traceback, its last: the exception), saying how many more there are."""
    lines = [ln for ln in publish.job_relative(row["reason"], Path(row["job"])).strip().splitlines() if ln.strip()]
    if not lines:
        return row["status"]
    first, more = (lines[-1], 0) if row["exit_code"] == ExitCode.INTERNAL else (lines[0], len(lines) - 1)
    return first.strip() + (f" (+{more} more line{'s' if more > 1 else ''})" if more else "")


def table_version(con: duckdb.DuckDBPyConnection, database: str | None = None) -> int | None:
    """The format of the table `history` in `database` (default: the connection's own; 'temp' for a
    loaded copy): FORMAT_VERSION or an older one, or None when there is no such table or it is no
    mfu history. The check for any caller that must refuse a table it cannot read."""
    db = database or con.execute("SELECT current_database()").fetchall()[0][0]
    columns = {r["column_name"] for r in queries.run(con, "history_columns", database=db)}
    if not columns or not set(V1_COLUMNS) <= columns:
        return None
    if "format_version" not in columns:
        return 1 if not columns & set(V2_COLUMNS[len(V1_COLUMNS):]) else None
    if not set(V2_COLUMNS) <= columns:
        return None
    found = queries.run(con, "history_version")[0]["version"]      # a loaded copy shadows the file's table
    return FORMAT_VERSION if found is None else int(found)


def _append_db(db: Path, results: list[dict[str, Any]], failures: list[dict[str, Any]], label: str | None) -> int:
    try:
        con = _connect_waiting(db, read_only=False)
    except duckdb.Error as exc:
        raise UsageError(f"{db}: cannot open as a DuckDB history file ({exc})") from None
    try:
        exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'history'").fetchall()[0][0]
        if exists:
            _require_version(con, db, None)
        run = (con.execute("SELECT coalesce(max(run), 0) FROM history").fetchall()[0][0] if exists else 0) + 1
        _insert(con, run, results, failures, label)
    finally:
        con.close()
    return run


LOCK_WAIT_S = 300.0         # another run appending holds the file for well under a second; a stuck one is named


def _connect_waiting(db: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """The history file opened once no other process holds DuckDB's lock on it: four runs appending at once got
    "Conflicting lock is held" and lost their rows. Retried with exponential backoff (50 ms doubling to 2 s,
    jittered so waiting runs do not retry in step) for up to LOCK_WAIT_S; the writer's own transaction numbers
    the run (max(run) + 1) while it holds the lock, so every run gets its own number and no row is lost."""
    deadline, delay = time.monotonic() + LOCK_WAIT_S, 0.05
    if not read_only:
        _create_whole(db)
    while True:
        try:
            return duckdb_connect(str(db), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 2, 2.0)


def _create_whole(db: Path) -> None:
    """A new history file appears whole: made under a temporary name beside it and hard-linked into place (which
    fails if another run's is there first), so a run opening it meanwhile never reads a half-written header
    ("exists, but it is not a valid DuckDB database file": 4 in 150 tries of four runs creating one file at
    once). Where the file system has no hard links, DuckDB creates it in place as before."""
    if db.exists():
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{db.name}.", suffix=".new", dir=db.parent)
    except OSError:
        return                                  # the folder's own problem: the connect names it
    os.close(fd)
    os.unlink(tmp)                              # DuckDB makes the file itself
    try:
        duckdb_connect(tmp).close()
        with contextlib.suppress(FileExistsError):
            os.link(tmp, db)
    except (OSError, duckdb.Error):
        pass                                    # no hard links here, or no room: the connect in place says why
    finally:
        for leftover in (tmp, tmp + ".wal"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


def _require_version(con: duckdb.DuckDBPyConnection, path: Path, database: str | None) -> int:
    """The table's format, migrating an older table to the current columns; a table that is no history is refused."""
    version = table_version(con, database)
    if version is None:
        held = "run-*.parquet files" if is_folder(path) else "`history` table"     # a folder has no table
        raise UsageError(f"{path}: not an mfu history (the columns of its {held} match no history "
                         f"format 1-{FORMAT_VERSION}); give another history path")
    if version > FORMAT_VERSION:
        raise UsageError(f"{path}: history format {version} is newer than this mfu-pipeline reads "
                         f"({FORMAT_VERSION}); upgrade mfu-pipeline")
    queries.run(con, "history_migrate")          # adds only missing columns: format 1, or format 2 before a column
    return version


def _append_folder(folder: Path, results: list[dict[str, Any]], failures: list[dict[str, Any]],
                   label: str | None) -> int:
    """Write the run to a hidden temp file, then hard-link it to the next free run-N.parquet.

    A link fails if the name exists, so two runs appending at once never share a
    number or overwrite a file: the loser rewrites its rows with the next number.
    A run without results or failures writes nothing, as in a DuckDB file, so numbering agrees.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot create the history folder ({exc.strerror})") from None
    run = max(_runs(folder), default=0) + 1
    while results or failures:
        fd, name = tempfile.mkstemp(prefix=".run-", suffix=".tmp", dir=folder)
        os.close(fd)
        tmp = Path(name)
        try:
            try:
                with duckdb_connect() as con:
                    _insert(con, run, results, failures, label)
                    con.table("history").write_parquet(str(tmp))
            except duckdb.IOException as exc:     # a full disk: DuckDB's error, not an OSError
                raise UsageError(f"{folder}: cannot write run-{run:06d}.parquet ({io_reason(exc)}); the earlier "
                                 "runs are unchanged") from None
            os.link(tmp, folder / f"run-{run:06d}.parquet")
            break
        except FileExistsError:
            run += 1
        except OSError as exc:
            raise UsageError(f"{folder}: cannot add run-{run:06d}.parquet ({exc.strerror}); a history "
                             "folder needs a file system with hard links, else use a *.duckdb file") from None
        finally:
            for left in (tmp, tmp.with_name("tmp_" + tmp.name)):     # DuckDB writes under tmp_<name>, then renames
                left.unlink(missing_ok=True)
    return run


def _runs(folder: Path) -> dict[int, Path]:
    """Run number -> file, for the files this module names; temp files and others are ignored."""
    found = {int(m.group(1)): p for p in folder.iterdir() if (m := _RUN_FILE.match(p.name))}
    return dict(sorted(found.items()))


def _insert(con: duckdb.DuckDBPyConnection, run: int, results: list[dict[str, Any]], failures: list[dict[str, Any]],
            label: str | None) -> None:
    for r in results:
        field, steps = gate.step_samples(r)
        queries.run(con, "history_append", run=run, job=r["job"]["name"],
                    config_sha256=r["job"]["config_sha256"], trace_sha256=r["trace"]["sha256"],
                    status=r["status"], mfu_pct_wall=r["metrics"]["mfu_pct_wall"],
                    hfu_pct_wall=r["metrics"]["hfu_pct_wall"], step_time_median_s=r["step_time"]["median_s"],
                    tokens_per_s=r["metrics"]["tokens_per_s"],
                    straggler_s=(r.get("straggler") or {}).get("total_s"), label=label,
                    samples_field=field if steps else None, step_samples_s=steps or None,
                    mfu_samples_pct=gate.mfu_samples(r) or None, format_version=FORMAT_VERSION,
                    mfu_pct_wall_min=next((t["limit"] for t in r.get("thresholds") or []
                                           if t["name"] == "mfu_pct_wall_min"), None),
                    comparability_inputs=json.dumps(compare.inputs_of(r), sort_keys=True), exit_code=None,
                    error=None, what_ran=json.dumps(changes.what_ran(r), sort_keys=True))
    for f in failures:                    # no figures, samples or inputs: NULL, as in history_append.sql
        queries.run(con, "history_append", run=run, job=f["job"], config_sha256=f["config_sha256"],
                    trace_sha256=f["trace_sha256"], status="failed", label=label, format_version=FORMAT_VERSION,
                    exit_code=f["exit_code"], error=f["error"],
                    **dict.fromkeys(("mfu_pct_wall", "hfu_pct_wall", "step_time_median_s", "tokens_per_s",
                                     "straggler_s", "samples_field", "step_samples_s", "mfu_samples_pct",
                                     "mfu_pct_wall_min", "comparability_inputs", "what_ran")))


def trend(path: Path, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT) -> dict[str, Any]:
    """Per job, its latest RECENT_RUNS runs in order with the changes found between consecutive runs, and a
    summary of its older runs (history.json); the templates format it, report/charts.py draws it."""
    con, version = _open(path)
    try:
        rows = queries.run(con, "history_trend", recent=RECENT_RUNS)
        older = {o.pop("job"): o for o in queries.run(con, "history_older", recent=RECENT_RUNS)}
    except duckdb.Error as exc:
        raise UsageError(f"{path}: not an mfu history ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()
    jobs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        try:
            jobs.setdefault(r["job"], []).append(_with_changes(r, min_change_pct))
        except DamagedRow as exc:
            raise UsageError(f"{path}: run {r['run']} of job '{r['job']}' is damaged ({exc}, or a run compared "
                             "with it); a history is written only by `mfu run --history`: restore it from a "
                             "copy, or remove that run's rows") from None
    return {"format_version": version, "min_change_pct": min_change_pct, "alpha": gate.ALPHA,
            "min_samples": gate.MIN_SAMPLES,
            "recent_runs": RECENT_RUNS,
            "jobs": [{"name": n, "runs": runs, "flagged_runs": [r["run"] for r in runs if r["flag"]],
                      "failed_runs": [r["run"] for r in runs if r["status"] == "failed"], "older": older.get(n)}
                     for n, runs in sorted(jobs.items())]}


def _with_changes(r: dict[str, Any], min_change_pct: float) -> dict[str, Any]:
    """A trend row with the noise-aware changes of MFU and step time since the job's previous valid run,
    each tested only when compare's rules find it comparable with that run."""
    out = {k: v for k, v in r.items() if not k.startswith("previous_") and k not in ("comparability_inputs", "what_ran")}
    out["inputs"] = _stored_inputs(r["comparability_inputs"])
    out["compared_with_run"] = r["previous_run"]
    out["changes"], out["not_comparable"] = [], []
    if r["previous_config_sha256"] is not None and r["status"] not in ("invalid", "failed"):
        out["not_comparable"] = _not_comparable(r["comparability_inputs"], r["previous_comparability_inputs"])
        refused = {m for g in out["not_comparable"] for m in g["metrics"]}
        for metric, change, now, before in (
                ("mfu_pct_wall", r["mfu_change_pct"], r["mfu_samples_pct"], r["previous_mfu_samples_pct"]),
                ("step_time_median_s", r["step_change_pct"], r["step_samples_s"], r["previous_step_samples_s"])):
            if change is None or metric in refused:
                continue
            _, label, _, _, better, _ = TESTED[metric]
            d = gate.detect(change, better, min_change_pct, now or [], before or [], r["samples_field"] or "no",
                            metric=metric)
            if d["outcome"] != "none":
                out["changes"].append({"metric": metric, "label": label, "change_pct": change,
                                       "verdict": d["verdict"], "outcome": d["outcome"], "test": d["test"],
                                       "detail": d["detail"]})
    found = {c["outcome"] for c in out["changes"]}
    out["flag"] = next((f for f in ("regression", "improvement", "undecided") if f in found), None)
    out["what_changed"] = _what_changed(r, out) if out["flag"] else None
    for what in ("config", "trace"):         # a hash a failed run did not learn is no change
        now, before = r[f"{what}_sha256"], r[f"previous_{what}_sha256"]
        out[f"{what}_changed"] = None not in (now, before) and now != before
    if out["config_changed"] and r["trace_sha256"] is not None and r["trace_sha256"] == r["previous_trace_sha256"]:
        # nothing was measured again: the job file made the change (the pages say so where config_changed and
        # not trace_changed)
        for c in out["changes"]:
            c["detail"] += (f"; the trace is the one of run {r['previous_run']} and the job file changed, so the "
                            "change comes from the job file (its FLOPs, GPUs or peak), not from a new measurement")
    return out


def _what_changed(r: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """A flagged run's step-time change since the run it is compared with, decomposed as `mfu compare` does
    (changes.decompose, docs/compare.md); not where the step time is not comparable or a run predates what_ran."""
    refused = [reason for g in out["not_comparable"] if "step_time_median_s" in g["metrics"] for reason in g["reasons"]]
    if r["what_ran"] is None or r["previous_what_ran"] is None:
        return {"available": False, "reason": "a run stored before the history kept what ran (what_ran)"}
    return changes.decompose(json.loads(r["previous_what_ran"]), json.loads(r["what_ran"]), refused)


class DamagedRow(ValueError):
    """A stored value that is not what mfu writes: the history file was edited or damaged."""


def _stored_inputs(text: str | None) -> dict[str, Any] | None:
    """A row's comparability inputs as stored (a JSON object), None when the row has none (before format 3)."""
    if text is None:
        return None
    try:
        inputs = json.loads(text)
    except (ValueError, RecursionError):
        raise DamagedRow("its comparability inputs are not JSON") from None
    if not isinstance(inputs, dict):
        raise DamagedRow("its comparability inputs are not a JSON object")
    return inputs


def _not_comparable(now: str | None, before: str | None) -> list[dict[str, Any]]:
    """The tested figures compare's rules refuse between a run and its previous valid run, grouped by the
    same reasons (as compare.json's not_comparable); a run stored before format 3 has no inputs: unknown."""
    if now is None or before is None:
        side = "both" if now is None and before is None else "this run" if now is None else "the baseline"
        reasons_of = {m: [f"comparability inputs unknown ({side}: stored before history format 3)"]
                      for m in TESTED}
    else:
        reasons_of = {m: compare.input_reasons(needs, _stored_inputs(before) or {}, _stored_inputs(now) or {})
                      for m, (*_, needs) in TESTED.items() if needs is not None}    # both rest on inputs
    return [{"metrics": metrics, "figures": [TESTED[m][1] for m in metrics], "reasons": list(reasons)}
            for reasons, metrics in compare.by_reasons(reasons_of.items()).items()]


def _open(path: Path) -> tuple[duckdb.DuckDBPyConnection, int]:
    """A connection holding the history as a temporary `history` table of the current format, from either
    form, and the format it was stored in. The user's file is opened read-only and never migrated here."""
    hint = f"(create one with `mfu run ... --history {path}`)"
    if not is_folder(path):
        if not path.is_file():
            raise UsageError(f"{path}: no history file {hint}")
        try:
            con = _connect_waiting(path, read_only=True)
        except duckdb.Error as exc:
            raise _not_duckdb(path, exc) from None
        load, params = "history_copy", {}
    else:
        _not_a_file(path)
        files = list(_runs(path).values()) if path.is_dir() else []
        if not files:
            raise UsageError(f"{path}: no history folder with run-*.parquet files {hint}")
        con, load, params = duckdb_connect(), "history_load", {"files": [str(f) for f in files]}
    try:
        queries.run(con, load, **params)
        return con, _require_version(con, path, "temp")
    except duckdb.Error as exc:
        con.close()
        raise UsageError(f"{path}: not an mfu history ({str(exc).splitlines()[0]})") from None
    except UsageError:
        con.close()
        raise


def write(path: Path, out: Path, min_change_pct: float = DEFAULT_MIN_CHANGE_PCT) -> dict[str, Any]:
    """history.md, history.html (charts inline) and history.json in `out`; returns the document."""
    doc = trend(path, min_change_pct)
    render.write_files(out, render.render_all(doc, kind="history"))
    return doc
