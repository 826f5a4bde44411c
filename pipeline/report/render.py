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


def fmt_num(value: float | int | None, digits: int = 3) -> str:
    """Fixed decimals, thousands separators; an em dash for a missing figure."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.{digits}f}"


def fmt_int(value: int | None) -> str:
    return "—" if value is None else f"{int(value):,}"


def fmt_pct(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f} %"


def fmt_si(value: float | int | None, unit: str = "FLOP", digits: int = 3) -> str:
    """3.900e15 -> '3.900 PFLOP': readable magnitudes with the exact value kept in JSON."""
    if value is None:
        return "—"
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}f} {prefix}{unit}"
    return f"{value:.{digits}f} {unit}"


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 1:
        return f"{value:.4f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.4f} ms"
    return f"{value * 1e6:.3f} µs"


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
    env.globals.update(charts.GLOBALS, device_label=device_label)
    env.filters.update(num=fmt_num, int=fmt_int, pct=fmt_pct, si=fmt_si, sec=fmt_seconds, median_of=median_of)
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
