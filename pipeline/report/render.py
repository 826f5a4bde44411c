"""Reports from result.json via Jinja: Markdown, one self-contained HTML file, and the JSON itself.

Undefined variables are errors (StrictUndefined) and HTML is autoescaped. Writing the
files is publish.py's job: all of them rendered first, then swapped in at once.
"""

from __future__ import annotations

import json
from functools import lru_cache
import math
import statistics
from pathlib import Path
from typing import Any

import jinja2

from pipeline.report import charts, publish

_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
_TIME_UNITS = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]
NBSP = "\u00a0"          # between a number and its unit, so they never wrap apart
SIG = 4                   # significant digits shown by default; result.json keeps the exact values


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _decimals(value: float, sig: int = SIG, most: int = 6) -> int:
    """Decimals that show `value` with `sig` significant digits (never negative)."""
    if not value:
        return 0
    return max(0, min(most, sig - 1 - math.floor(math.log10(abs(value)))))


def fmt_num(value: float | int | None, digits: int | None = None) -> str:
    """Fixed decimals when given, else 4 significant digits; thousands separators; "—" when missing."""
    if _missing(value):
        return "—"
    return f"{value:,.{_decimals(value) if digits is None else digits}f}"


def fmt_int(value: int | None) -> str:
    return "—" if value is None else f"{int(value):,}"


def fmt_pct(value: float | None, digits: int = 2) -> str:
    return "—" if _missing(value) else f"{value:.{digits}f}{NBSP}%"


def _prefix(value: float) -> tuple[float, str]:
    return next(((s, p) for s, p in _PREFIXES if abs(value) >= s), (1.0, ""))


def fmt_si(value: float | int | None, unit: str = "FLOP") -> str:
    """3.900e15 -> '3.900 PFLOP': readable magnitudes with the exact value kept in JSON."""
    if _missing(value):
        return "—"
    scale, prefix = _prefix(value)
    return f"{value / scale:.{_decimals(value / scale)}f}{NBSP}{prefix}{unit}"


def _time_unit(value: float) -> tuple[float, str]:
    return next(((s, u) for s, u in _TIME_UNITS if abs(value) >= s), _TIME_UNITS[-1])


def fmt_seconds(value: float | None) -> str:
    """4 significant digits in the unit that fits: 1.102 s, 992.1 ms, 12.35 µs."""
    if _missing(value):
        return "—"
    scale, unit = _time_unit(value)
    return f"{value / scale:.{_decimals(value / scale)}f}{NBSP}{unit}"


class Column:
    """One unit for a whole table column, chosen from its typical value; the header names the unit
    and each cell is a bare number with 4 significant digits ("—" where no figure applies)."""

    def __init__(self, values: list[float | int | None], kind: str) -> None:
        present = sorted(abs(v) for v in values if not _missing(v) and v != 0)
        typical = present[len(present) // 2] if present else 0.0
        if kind == "s":
            self.scale, self.unit = _time_unit(typical or 1.0)
        elif kind in ("%", "n"):
            self.scale, self.unit = 1.0, kind.strip("n")
        else:
            self.scale, prefix = _prefix(typical)
            self.unit = prefix + kind

    def __call__(self, value: float | int | None) -> str:
        if _missing(value):
            return "—"
        return f"{value / self.scale:,.{_decimals(value / self.scale)}f}"

    def head(self, label: str) -> str:
        """The header text: "wall (ms)"."""
        return f"{label} ({self.unit})" if self.unit else label


def column(values: Any, kind: str = "n") -> Column:
    return Column(list(values), kind)


def verdict(r: dict[str, Any]) -> dict[str, str]:
    """The one-word summary shown beside MFU: invalid beats a failed threshold beats warnings."""
    failed = [t["name"] for t in r.get("thresholds", []) if not t["passed"]]
    if r["status"] != "ok":
        return {"css": "invalid", "text": r["status"], "why": r.get("status_reason") or ""}
    if failed:
        return {"css": "fail", "text": "threshold failed", "why": ", ".join(failed)}
    if r["warnings"]:
        return {"css": "warn", "text": f"warnings: {len(r['warnings'])}", "why": ""}
    return {"css": "ok", "text": "ok", "why": ""}


def processes(pids: list[Any], everyone: int) -> str:
    """A process list that does not fill the page: "all 8" when every process is in it."""
    if len(pids) == everyone and everyone > 1:
        return f"all{NBSP}{everyone}"
    if len(pids) <= 4:
        return ", ".join(map(str, pids))
    return f"{', '.join(map(str, pids[:3]))}, … ({len(pids)})"


def median_of(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def device_label(result: dict[str, Any], device_id: int) -> str:
    """The device as the device table names it: with several trace files the ids in result.json are
    combined keys, and only the label (file:device) tells the user which GPU it was."""
    return next((d["label"] for d in result["devices"] if d["device_id"] == device_id), str(device_id))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One environment per process, so templates compile once per batch, not once per job."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipeline.report", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals.update(charts.GLOBALS, device_label=device_label, column=column, verdict=verdict)
    env.filters.update(num=fmt_num, int=fmt_int, pct=fmt_pct, si=fmt_si, sec=fmt_seconds, median_of=median_of,
                       procs=processes)
    return env


def to_json(result: dict[str, Any]) -> str:
    """Deterministic JSON: sorted keys, no NaN (a NaN here is a bug, so it raises)."""
    return json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def render_all(result: dict[str, Any], kind: str = "report") -> dict[str, str]:
    """Every output file of one result, as text, keyed by file name."""
    env = environment()
    return {
        f"{kind}.md": env.get_template(f"{kind}.md.j2").render(r=result),
        f"{kind}.html": env.get_template(f"{kind}.html.j2").render(r=result),
        "result.json" if kind == "report" else f"{kind}.json": to_json(result),
    }


def write_files(folder: Path, files: dict[str, str]) -> list[Path]:
    """All-or-nothing per file, into a shared folder; see publish.write_files."""
    return publish.write_files(folder, files)
