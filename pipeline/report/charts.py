"""Every chart of every report and history page, as hand-made SVG drawn with drawing.py's elements.

Pure functions from result data to SVG text: deterministic (fixed decimals, no ids from
memory addresses), no JavaScript, no fonts or images to fetch. Colours are presentation
attributes, not page CSS, so the same text works inline in HTML and as a sidecar .svg file
next to report.md (GitHub shows `![..](x.svg)`, not inline <svg>); `drawing.standalone` adds the
namespace a file needs. Values sit in <title> tooltips; labels never overlap (`drawing.place_label`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.analysis.metrics import pct_of
from pipeline.analysis.timeline import PLOT_PX
from pipeline.report.drawing import (CHART_W, CHAR_W, COLORS, FONT, PHONE_W, DeviceLabel, chart_svg, esc, fit_text,
                                     label_box, legend, legend_rows, nice_ticks, overlaps, pixel_scale, svg_line,
                                     svg_rect, svg_text, tick_labels)
from pipeline.report.fmt import NBSP, column, fmt_pct, fmt_seconds
from pipeline.report.roofline_chart import roofline


def steps(r: dict[str, Any], phone: bool = False) -> str | None:
    """Step time per occurrence (docs/figures.md §6: the wall, or the period to the next occurrence's start
    when the two overlap) as points on a labelled y axis, with the median the headline quotes as a
    dashed line: the points and the line are the same quantity. `phone`: PHONE_W wide (phone_charts.py),
    at most 6 occurrence numbers under the axis, not 12."""
    occ = r["occurrences"]
    if not occ:
        return None
    vals = [o["step_time_s"] for o in occ]
    col = column(vals, "s")
    ticks = nice_ticks(min(vals), max(vals), 4)
    w, left, top, plot_h, right = PHONE_W if phone else CHART_W, 70, 14, 150, 16
    sy = pixel_scale(ticks[0], ticks[-1], top + plot_h, top)
    step = (w - left - right) / max(len(occ), 1)
    body = [svg_line(left, sy(t), w - right, sy(t), COLORS["grid"]) + svg_text(left - 5, sy(t) + 4, text, "end")
            for t, text in zip(ticks, tick_labels(ticks, col.scale))]
    body.append(svg_line(left, top, left, top + plot_h, COLORS["axis"]))
    med = r["step_time"]["median_s"]
    body.append(svg_line(left, sy(med), w - right, sy(med), COLORS["exposed"], ' stroke-dasharray="5 3"'))
    body.append(svg_text(w - right, sy(med) - 5, f"median {fmt_seconds(med)}", "end", "lbl"))
    every = max(1, math.ceil(len(occ) / (6 if phone else 12)))
    per_mark = math.ceil(len(occ) / ((w - left - right) // STEP_MARK_PX))
    if per_mark > 1:
        return _grouped_steps(occ, per_mark, body, sy, (w, left, top, plot_h, right), col.head("step time"), phone)
    for i, o in enumerate(occ):
        cx = left + step * (i + 0.5)
        wall = "" if o["wall_time_s"] == o["step_time_s"] else f" (wall {fmt_seconds(o['wall_time_s'])})"
        body.append(f'<circle cx="{cx:.1f}" cy="{sy(o["step_time_s"]):.1f}" r="3.5" fill="{COLORS["compute"]}">'
                    f'<title>occurrence {o["index"]}: {esc(fmt_seconds(o["step_time_s"]) + wall)}</title></circle>')
        if i % every == 0:
            body.append(svg_text(cx, top + plot_h + 16, str(o["index"]), "middle"))
    body.append(svg_text((left + w - right) / 2, top + plot_h + 34, "occurrence", "middle"))
    cy = top + plot_h / 2
    body.append(svg_text(14, cy, col.head("step time"), "middle", "", f' transform="rotate(-90 14 {cy:.1f})"'))
    return chart_svg("steps-phone" if phone else "steps", w, top + plot_h + 44, "step time per occurrence", body)


# Pixels of plot width per mark of the step chart: with more occurrences than marks fit (267 on a desktop page,
# 137 on a phone), consecutive occurrences share a mark, a bar from their shortest to their longest step, so
# 30,000 occurrences draw as 267 bars, not 30,000 points on top of each other (a 3.4 MB drawing; issue #33).
STEP_MARK_PX = 2


def _grouped_steps(occ: list[dict[str, Any]], per_mark: int, body: list[str], sy: Callable[[float], float],
                   box: tuple[int, int, int, int, int], y_head: str, phone: bool) -> str:
    """The step chart's marks when occurrences share them (`steps`): each group of `per_mark` consecutive
    occurrences (the last may hold fewer) a bar from its shortest to its longest step, its range of
    occurrences and step times in the tooltip; the axis says how many occurrences a mark stands for."""
    w, left, top, plot_h, right = box
    groups = [occ[i:i + per_mark] for i in range(0, len(occ), per_mark)]
    step = (w - left - right) / len(groups)
    every = max(1, math.ceil(len(groups) / (6 if phone else 12)))
    for i, g in enumerate(groups):
        cx = left + step * (i + 0.5)
        times = [o["step_time_s"] for o in g]
        lo, hi = min(times), max(times)
        body.append(f'<line x1="{cx:.1f}" y1="{sy(lo) + 1.5:.1f}" x2="{cx:.1f}" y2="{sy(hi) - 1.5:.1f}" '
                    f'stroke="{COLORS["compute"]}" stroke-width="2"><title>occurrences {g[0]["index"]}–'
                    f'{g[-1]["index"]}: {esc(fmt_seconds(lo))} to {esc(fmt_seconds(hi))}</title></line>')
        if i % every == 0:
            body.append(svg_text(cx, top + plot_h + 16, str(g[0]["index"]), "middle"))
    body.append(svg_text((left + w - right) / 2, top + plot_h + 34,
                         f"occurrence, {per_mark:,} per bar (shortest to longest)", "middle"))
    cy = top + plot_h / 2
    body.append(svg_text(14, cy, y_head, "middle", "", f' transform="rotate(-90 14 {cy:.1f})"'))
    return chart_svg("steps-phone" if phone else "steps", w, top + plot_h + 44, "step time per occurrence", body)


def gpu_name(full: str, room_px: float) -> str:
    """A device's axis label within `room_px`: 'GPU 3', or for a rank file 'GPU r0:3' (the file's
    name without folder and extension), without 'GPU' if that fits, else cut at the front ('…');
    the full label stays in the tooltip."""
    file, sep, device = full.rpartition(":")
    bare = f"{Path(file).stem}{sep}{device}" if sep else full
    fits = max(4, int(room_px / CHAR_W))
    for label in (f"GPU {bare}", bare):          # "rank0:0" rather than the cut "…U rank0:0"
        if len(label) <= fits:
            return label
    return "…" + bare[-(fits - 1):]


def _axis_name(x: float, y: float, full: str, room_px: float) -> str:
    return f'<g><title>GPU {esc(full)}</title>{svg_text(x, y, gpu_name(full, room_px), "end")}</g>'


def devices(r: dict[str, Any], label: DeviceLabel, phone: bool = False) -> str | None:
    """Per device, compute, exposed communication and idle as shares of wall (stacked bars); `phone`: PHONE_W
    wide, the legend wrapped (phone_charts.py)."""
    rows = r["communication"]["devices"]
    if not rows:
        return None
    w, left, right, bar = PHONE_W if phone else CHART_W, 90, 16, 20
    body = []
    for i, d in enumerate(rows):
        y, x, wall = 8 + i * (bar + 6), float(left), d["wall_s"] or 1.0
        body.append(_axis_name(left - 6, y + bar * 0.7, label(r, d["device_id"]), left - 8))
        for key, part in (("compute_s", "compute"), ("exposed_s", "exposed"), ("idle_s", "idle")):
            width = (w - left - right) * d[key] / wall
            body.append(f'<g><title>GPU {esc(label(r, d["device_id"]))} {part}: {fmt_pct(pct_of(d[key], wall), 1)} '
                        f'of wall</title>{svg_rect(x, y, width, bar, COLORS[part])}</g>')
            x += width
    parts = (("compute", "compute"), ("exposed", "exposed communication"), ("idle", "idle"))
    swatches, bottom = legend_rows(left, 8 + len(rows) * (bar + 6) + 10, parts, w - right)
    return chart_svg("devices-phone" if phone else "devices", w, bottom + 10,
                     "compute, exposed communication and idle share of wall per device", body + swatches)


TIMELINE_LANES = (("compute", 9), ("communication", 9), ("memory", 5), ("idle", 5))


def timeline_step(r: dict[str, Any]) -> str:
    """Which step the timeline draws, in words that hold for its count (the chart's title and the
    caption both use them): timeline.median_occurrence takes the lower of the two middle steps of an
    even count, ties broken by occurrence, so with two equal middle steps it is neither "shorter" nor
    the only median one."""
    ran = [o for o in r["occurrences"] if o["kernel_count"] > 0] or r["occurrences"]
    walls = sorted(o["wall_time_s"] for o in ran)
    if len(walls) % 2:
        return "the median step"
    lower, upper = walls[len(walls) // 2 - 1], walls[len(walls) // 2]
    return "one of the two equal middle steps" if lower == upper else "the shorter of the two middle steps"


def timeline(r: dict[str, Any], label: DeviceLabel) -> str | None:
    """One step to scale: per device a lane each for compute, communication, memory and idle,
    under the NVTX range of the step; the x axis is time from the step's start."""
    t = r.get("timeline")
    if not t or not t["devices"]:
        return None
    w, left, right, top = 100 + PLOT_PX + 16, 100, 16, 40
    sx = pixel_scale(0.0, t["wall_s"], left, left + PLOT_PX)
    ticks = [v for v in nice_ticks(0.0, t["wall_s"], 6) if v <= t["wall_s"] * 1.0001]
    col = column([t["wall_s"]], "s")
    group = sum(h + 1 for _, h in TIMELINE_LANES) + 8
    height = top + 22 + group * len(t["devices"])
    body = legend(left, 16, tuple((k, k) for k, _ in TIMELINE_LANES))
    body += [svg_line(sx(v), top, sx(v), height, COLORS["grid"]) for v in ticks]
    body.append(svg_text(left - 6, top + 12, range_label(r), "end"))
    body.append(timeline_range(r, sx, top + 3))
    body.append(svg_line(sx(t["wall_s"]), top, sx(t["wall_s"]), height, COLORS["ink"], ' stroke-dasharray="3 2"'))
    y = top + 22
    for d in t["devices"]:
        full = label(r, d["device_id"])
        body.append(_axis_name(left - 6, y + group / 2, full, left - 8))
        body += timeline_lanes(f"GPU {full}", d, t["wall_s"], sx, y)
        y += group
    body += [svg_text(sx(v), height + 16, text, "middle") for v, text in zip(ticks, tick_labels(ticks, col.scale))]
    body.append(svg_text(left + PLOT_PX / 2, height + 34,
                         col.head(f"time from the start of occurrence {t['occurrence']}"), "middle"))
    title = f"timeline of occurrence {t['occurrence']}, {timeline_step(r)} by wall time"
    return chart_svg("timeline", w, height + 42, title, body)


def range_label(r: dict[str, Any]) -> str:
    """What the timeline's top bar is: the step's NVTX range, or the window a region of another kind is."""
    return "window" if r["region"].get("kind", "nvtx") != "nvtx" else "NVTX range"


def timeline_range(r: dict[str, Any], sx: Callable[[float], float], y: float) -> str:
    """The step's NVTX range (or window) as a bar 12 px high from `y`, its length in the tooltip."""
    t = r["timeline"]
    a, b = t["range_s"]
    return (f'<g><title>{esc(r["region"]["name"] or range_label(r))}, occurrence {t["occurrence"]}: '
            f'{esc(fmt_seconds(b - a))} (envelope across processes)</title>'
            f'{svg_rect(sx(a), y, sx(b) - sx(a), 12, COLORS["nvtx"])}</g>')


def timeline_lanes(name: str, d: dict[str, Any], wall_s: float, sx: Callable[[float], float], y: float) -> list[str]:
    """One device's lanes (TIMELINE_LANES) stacked down from `y`, 1 px apart, each lane's share of the
    step (lane_time_s, not the drawn islands) in its tooltip."""
    body = []
    for lane, h in TIMELINE_LANES:
        share = pct_of(d["lane_time_s"][lane], wall_s) or 0.0
        rects = "".join(svg_rect(sx(s), y, sx(e) - sx(s), h, COLORS[lane]) for s, e in d[lane])
        body.append(f"<g><title>{esc(name)} {lane}: {esc(fmt_pct(share, 1))} of the step</title>{rects}</g>")
        y += h + 1
    return body


def report_charts(r: dict[str, Any], label: DeviceLabel) -> dict[str, str]:
    """The report's charts by sidecar file name, in page order; charts without data are left out."""
    made = {"timeline.svg": timeline(r, label), "devices.svg": devices(r, label), "steps.svg": steps(r),
            "roofline.svg": roofline(r)}
    return {name: svg for name, svg in made.items() if svg}


PALETTE = ("#3b6ea8", "#d0743c", "#5b9a4a", "#7a5ca8", "#b8433f", "#3a9a9a", "#a07a2c", "#57606a")


def _run_axis(runs: list[dict[str, Any]]) -> tuple[list[int], dict[int, str]]:
    """Run numbers in order and the --label of each (the same for every job of one run)."""
    numbers = sorted({x["run"] for x in runs})
    labels = {x["run"]: x.get("label") or "" for x in runs}
    return numbers, labels


# a trend chart's width, legend entries a row, run numbers under the axis at most, threshold label's job name chars
TREND_GEOMETRY = {False: (CHART_W, 3, 10, 22), True: (PHONE_W, 2, 4, 10)}


def trend(jobs: list[dict[str, Any]], key: str, kind: str, title: str, unit: str,
          limit_key: str | None = None, phone: bool = False) -> str | None:
    """One figure over the runs, one line per job (overlaid), on labelled axes: x = run number with
    its label under it, y = the figure with round ticks; points carry their value in a tooltip.
    With `limit_key`, a job whose latest run has that threshold gets a dashed line at it in its colour.
    Invalid runs are not drawn (no measurement: one 258 % would flatten every real line); the table lists them.
    The line breaks before a run whose figure is not comparable with the run before (history not_comparable):
    a line across it would read as a change the history refuses to measure. It breaks at a run in which the
    job failed (no result): a line across it would read as a job that ran. `phone`: PHONE_W wide, by TREND_GEOMETRY."""
    series = [(j["name"], _segments(j, key), _latest_limit(j, limit_key)) for j in jobs]
    series = [s for s in series if s[1]]
    if not series:
        return None
    numbers, labels = _run_axis([x for j in jobs for x in j["runs"]])
    vals = ([v for _, parts, _ in series for pts in parts for _, v in pts]
            + [lim for *_, lim in series if lim is not None])
    col = column(vals, unit)
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.15 or abs(hi) * 0.02 or 1.0
    ticks = nice_ticks(lo - pad if lo - pad > 0 or lo < 0 else 0.0, hi + pad, 4)     # no negative MFU axis
    w, per_row, runs_shown, name_chars = TREND_GEOMETRY[phone]
    left, right, top, plot_h = 70, 16, 14 + 18 * ((len(series) + per_row - 1) // per_row), 170
    sy = pixel_scale(ticks[0], ticks[-1], top + plot_h, top)
    slot = (w - left - right) / len(numbers)
    sx = {n: left + slot * (i + 0.5) for i, n in enumerate(numbers)}
    body = [svg_line(left, sy(t), w - right, sy(t), COLORS["grid"]) + svg_text(left - 5, sy(t) + 4, text, "end")
            for t, text in zip(ticks, tick_labels(ticks, col.scale))]
    body.append(svg_line(left, top, left, top + plot_h, COLORS["axis"]))
    every = max(1, math.ceil(len(numbers) / runs_shown))
    for i, n in enumerate(numbers):
        if i % every == 0:
            body.append(svg_text(sx[n], top + plot_h + 16, str(n), "middle"))
            if labels[n]:
                short = labels[n] if len(labels[n]) <= 10 else labels[n][:9] + "…"
                body.append(svg_text(sx[n], top + plot_h + 31, short, "middle", "", ' font-size="11"'))
    taken: list[tuple[float, ...]] = []
    slot_w = (w - left - right) / per_row                # legend entries in a row, each within its slot
    for k, (name, parts, limit) in enumerate(series):
        color, lx, ly = PALETTE[k % len(PALETTE)], left + slot_w * (k % per_row), 14 + 18 * (k // per_row)
        if limit is not None:
            text = f"{fit_text(name, name_chars * CHAR_W)} threshold {col(limit)}{NBSP}{col.unit}"
            body.append(_limit_line(text, sy(limit), (left, top, w - right, top + plot_h), color, taken))
        body.append(f"<g><title>{esc(name)}</title>" + svg_line(lx, ly - 4, lx + 16, ly - 4, color, ' stroke-width="3"')
                    + svg_text(lx + 21, ly, fit_text(name, slot_w - 21 - 8)) + "</g>")
        body += [f'<polyline fill="none" stroke="{color}" stroke-width="2" points="'
                 + " ".join(f"{sx[n]:.1f},{sy(v):.1f}" for n, v in pts) + '"/>' for pts in parts]
        body += [f'<circle cx="{sx[n]:.1f}" cy="{sy(v):.1f}" r="3.5" fill="{color}"><title>{esc(name)}, run {n}'
                 f'{" (" + esc(labels[n]) + ")" if labels[n] else ""}: {esc(col(v))} {esc(col.unit)}</title></circle>'
                 for pts in parts for n, v in pts]
    body.append(svg_text((left + w - right) / 2, top + plot_h + 46, "run (label)", "middle"))
    cy = top + plot_h / 2
    body.append(svg_text(14, cy, col.head(title), "middle", "", f' transform="rotate(-90 14 {cy:.1f})"'))
    return chart_svg(f"{kind}-phone" if phone else kind, w, top + plot_h + 54, f"{title} per run", body)


def _segments(job: dict[str, Any], key: str) -> list[list[tuple[int, float]]]:
    """A job's valid runs with the figure as (run, value), cut into the stretches a line may join: a new
    one starts at each run whose figure is not comparable with the run before it, and after a failed run."""
    parts: list[list[tuple[int, float]]] = []
    failed = False
    for x in job["runs"]:
        failed = failed or x["status"] == "failed"
        if x[key] is None or x["status"] in ("invalid", "failed"):
            continue
        if not parts or failed or any(key in g["metrics"] for g in x.get("not_comparable") or []):
            parts.append([])
        failed = False
        parts[-1].append((x["run"], x[key]))
    return parts


def _latest_limit(job: dict[str, Any], limit_key: str | None) -> float | None:
    """The threshold of the job's latest run with a result: a failed run has none stored, and is no reason
    to stop drawing the one the job still has."""
    ran = [x for x in job["runs"] if x["status"] != "failed"]
    return ran[-1].get(limit_key) if limit_key and ran else None


def _limit_line(text: str, y: float, plot: tuple[float, float, float, float], color: str,
                taken: list[tuple[float, ...]]) -> str:
    """A threshold as a dashed line across the plot (x0, y0, x1, y1), labelled near its right end by
    _limit_spot: inside the plot and over no other threshold's label."""
    x1, x2 = plot[0], plot[2]
    tx, ty, anchor = _limit_spot(text, y, plot, taken)
    return (f'<g class="threshold"><title>{esc(text)}</title>'
            + svg_line(x1, y, x2, y, color, ' stroke-dasharray="6 4"')
            + svg_text(tx, ty, text, anchor, "lbl", f' fill="{color}"') + "</g>")


def _limit_spot(text: str, y: float, plot: tuple[float, float, float, float],
                taken: list[tuple[float, ...]]) -> tuple[float, float, str]:
    """Where a threshold's label goes: just above its line at the right end, else the nearest free row
    below or above it there (then the same at the left end), never outside the plot. Stacking only
    downwards put the labels of thresholds close together near the axis's foot below the x axis,
    over the run numbers. With every row taken it goes above its line, overlapping (many thresholds)."""
    x0, top, x1, bottom = plot
    lo, hi = top + FONT * 0.95, bottom - FONT * 0.3          # baselines whose box is inside the plot
    first, row = min(max(y - 4, lo), hi), FONT + 2
    rows = [first + sign * k * row for k in range(int((hi - lo) / row) + 1) for sign in ((1,) if k == 0 else (1, -1))]
    for tx, anchor in ((x1 - 4, "end"), (x0 + 4, "start")):
        for ty in (r for r in rows if lo <= r <= hi):
            box = label_box(tx, ty, text, anchor)
            if not any(overlaps(box, t) for t in taken):
                taken.append(box)
                return tx, ty, anchor
    taken.append(label_box(x1 - 4, first, text, "end"))
    return x1 - 4, first, "end"


def history_charts(doc: dict[str, Any], phone: bool = False) -> dict[str, str]:
    """MFU of every job on one chart with each job's threshold line, then each job's median step time
    (jobs differ in scale); `phone`: their phone-width drawings, by the same names."""
    made = {"history-mfu.svg": trend(doc["jobs"], "mfu_pct_wall", "history", "MFU, wall", "%",
                                       "mfu_pct_wall_min", phone)}
    for i, j in enumerate(doc["jobs"], 1):
        made[f"history-step-{i}.svg"] = trend([j], "step_time_median_s", "history", "step time, median", "s",
                                                phone=phone)
    return {name: svg for name, svg in made.items() if svg}


def waterfall_rows(c: dict[str, Any]) -> list[tuple[str, float, float, str, str]]:
    """The waterfall's bars (docs/compare.md), each (label, from ns, to ns, colour, its change as said): the
    baseline's median step, one bar per part that moved (from the running total to the running total plus its
    contribution, in the rows' order: largest first), and the new median step. A part within noise is grey."""
    rows = [("baseline step (median)", 0.0, c["baseline_step_ns"], COLORS["compute"], "")]
    total = c["baseline_step_ns"]
    for r in (r for r in c["rows"] if r["change_ns"] != 0):
        color = COLORS["idle"] if r["noise"] != "beyond" else COLORS["exposed"] if r["change_ns"] > 0 else COLORS["memory"]
        sign = "+" if r["change_ns"] > 0 else "−"
        rows.append((r["label"], total, total + r["change_ns"], color, f"{sign}{fmt_seconds(abs(r['change_ns']) / 1e9)}"))
        total += r["change_ns"]
    rows.append(("new step (median)", 0.0, c["value_step_ns"], COLORS["compute"], ""))
    return rows


def waterfall_ticks(rows: list[tuple[str, float, float, str, str]]) -> list[float]:
    """Round seconds from 0 past the longest bar's end, the running total's highest point included."""
    return nice_ticks(0.0, max(max(a, b) for _, a, b, _, _ in rows) / 1e9, 4)


def waterfall(c: dict[str, Any]) -> str:
    """One input's "what changed" (docs/compare.md) as a horizontal waterfall of `waterfall_rows`, each bar named
    in a left margin and its change written after it. Draws compare.json's numbers only."""
    rows = waterfall_rows(c)
    ticks = waterfall_ticks(rows)
    w, left, right, top, row_h = CHART_W, 210, 16, 8, 22
    sx = pixel_scale(0.0, ticks[-1], left, w - right)
    col = column([t for t in ticks], "s")
    plot_h = row_h * len(rows)
    body = [svg_line(sx(t), top, sx(t), top + plot_h, COLORS["grid"]) + svg_text(sx(t), top + plot_h + 14, text, "middle")
            for t, text in zip(ticks, tick_labels(ticks, col.scale))]
    for i, (label, a, b, color, said) in enumerate(rows):
        y = top + i * row_h
        lo, hi = sorted((a / 1e9, b / 1e9))
        body.append(svg_text(left - 6, y + 15, fit_text(label, left - 12), "end"))
        body.append(f'<g>{svg_rect(sx(lo), y + 4, sx(hi) - sx(lo), row_h - 8, color)}'
                    f'<title>{esc(label)}: {esc(said or fmt_seconds(b / 1e9))}</title></g>')
        if said:
            body.append(svg_text(sx(hi) + 4, y + 15, said, "start", "lbl"))
    body.append(svg_text((left + w - right) / 2, top + plot_h + 32, col.head("step time"), "middle"))
    return chart_svg("waterfall", w, top + plot_h + 40, "what changed in the median step time", body)


def compare_charts(doc: dict[str, Any]) -> dict[str, str]:
    """The waterfall of each input whose change was decomposed, by the sidecar name compare.json gives it."""
    return {c["waterfall_svg"]: waterfall(c) for c in doc.get("changes", []) if c.get("waterfall_svg")}
