"""Per-rank figures for the report: each rank's wall, union and MFU, their spread, the straggler cost.

Inputs are the per (occurrence, rank) rows measure/ranks produce (integer ns);
nothing here touches kernels. Definitions, stated in the report as well:

- rank wall (occurrence k): from the rank's own range start to the end of its range
  or of the kernels it launched, whichever is later (docs/figures.md §5, for one process);
- rank MFU: the job's FLOPs per occurrence over (the rank's wall x all GPUs x peak),
  i.e. the MFU the job would have if every rank ran at this rank's pace; over several
  occurrences the rank's wall is the union of its envelopes (docs/figures.md §6). A rank that
  launched no attributed kernel (in an occurrence, or in all of them) has none: its wall
  would be CPU time only (docs/figures.md §5, "—" like an occurrence without kernels);
- straggler cost (occurrence k): latest rank end - median rank end — the time the
  step waited for its slowest rank beyond when a typical rank was done; the total
  is the sum over occurrences, also given as a share of the total wall time.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter
from typing import Any

from pipeline.analysis import metrics
from pipeline.analysis.measure import NS
from pipeline.errors import ResultWarning

DEFINITION = ("per occurrence, the latest rank's end minus the median rank end (time the step waited for "
              "its slowest rank beyond when a typical rank was done), summed over the selected occurrences")


def rank_rows(ranks: list[dict], occ_flops: int, gpus: int, peak_tflops: float) -> list[dict[str, Any]]:
    """Result rows per occurrence and rank, in seconds, with the rank's own union and MFU."""
    return [{"occurrence": r["occurrence"], "rank": r["rank"], "file": r["file"], "pid": r["pid"],
             "start_ns": r["start_ns"], "cpu_range_s": r["cpu_range_ns"] / NS, "wall_time_s": r["wall_ns"] / NS,
             "gpu_kernel_union_s": r["union_ns"] / NS,
             "mfu_pct_wall": (metrics.utilization_pct(occ_flops, r["wall_ns"] / NS, gpus, peak_tflops)
                              if r["kernel_count"] else None),
             "period_s": r["period_ns"] / NS if r["period_ns"] is not None else None,
             "kernel_count": r["kernel_count"]} for r in ranks]


def occurrence_spreads(ranks: list[dict]) -> dict[int, float]:
    """Per occurrence, slowest minus fastest rank wall time (docs/figures.md §5 per-rank spread)."""
    out = {}
    for k, rows in _by(ranks, "occurrence").items():
        walls = [r["wall_ns"] for r in rows]
        out[k] = (max(walls) - min(walls)) / NS
    return out


def envelope_union_ns(rows: list[dict]) -> int:
    """Length of the union of the rows' envelopes [start, start + wall]: overlapping occurrences count once."""
    total, reach = 0, None
    for start, end in sorted((r["start_ns"], r["start_ns"] + r["wall_ns"]) for r in rows):
        if reach is None or start > reach:
            total, reach = total + end - start, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total


def straggler(ranks: list[dict], total_wall_ns: int) -> dict[str, Any]:
    """Straggler cost per occurrence and in total (see DEFINITION).

    An occurrence whose latest end several ranks share has no slowest rank (null): naming the first of
    them by name made ranks that all finished together read 'rank a finished last in 4 of 4'."""
    per = []
    for k, rows in sorted(_by(ranks, "occurrence").items()):
        if len(rows) < 2:
            continue
        ends = sorted((r["start_ns"] + r["wall_ns"], r["rank"]) for r in rows)
        latest = ends[-1][0]
        last = [name for e, name in ends if e == latest]
        median_end = statistics.median(e for e, _ in ends)
        per.append({"occurrence": k, "slowest_rank": last[0] if len(last) == 1 else None,
                    "cost_s": (latest - median_end) / NS, "spread_s": (latest - ends[0][0]) / NS})
    total = sum(p["cost_s"] for p in per)
    counts = Counter(p["slowest_rank"] for p in per if p["slowest_rank"] is not None)
    top = min(counts.items(), key=lambda kv: (-kv[1], kv[0])) if counts else (None, 0)
    return {"definition": DEFINITION, "total_s": total,
            "pct_of_wall": 100.0 * total * NS / total_wall_ns if per and total_wall_ns else None,
            "slowest_rank": top[0], "slowest_count": top[1], "occurrences": per}


def summary(ranks: list[dict], occ_flops: int, gpus: int, peak_tflops: float,
            slowest: dict[str, int]) -> list[dict[str, Any]]:
    """Per rank over the selected occurrences: a handful of rows however many steps were chosen."""
    out = []
    for name, rows in sorted(_by(ranks, "rank").items()):
        walls = [r["wall_ns"] / NS for r in rows]
        periods = [r["period_ns"] / NS for r in rows if r["period_ns"] is not None]
        out.append({"rank": name, "file": rows[0]["file"], "pid": rows[0]["pid"], "occurrences": len(rows),
                    "wall_median_s": statistics.median(walls), "wall_min_s": min(walls), "wall_max_s": max(walls),
                    "union_median_s": statistics.median(r["union_ns"] / NS for r in rows),
                    "mfu_pct_wall": (metrics.utilization_pct(occ_flops * len(rows), envelope_union_ns(rows) / NS,
                                                             gpus, peak_tflops)
                                     if any(r["kernel_count"] for r in rows) else None),
                    "period_median_s": statistics.median(periods) if periods else None,
                    "kernel_count": sum(r["kernel_count"] for r in rows),
                    "slowest_count": slowest.get(name, 0)})
    return out


def spread(rows: list[dict[str, Any]], ranks: list[dict]) -> dict[str, dict[str, float | None]]:
    """Min / median / max across ranks of each rank's median wall, median union and MFU; and over the occurrences
    two or more ranks had, of the per-rank spread (slowest minus fastest rank wall, docs/figures.md §5)."""
    out = {key: _min_median_max([r[key] for r in rows if r[key] is not None])
           for key in ("wall_median_s", "union_median_s", "mfu_pct_wall")}
    shared = {k for k, n in Counter(r["occurrence"] for r in ranks).items() if n > 1}
    out["wall_spread_s"] = _min_median_max([s for k, s in occurrence_spreads(ranks).items() if k in shared])
    return out


def _min_median_max(values: list[float]) -> dict[str, float | None]:
    return {"min": min(values) if values else None, "median": statistics.median(values) if values else None,
            "max": max(values) if values else None}


def alignment_warnings(ranks: list[dict], first: int, last: int) -> list[ResultWarning]:
    """Ranks missing selected occurrences, or whose k-th range is far from the others' k-th: reported.

    Misaligned: the rank's start is more than half a median step period from the median
    start of the other ranks' k-th ranges — its k-th range is likely another step (an extra
    or lost range). The median of the others, not of all: with two ranks the median of all is
    their midpoint, which would take a whole period between them to flag either.
    """
    out: list[ResultWarning] = []
    wanted = set(range(first, last + 1))
    for name, rows in sorted(_by(ranks, "rank").items()):
        missing = sorted(wanted - {r["occurrence"] for r in rows})
        if missing:
            out.append({"code": "rank_missing_occurrences", "message":
                        f"rank {name} has no range for occurrence(s) {_list(missing)}; its other occurrences "
                        "are counted, the missing ones are not"})
    periods = [r["period_ns"] for r in ranks if r["period_ns"] is not None]
    if not periods:
        return out
    half = statistics.median(periods) / 2
    off: dict[str, list[int]] = {}
    for k, rows in sorted(_by(ranks, "occurrence").items()):
        starts = sorted(r["start_ns"] for r in rows)
        for r in rows:
            if len(rows) > 1 and abs(r["start_ns"] - median_without(starts, r["start_ns"])) > half:
                off.setdefault(r["rank"], []).append(k)
    for name, ks in sorted(off.items()):
        out.append({"code": "rank_misaligned", "message":
                    f"rank {name}: occurrence(s) {_list(ks)} start more than half a step period from the other "
                    "ranks' — its k-th range is probably a different step (an extra or missing range); "
                    "check the region or the occurrences"})
    return out


def median_without(ordered: list[float], value: float) -> float:
    """Median of sorted `ordered` with one `value` taken out, without copying it: each rank against the
    other ranks costs one sort per occurrence, not one per rank (hundreds of rank files)."""
    gone = bisect.bisect_left(ordered, value)
    m = len(ordered) - 1

    def kept(j: int) -> float:                  # j-th of the list without the removed item
        return ordered[j] if j < gone else ordered[j + 1]
    return kept(m // 2) if m % 2 else (kept(m // 2 - 1) + kept(m // 2)) / 2


def _by(rows: list[dict], key: str) -> dict[Any, list[dict]]:
    out: dict[Any, list[dict]] = {}
    for r in rows:
        out.setdefault(r[key], []).append(r)
    return out


def _list(values: list[int]) -> str:
    return ", ".join(map(str, values[:10])) + (f" and {len(values) - 10} more" if len(values) > 10 else "")
