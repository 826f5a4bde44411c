"""Numbers as reports print them: 4 significant digits, one unit per table column, "—" for none.

A no-break space joins each number to its unit so they never wrap apart; result.json keeps
the exact values. Shared by the templates (render.py) and the charts (charts.py).
"""

from __future__ import annotations

import math
from typing import Any

from pipeline.checks.plausibility import PCT_LIMIT

_PREFIXES = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
_TIME_UNITS = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]
NBSP = "\u00a0"          # between a number and its unit, so they never wrap apart
SIG = 4                   # significant digits shown by default; result.json keeps the exact values


def _present(value: float | None) -> float | None:
    """The value, or None where no figure applies (None or NaN): the functions below print "—" for it."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _decimals(value: float, sig: int = SIG, most: int = 6) -> int:
    """Decimals that show `value` with `sig` significant digits (never negative)."""
    if not value:
        return 0
    return max(0, min(most, sig - 1 - math.floor(math.log10(abs(value)))))


def fmt_num(value: float | int | None, digits: int | None = None) -> str:
    """Fixed decimals when given, else 4 significant digits; thousands separators; "—" when missing."""
    if (v := _present(value)) is None:
        return "—"
    return f"{v:,.{_decimals(v) if digits is None else digits}f}"


def fmt_against(value: float | None, limit: float, digits: int | None = None) -> str:
    """A threshold's value as fmt_num writes it, with more decimals where that would read as the limit it
    failed or passed: 32.349 against a limit of 32.35 is '32.349', not '32.35' beside a FAIL."""
    if (v := _present(value)) is None:
        return "—"
    decimals = _decimals(v) if digits is None else digits
    while v != limit and float(f"{v:.{decimals}f}") == limit and decimals < 15:
        decimals += 1
    return fmt_num(v, decimals)


def fmt_util(value: float | None, digits: int = 2) -> str:
    """A per-occurrence or per-rank MFU/HFU cell: above 100 % it is marked, so a row that is no
    measurement is not read as one (docs/figures.md §6; the table's note and the warning say why)."""
    if (v := _present(value)) is None:
        return "—"
    text = _tiny(v, digits) or fmt_num(v, digits)
    return text if v <= PCT_LIMIT else f"{text}{NBSP}⚠"


def _tiny(value: float, digits: int) -> str | None:
    """'<0.01' for a positive share that the decimals would show as 0.00: an MFU of 0.0015 %
    printed as '0.00' reads as no work at all."""
    return f"<{10 ** -digits:.{digits}f}" if 0 < value < 0.5 * 10 ** -digits else None


def fmt_fraction_pct(value: float | None, digits: int | None = None) -> str:
    """A share result.json keeps as a fraction (0-1) written as the percentage a table column headed "(%)"
    shows: 0.4567 -> '45.67'; "—" when missing. Only the unit changes, as a time's does in fmt_seconds."""
    return fmt_num(None if (v := _present(value)) is None else v * 100, digits)


def fmt_int(value: int | None) -> str:
    return "—" if value is None else f"{int(value):,}"


def fmt_pct(value: float | None, digits: int = 2) -> str:
    return "—" if (v := _present(value)) is None else f"{_tiny(v, digits) or f'{v:.{digits}f}'}{NBSP}%"


def _prefix(value: float) -> tuple[float, str]:
    return next(((s, p) for s, p in _PREFIXES if abs(value) >= s), (1.0, ""))


def fmt_si(value: float | int | None, unit: str = "FLOP") -> str:
    """3.900e15 -> '3.900 PFLOP': readable magnitudes with the exact value kept in JSON."""
    if (v := _present(value)) is None:
        return "—"
    scale, prefix = _prefix(v)
    return f"{v / scale:.{_decimals(v / scale)}f}{NBSP}{prefix}{unit}"


def _time_unit(value: float) -> tuple[float, str]:
    return next(((s, u) for s, u in _TIME_UNITS if abs(value) >= s), _TIME_UNITS[-1])


def fmt_seconds(value: float | None) -> str:
    """4 significant digits in the unit that fits: 1.102 s, 992.1 ms, 12.35 µs."""
    if (v := _present(value)) is None:
        return "—"
    scale, unit = _time_unit(v)
    return f"{v / scale:.{_decimals(v / scale)}f}{NBSP}{unit}"


def fmt_window(region: dict[str, Any], wall_s: float) -> str | None:
    """A region that is no NVTX range as the headline says it (result.region.kind): what was measured and how
    long; None for NVTX ranges, which the headline names with their occurrences."""
    kind = region.get("kind", "nvtx")     # a result.json written before region kinds has none
    if kind == "gpu_active":
        return f"no NVTX range: the GPU-active window of the capture, {fmt_seconds(wall_s)}"
    if kind == "time_window":
        return (f"no NVTX range: the time window {region['start_s']:g}{NBSP}s to {region['end_s']:g}{NBSP}s after "
                f"the capture's start, {fmt_seconds(wall_s)}")
    return None


class Column:
    """One unit for a whole table column, chosen from its typical value; the header names the unit
    and each cell is a bare number with 4 significant digits ("—" where no figure applies)."""

    def __init__(self, values: list[float | int | None], kind: str) -> None:
        present = sorted(abs(p) for v in values if (p := _present(v)) is not None and p != 0)
        typical = present[len(present) // 2] if present else 0.0
        if kind == "s":
            self.scale, self.unit = _time_unit(typical or 1.0)
        elif kind in ("%", "n"):
            self.scale, self.unit = 1.0, kind.strip("n")
        else:
            self.scale, prefix = _prefix(typical)
            self.unit = prefix + kind

    def __call__(self, value: float | int | None) -> str:
        if (v := _present(value)) is None:
            return "—"
        return f"{v / self.scale:,.{_decimals(v / self.scale)}f}"

    def head(self, label: str) -> str:
        """The header text: "wall (ms)"."""
        return f"{label} ({self.unit})" if self.unit else label


def column(values: Any, kind: str = "n") -> Column:
    return Column(list(values), kind)
