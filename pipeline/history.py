"""History for scheduled runs: result rows appended per run, rendered as a trend per job.

Two forms, told apart by the path alone (see `is_folder`): a DuckDB file (`*.duckdb`),
or a folder holding one Parquet file per run (`run-000001.parquet`, ...), which suits
object stores and tools that read Parquet, and lets runs append at once without a
database lock. Rows are keyed by job name, config hash and trace hash, so a change of
config or trace is visible next to a change of MFU. Runs are numbered in order instead
of time-stamped, so the rendered history is byte-identical for the same rows, in
either form.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import duckdb

from pipeline.trace import queries
from pipeline.report import render
from pipeline.errors import UsageError

_RUN_FILE = re.compile(r"^run-(\d+)\.parquet$")


def is_folder(path: Path) -> bool:
    """The rule between the two forms: a name ending in .duckdb is a DuckDB file, anything else a folder.

    Decided by name, not by what exists, so the first `--history` run creates the
    form the user will get on every later run.
    """
    return path.suffix.lower() != ".duckdb"


def check(path: Path) -> None:
    """Refuse a path that breaks the rule before any job runs, not after the batch."""
    if is_folder(path) and path.exists() and not path.is_dir():
        raise UsageError(f"{path}: is a file, but a history path not ending in .duckdb is a folder of "
                         "Parquet files; give a folder, or a DuckDB file named *.duckdb")


def append(path: Path, results: list[dict[str, Any]]) -> int:
    """Append one run (all its jobs' results) as the next run number; return that number."""
    check(path)
    return _append_folder(path, results) if is_folder(path) else _append_db(path, results)


def _append_db(db: Path, results: list[dict[str, Any]]) -> int:
    try:
        con = duckdb.connect(str(db))
    except duckdb.Error as exc:
        raise UsageError(f"{db}: cannot open as a DuckDB history file ({exc})") from None
    try:
        exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'history'").fetchone()[0]
        run = (con.execute("SELECT coalesce(max(run), 0) FROM history").fetchone()[0] if exists else 0) + 1
        _insert(con, run, results)
    finally:
        con.close()
    return run


def _append_folder(folder: Path, results: list[dict[str, Any]]) -> int:
    """Write the run to a hidden temp file, then hard-link it to the next free run-N.parquet.

    A link fails if the name exists, so two runs appending at once never share a
    number or overwrite a file: the loser rewrites its rows with the next number.
    A run without results writes nothing, as in a DuckDB file, so numbering agrees.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot create the history folder ({exc.strerror})") from None
    run = max(_runs(folder), default=0) + 1
    while results:
        fd, name = tempfile.mkstemp(prefix=".run-", suffix=".tmp", dir=folder)
        os.close(fd)
        tmp = Path(name)
        try:
            with duckdb.connect() as con:
                _insert(con, run, results)
                con.table("history").write_parquet(str(tmp))
            os.link(tmp, folder / f"run-{run:06d}.parquet")
            break
        except FileExistsError:
            run += 1
        except OSError as exc:
            raise UsageError(f"{folder}: cannot add run-{run:06d}.parquet ({exc.strerror}); a history "
                             "folder needs a file system with hard links, else use a *.duckdb file") from None
        finally:
            tmp.unlink(missing_ok=True)
    return run


def _runs(folder: Path) -> dict[int, Path]:
    """Run number -> file, for the files this module names; temp files and others are ignored."""
    found = {int(m.group(1)): p for p in folder.iterdir() if (m := _RUN_FILE.match(p.name))}
    return dict(sorted(found.items()))


def _insert(con: duckdb.DuckDBPyConnection, run: int, results: list[dict[str, Any]]) -> None:
    for r in results:
        queries.run(con, "history_append", run=run, job=r["job"]["name"],
                    config_sha256=r["job"]["config_sha256"], trace_sha256=r["trace"]["sha256"],
                    status=r["status"], mfu_pct_wall=r["metrics"]["mfu_pct_wall"],
                    hfu_pct_wall=r["metrics"]["hfu_pct_wall"], step_time_median_s=r["step_time"]["median_s"],
                    tokens_per_s=r["metrics"]["tokens_per_s"],
                    straggler_s=(r.get("straggler") or {}).get("total_s"))


def trend(path: Path) -> dict[str, Any]:
    """Per job, its runs in order (history.json); the templates format it, chart() draws it."""
    con = _open(path)
    try:
        rows = queries.run(con, "history_trend")
    except duckdb.Error as exc:
        raise UsageError(f"{path}: not an mfu history ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()
    jobs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        jobs.setdefault(r["job"], []).append(r)
    return {"jobs": [{"name": n, "runs": runs, "chart_mfu": chart(runs, "mfu_pct_wall", "MFU (wall) %"),
                      "chart_step": chart(runs, "step_time_median_s", "step time (median) s")}
                     for n, runs in sorted(jobs.items())]}


def _open(path: Path) -> duckdb.DuckDBPyConnection:
    """A connection holding a `history` table or view, from either form."""
    hint = f"(create one with `mfu run ... --history {path}`)"
    if not is_folder(path):
        if not path.is_file():
            raise UsageError(f"{path}: no history file {hint}")
        try:
            return duckdb.connect(str(path), read_only=True)
        except duckdb.Error as exc:
            raise UsageError(f"{path}: not a DuckDB history file ({str(exc).splitlines()[0]})") from None
    check(path)
    files = list(_runs(path).values()) if path.is_dir() else []
    if not files:
        raise UsageError(f"{path}: no history folder with run-*.parquet files {hint}")
    con = duckdb.connect()
    try:
        queries.run(con, "history_load", files=[str(f) for f in files])
    except duckdb.Error as exc:
        con.close()
        raise UsageError(f"{path}: not an mfu history folder ({str(exc).splitlines()[0]})") from None
    return con


def chart(runs: list[dict[str, Any]], key: str, title: str, w: int = 480, h: int = 160) -> str:
    """A small self-contained SVG line chart of one figure over the runs (no scripts, no fonts)."""
    points = [(r["run"], r[key]) for r in runs if r[key] is not None]
    if not points:
        return ""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    lo, hi = min(ys), max(ys) if max(ys) > min(ys) else min(ys) + abs(min(ys) or 1) * 0.01
    px = [(40 + (x - x0) / (x1 - x0) * (w - 60), h - 25 - (y - lo) / (hi - lo) * (h - 50)) for x, y in points]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in px)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3"/>' for x, y in px)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'role="img" aria-label="{title}"><text x="40" y="14" font-size="12">{title}: '
            f'{lo:.4g} to {hi:.4g}, runs {x0} to {max(xs)}</text>'
            f'<polyline fill="none" stroke="#0b5cad" stroke-width="2" points="{path}"/>'
            f'<g fill="#0b5cad">{dots}</g></svg>')


def write(path: Path, out: Path) -> list[Path]:
    """history.md, history.html (charts inline) and history.json in `out`."""
    return render.write_files(out, render.render_all(trend(path), kind="history"))
