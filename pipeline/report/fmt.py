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


def fmt_against(value: float | None, limit: float, digits: int | None = None) -> str:
    """A threshold's value as fmt_num writes it, with more decimals where that would read as the limit it
    failed or passed: 32.349 against a limit of 32.35 is '32.349', not '32.35' beside a FAIL."""
    if _missing(value):
        return "—"
    decimals = _decimals(value) if digits is None else digits
    while value != limit and float(f"{value:.{decimals}f}") == limit and decimals < 15:
        decimals += 1
    return fmt_num(value, decimals)


def fmt_util(value: float | None, digits: int = 2) -> str:
    """A per-occurrence or per-rank MFU/HFU cell: above 100 % it is marked, so a row that is no
    measurement is not read as one (SEMANTICS §6; the table's note and the warning say why)."""
    if _missing(value):
        return "—"
    text = _tiny(value, digits) or fmt_num(value, digits)
    return text if value <= PCT_LIMIT else f"{text}{NBSP}⚠"


def _tiny(value: float, digits: int) -> str | None:
    """'<0.01' for a positive share that the decimals would show as 0.00: an MFU of 0.0015 %
    printed as '0.00' reads as no work at all."""
    return f"<{10 ** -digits:.{digits}f}" if 0 < value < 0.5 * 10 ** -digits else None


def fmt_fraction_pct(value: float | None, digits: int | None = None) -> str:
    """A share result.json keeps as a fraction (0-1) written as the percentage a table column headed "(%)"
    shows: 0.4567 -> '45.67'; "—" when missing. Only the unit changes, as a time's does in fmt_seconds."""
    return fmt_num(None if _missing(value) else value * 100, digits)


def fmt_int(value: int | None) -> str:
    return "—" if value is None else f"{int(value):,}"


def fmt_pct(value: float | None, digits: int = 2) -> str:
    return "—" if _missing(value) else f"{_tiny(value, digits) or f'{value:.{digits}f}'}{NBSP}%"


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
