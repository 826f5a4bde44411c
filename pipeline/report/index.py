"""reports/index.md and index.html: every job report in the output folder with its headline figures.

Built from the result.json files present (not only this run's), so a folder that
collects scheduled runs always has one page linking all of them. Links are
relative, so the folder can be moved or published as it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.report import render


def entries(out_root: Path) -> list[dict[str, Any]]:
    """One row per report folder holding a readable result.json, by job name."""
    rows = []
    for path in sorted(out_root.glob("*/result.json")):
        try:
            r = json.loads(path.read_text(encoding="utf-8"))
            rows.append({"name": r["job"]["name"], "folder": path.parent.name, "status": r["status"],
                         "mfu_pct_wall": r["metrics"]["mfu_pct_wall"], "hfu_pct_wall": r["metrics"]["hfu_pct_wall"],
                         "step_time_median_s": r["step_time"]["median_s"], "tokens_per_s": r["metrics"]["tokens_per_s"],
                         "gpus": r["hardware"]["num_gpus"], "gpu": r["hardware"]["gpu"],
                         "precision": r["hardware"]["precision"],
                         "straggler_s": (r.get("straggler") or {}).get("total_s"),
                         "failed_thresholds": [t["name"] for t in r["thresholds"] if not t["passed"]]})
        except (OSError, ValueError, KeyError, TypeError):
            continue      # not a report of ours (or an older shape): not listed rather than guessed
    return rows


def write_index(out_root: Path) -> list[Path]:
    """Render and write index.md and index.html (all or nothing)."""
    files = render.render_all({"jobs": entries(out_root)}, kind="index")
    return render.write_files(out_root, {k: v for k, v in files.items() if k != "index.json"})
