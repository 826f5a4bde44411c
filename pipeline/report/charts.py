"""Geometry of the report's inline SVG charts: pure functions from result.json to coordinates.

The templates draw; this module only maps values to pixels (log-log for the roofline),
so charts need no JavaScript and print like the rest of the page.
"""

from __future__ import annotations

import math
from typing import Any

W, H, PAD = 640, 360, 48


def _log_scale(lo: float, hi: float, a: float, b: float):
    """Map [lo, hi] (log10) onto pixels [a, b]."""
    llo, lhi = math.log10(lo), math.log10(hi)
    return lambda v: a + (math.log10(v) - llo) / (lhi - llo) * (b - a)


def _decades(lo: float, hi: float) -> list[float]:
    return [10.0 ** e for e in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)]


def roofline(r: dict[str, Any]) -> dict[str, Any] | None:
    """Roofs, ridge and operator points; None when there is no bandwidth or no row with an AI."""
    hw = r["hardware"]
    peak, bw, ridge = hw["peak_tflops"], hw["hbm_gbps"], hw["ridge_flop_per_byte"]
    rows = [x for x in r["roofline"] if x["arithmetic_intensity"]]
    if not bw or not ridge or not rows:
        return None
    ais = [x["arithmetic_intensity"] for x in rows] + [ridge]
    ys = [x["achieved_tflops"] or x["attainable_tflops"] for x in rows]
    x_lo, x_hi = min(ais) / 4, max(ais) * 4
    y_lo, y_hi = max(min(ys + [x_lo * bw / 1000]) / 4, 1e-6), peak * 3
    sx, sy = _log_scale(x_lo, x_hi, PAD, W - 10), _log_scale(y_lo, y_hi, H - PAD, 10)
    roof = [(x_lo, x_lo * bw / 1000), (ridge, peak), (x_hi, peak)]
    points = [{"x": sx(x["arithmetic_intensity"]), "y": sy(x["achieved_tflops"] or x["attainable_tflops"]),
               "label": x["operator"], "measured": x["achieved_tflops"] is not None} for x in rows]
    return {"width": W, "height": H, "pad": PAD,
            "roof": " ".join(f"{sx(a):.1f},{sy(max(t, y_lo)):.1f}" for a, t in roof),
            "ridge": {"x": sx(ridge), "y": sy(peak), "value": ridge}, "points": points,
            "xticks": [{"pos": sx(v), "label": f"{v:g}"} for v in _decades(x_lo, x_hi)],
            "yticks": [{"pos": sy(v), "label": f"{v:g}"} for v in _decades(y_lo, y_hi)]}


def device_bars(r: dict[str, Any]) -> dict[str, Any] | None:
    """Stacked horizontal bars per device: compute, exposed communication, idle (shares of wall)."""
    devices = r["communication"]["devices"]
    if not devices:
        return None
    bar, width = 22, W - 2 * PAD
    rows = []
    for i, d in enumerate(devices):
        wall = d["wall_s"] or 1.0
        x, parts = float(PAD), []
        for key, css in (("compute_s", "compute"), ("exposed_s", "exposed"), ("idle_s", "idle")):
            w = width * d[key] / wall
            parts.append({"x": x, "w": w, "css": css, "pct": 100 * d[key] / wall})
            x += w
        rows.append({"y": 10 + i * (bar + 8), "h": bar, "device": d["device_id"], "parts": parts})
    return {"width": W, "height": 30 + len(devices) * (bar + 8), "pad": PAD, "rows": rows}


def step_bars(r: dict[str, Any]) -> dict[str, Any] | None:
    """Vertical bars of wall time per occurrence, scaled to the slowest."""
    occ = r["occurrences"]
    if not occ:
        return None
    top = max(o["wall_time_s"] for o in occ) or 1.0
    slot = (W - 2 * PAD) / len(occ)
    inner = H // 2 - 30
    bars = [{"x": PAD + i * slot + slot * 0.15, "w": slot * 0.7, "h": inner * o["wall_time_s"] / top,
             "y": 10 + inner - inner * o["wall_time_s"] / top, "label": o["index"], "value": o["wall_time_s"]}
            for i, o in enumerate(occ)]
    return {"width": W, "height": H // 2, "base": 10 + inner, "bars": bars, "top": top}


GLOBALS = {"roofline_chart": roofline, "device_chart": device_bars, "step_chart": step_bars}
