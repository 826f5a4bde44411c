"""reports/index.md and index.html: every job of the output folder, with its headline figures or why it failed.

Built from the status records on disk (publish.record: one per job, failed or not) under
the output folder's lock, so two runs writing into one folder never lose each other's
entries, and a failed job is listed with its exit code and reason. A report folder from
before status records existed is still listed from its result.json. Links are relative,
so the folder can be moved or published as it is.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pipeline.report import publish, render


def entries(out_root: Path) -> list[dict[str, Any]]:
    """One row per job, sorted by the name shown (a nameless job's file name; then its path from the
    output folder): headline figures from its report, else its status record.

    A record made with `summary` holds the report's row: its result.json (which may be large: one
    row per occurrence) is then parsed once, when the job ran; later runs' indexes only hash it.
    """
    rows: dict[str, dict[str, Any]] = {}
    for rec in publish.read_records(out_root):
        if rec["status"] == "skipped":              # a base file (kind: base) is no job: nothing to list
            continue
        report = rec.get("report")
        row = None
        if report and rec["exit_code"] in (0, 1):
            row = _summarized(rec.get("summary"), out_root / report) or _from_result(out_root / report)
        rows[rec["name"] or rec["job"]] = row or _failed(rec)       # a nameless job: its file, from out_root
    for path in sorted(out_root.glob("*/result.json")):
        if path.parent.name not in {r["folder"] for r in rows.values()}:
            row = _from_result(path.parent)
            if row is not None and row["name"] not in rows:
                rows[row["name"]] = row
    return [rows[k] for k in sorted(rows, key=lambda k: (rows[k]["name"], k))]     # by the name shown


def summary(row: dict[str, Any], result: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """What publish.record keeps of a finished job for the index: its report's row, and the SHA-256
    of the result.json that row was read from, so a report replaced since is read again. A digest, not
    a modification time: a rerun then leaves the same record, and a report folder under version
    control does not change when nothing in it did. Hashing is a plain read, far cheaper than parsing.
    `result`: the result that report was just written from (batch._job_row), so the row is taken from it
    rather than parsed back (30,000 occurrences: a 33 MB result.json read again, issue #33)."""
    if not row.get("report") or row["exit_code"] not in (0, 1):
        return None
    folder = Path(row["report"])
    digest = _digest(folder / "result.json")
    found = None if digest is None else _from_result(folder) if result is None else _row_of(result, folder)
    return None if found is None else {"result_sha256": digest, "row": found}


def _summarized(kept: dict[str, Any] | None, folder: Path) -> dict[str, Any] | None:
    """The record's row when its result.json is still the one it was read from. A row kept before rows
    counted warnings is read again from the result: taking it as 0 warnings listed a job "ok" whose
    report says "warnings: 1"."""
    if kept is None or kept.get("result_sha256") is None or "warnings" not in kept["row"] \
            or _digest(folder / "result.json") != kept["result_sha256"]:
        return None
    return {**kept["row"], "folder": folder.name}


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _from_result(folder: Path) -> dict[str, Any] | None:
    try:
        return _row_of(json.loads((folder / "result.json").read_text(encoding="utf-8")), folder)
    except (OSError, ValueError):
        return None       # not a report of ours: not listed rather than guessed


def _row_of(r: dict[str, Any], folder: Path) -> dict[str, Any] | None:
    try:
        return {"name": r["job"]["name"], "folder": folder.name, "status": r["status"], "exit_code": None,
                "reason": r["status_reason"] or "", "mfu_pct_wall": r["metrics"]["mfu_pct_wall"],
                "hfu_pct_wall": r["metrics"]["hfu_pct_wall"], "step_time_median_s": r["step_time"]["median_s"],
                "tokens_per_s": r["metrics"]["tokens_per_s"], "gpus": r["hardware"]["num_gpus"],
                "gpu": r["hardware"]["gpu"], "precision": r["hardware"]["precision"],
                "straggler_s": (r.get("straggler") or {}).get("total_s"),
                "failed_thresholds": [t["name"] for t in r["thresholds"] if t["passed"] is False],
                "thresholds": len(r["thresholds"]), "warnings": len(r["warnings"])}
    except (KeyError, TypeError):
        return None       # not a report of ours (or an older shape): not listed rather than guessed


def _failed(rec: dict[str, Any]) -> dict[str, Any]:
    """A job without a report of this run: its name (or job file), exit code and the first line of why.

    Paths are shown relative to the job file's folder (where its trace paths are relative to as
    well), so the page names no machine's folders and can be published as it is: publish.record
    keeps them so; a record from before it did holds the job file's absolute path, taken out here.
    """
    reason = (rec["reason"].splitlines() or [""])[0]
    if "job_path" in rec:
        reason = reason.replace(str(Path(rec["job_path"]).parent) + "/", "")
    return {"name": rec["name"] or Path(rec["job"]).name, "folder": None, "status": rec["status"],
            "exit_code": rec["exit_code"], "reason": reason,
            "mfu_pct_wall": None, "hfu_pct_wall": None, "step_time_median_s": None, "tokens_per_s": None,
            "gpus": None, "gpu": None, "precision": None, "straggler_s": None, "failed_thresholds": [],
            "thresholds": 0, "warnings": 0}


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The index's summary line, counted once for index.md and index.html: jobs in all; `failed`
    wrote no report, `invalid` wrote one that is no measurement, `missed` failed a threshold; `ok`
    is every other job, `warned` those of them with warnings (as render.job_verdict words each row)."""
    reported = [j for j in rows if j["folder"]]
    passed = [j for j in reported if j["status"] == "ok"]
    missed = sum(1 for j in passed if j["failed_thresholds"])
    return {"jobs": len(rows), "ok": len(passed) - missed, "missed": missed,
            "warned": sum(1 for j in passed if not j["failed_thresholds"] and j["warnings"]),
            "invalid": len(reported) - len(passed), "failed": len(rows) - len(reported)}


def write_index(out_root: Path) -> list[Path]:
    """Render and write index.md and index.html from what is on disk now, under the folder's lock."""
    with publish.locked(out_root):
        rows = entries(out_root)
        files = render.render_all({"jobs": rows, "counts": counts(rows)}, kind="index")
        return publish.write_files(out_root, {k: v for k, v in files.items() if k != "index.json"})
