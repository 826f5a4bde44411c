"""History for scheduled runs: result rows appended to a DuckDB file, rendered as a trend per job.

Rows are keyed by job name, config hash and trace hash, so a change of config or
trace is visible next to a change of MFU. Runs are numbered in order instead of
time-stamped, so the rendered history is byte-identical for the same database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from . import queries, render
from .errors import UsageError


def append(db: Path, results: list[dict[str, Any]]) -> int:
    """Append one run (all its jobs' results) as the next run number; return that number."""
    try:
        con = duckdb.connect(str(db))
    except duckdb.Error as exc:
        raise UsageError(f"{db}: cannot open as a DuckDB history file ({exc})") from None
    try:
        exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'history'").fetchone()[0]
        run = (con.execute("SELECT coalesce(max(run), 0) FROM history").fetchone()[0] if exists else 0) + 1
        for r in results:
            queries.run(con, "history_append", run=run, job=r["job"]["name"],
                        config_sha256=r["job"]["config_sha256"], trace_sha256=r["trace"]["sha256"],
                        status=r["status"], mfu_pct_wall=r["metrics"]["mfu_pct_wall"],
                        hfu_pct_wall=r["metrics"]["hfu_pct_wall"], step_time_median_s=r["step_time"]["median_s"],
                        tokens_per_s=r["metrics"]["tokens_per_s"],
                        straggler_s=(r.get("straggler") or {}).get("total_s"))
    finally:
        con.close()
    return run


def trend(db: Path) -> dict[str, Any]:
    """Per job, its runs in order (history.json); the templates format it, chart() draws it."""
    if not db.is_file():
        raise UsageError(f"{db}: no history file (create one with `mfu run ... --history {db}`)")
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = queries.run(con, "history_trend")
    except duckdb.Error as exc:
        raise UsageError(f"{db}: not an mfu history database ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()
    jobs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        jobs.setdefault(r["job"], []).append(r)
    return {"jobs": [{"name": n, "runs": runs, "chart_mfu": chart(runs, "mfu_pct_wall", "MFU (wall) %"),
                      "chart_step": chart(runs, "step_time_median_s", "step time (median) s")}
                     for n, runs in sorted(jobs.items())]}


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


def write(db: Path, out: Path) -> list[Path]:
    """history.md, history.html (charts inline) and history.json in `out`."""
    return render.write_files(out, render.render_all(trend(db), kind="history"))
