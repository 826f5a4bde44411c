"""What `mfu init` proposes as the region, and why: the first of the shapes real traces have that fits.

Region discovery (discovery.py) ranks the NVTX name groups; this module reads two more queries
(sql/discovery_children.sql: what a once-per-process range holds; sql/discovery_active.sql: the
GPU-active window per process) and picks, in order:
  steps      a step-like name (repeats, top-level, most GPU work, steady), after any warm-up;
  one step   a top-level range holding most GPU work around forward/backward/optimizer-like ranges;
  loop       a range around a repeated child: the child itself when its repeats are steady, else the
             range with `covers: N`;
  only       the only top-level range holding GPU work (a guess when it holds under half of it);
  active     else the GPU-active window (region kind gpu_active): no range marks a step.
Each proposal carries its reason, and says when it is a guess. A trace with no GPU work gets none.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb

from pipeline.trace import queries
from pipeline.trace.discovery import (MAX_PERIOD_CV, MIN_SHARE, NAMELESS, NO_KERNEL_TIME, NO_KERNELS, NO_RANGES,
                                      WARMUP_HELD, selector, skip, warmup_held)

STEP_PARTS = re.compile(r"(?i)forward|backward|optimi[sz]er|fwd|bwd|loss")   # names of a step's parts
# Names of a model's parts (a step runs each layer once): repeated inside a range, they are no loop of steps.
MODEL_PARTS = re.compile(r"(?i)layer|block|attention|attn|mlp|ffn|conv|embed|norm|head|aten::|nccl")
LOOP_MAX_CV = 0.5      # a loop's repeats steadier than this are steps (steady: MAX_PERIOD_CV, each one measured)
CHILD_ROWS = 200        # (parent, child) pairs read, the most GPU work first


def propose(con: duckdb.DuckDBPyConnection, found: dict[str, Any], ranges: int, kernels: int) -> None:
    """Add the proposal and its reason (the verdict) to `found`, discovery.discover's answer, whose tables are
    still on `con`. `ranges`, `kernels`: the trace's NVTX ranges (named or not) and kernel rows. No proposal, and
    the verdict says what to capture or export again, when the trace holds no GPU work with a length."""
    active = queries.run(con, "discovery_active")
    rows = found["regions"]
    refusal = (NO_KERNEL_TIME.format(kernels=kernels or sum(a["rows"] for a in active))
               if any(a["rows"] for a in active) else NAMELESS.format(ranges=ranges) if ranges and not rows
               else NO_KERNELS if ranges else NO_RANGES)
    if not any(a["busy_rows"] for a in active):
        found.update(proposal=None, guessing=False, message=refusal)
        return
    children = queries.run(con, "discovery_children", limit=CHILD_ROWS, max_warmup_held=WARMUP_HELD) if rows else []
    chosen = _choose(rows, children) or _active(rows, active, NAMELESS.format(ranges=ranges) if ranges else None)
    found.update(proposal=chosen, guessing=chosen["guess"], message=chosen["why"])


def _choose(rows: list[dict[str, Any]], children: list[dict[str, Any]]) -> dict[str, Any] | None:
    for shape in (_steps, _one_step, _loop, _only_top):
        if chosen := shape(rows, children):
            return chosen
    return None


def _nvtx(row: dict[str, Any], shape: str, why: str, guess: bool, first: int = 1, last: int | None = None,
          covers: int | str = "step") -> dict[str, Any]:
    return {"kind": "nvtx", "shape": shape, **selector(row), "domain": row["domain"], "group": row["name_group"],
            "names": row["names"], "occurrences": {"first": first} | ({} if last is None else {"last": last}),
            "covers": covers, "why": why, "guess": guess}


def _steps(rows: list[dict[str, Any]], _children: list[dict[str, Any]]) -> dict[str, Any] | None:
    steps = [r for r in rows if r["step_like"]]
    if not steps:
        return None
    best = steps[0]
    also = f" (also step-like: {', '.join(repr(s['name_group']) for s in steps[1:])})" if len(steps) > 1 else ""
    return _nvtx(best, "steps", f"'{best['name_group']}' looks like one step: {'; '.join(best['reasons'])}{also}",
                 False, first=skip(best) + 1)


def _once(r: dict[str, Any]) -> bool:
    """Top-level, one occurrence per process, after any named warm-up and not named warm-up itself."""
    return (r["min_depth"] == 0 and r["occurrences_per_process_max"] == 1 and r["after_warmup"] == 1
            and not r["warmup_named"] and warmup_held(r) <= WARMUP_HELD)


def _inside(children: list[dict[str, Any]], r: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in children if (c["parent_name"], c["parent_domain"]) == (r["name_group"], r["domain"])]


def _one_step(rows: list[dict[str, Any]], children: list[dict[str, Any]]) -> dict[str, Any] | None:
    for r in rows:
        if not (_once(r) and (r["kernel_share"] or 0) >= MIN_SHARE):
            continue
        parts = [c["name_group"] for c in _inside(children, r)
                 if STEP_PARTS.search(c["name_group"]) and c["repeats_max"] == 1]
        if parts:
            return _nvtx(r, "one step", f"'{r['name_group']}' is one step: top-level, {100 * r['kernel_share']:.1f} % "
                         f"of the kernel time launched inside, around {', '.join(map(repr, parts[:4]))}; it occurs "
                         "once, so no spread between steps can be measured", False, last=1)
    return None


def _loop(_rows: list[dict[str, Any]], children: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The loop holding the most GPU work among the once-per-process ranges (most of what ran after any named
    warm-up) around one child repeated the same number of times in every process (most of the loop's work, its
    period not far from steady, its name not a model part's). The repeats themselves when they are steady and
    numbered alike in every process (each measured: their spread shows), else the loop with covers: N."""
    for c in filter(_repeats, children):
        n, cv = c["repeats_min"], c["period_cv"]
        held = (f"'{c['name_group']}' repeats {n}x inside '{c['parent_name']}' "
                f"({100 * c['kernel_ns'] / c['parent_kernel_ns']:.1f} % of its kernel time; the loop holds "
                f"{100 * c['parent_share']:.1f} % of the kernel time after any warm-up)")
        steady = cv is None or cv <= MAX_PERIOD_CV
        if steady and c["first_min"] == c["first_max"] and c["last_min"] == c["last_max"]:
            period = "one period" if cv is None else f"CV {100 * cv:.1f} %"
            return _nvtx(c, "loop", f"{held}, its period steady ({period}): each repeat is proposed as one step, "
                         f"occurrences {c['first_min']}-{c['last_min']}, so the spread between them is measured",
                         False, first=c["first_min"], last=c["last_min"])
        loop = {"name_group": c["parent_name"], "domain": c["parent_domain"], "numbered": c["parent_numbered"],
                "has_suffix": c["parent_has_suffix"], "names": c["parent_names"]}
        unsteady = f"period CV {100 * cv:.1f} %, not steady" if not steady else "numbered differently in each process"
        return _nvtx(loop, "loop", f"{held}, its repeats {unsteady}: the loop is proposed as one occurrence of {n} "
                     f"steps (covers: {n}); if one repeat is not one step, change covers", False, last=1, covers=n)
    return None


def _repeats(c: dict[str, Any]) -> bool:
    """A child repeated as the iterations of a loop are: see _loop."""
    n, cv = c["repeats_min"], c["period_cv"]
    return (n >= 2 and n == c["repeats_max"] and c["in_every_process"] and not c["warmup_named"]
            and not MODEL_PARTS.search(c["name_group"]) and (c["parent_share"] or 0) >= MIN_SHARE
            and c["kernel_ns"] >= MIN_SHARE * c["parent_kernel_ns"] and (cv is None or cv <= LOOP_MAX_CV))


def _only_top(rows: list[dict[str, Any]], _children: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The only top-level group with GPU work (gpu_top_groups counts them all, not only the rows listed): one
    occurrence is one step; several, not step-like, a guess. Under half the kernel time inside: a guess too."""
    tops = [r for r in rows if r["min_depth"] == 0 and r["kernel_sum_ns"] > 0 and not r["warmup_named"]]
    if len(tops) != 1 or tops[0]["gpu_top_groups"] != 1 or not tops[0]["after_warmup"] \
            or warmup_held(tops[0]) > WARMUP_HELD:
        return None
    r = tops[0]
    low = r["kernel_share"] < MIN_SHARE
    only = (f"'{r['name_group']}' is the only top-level range with GPU work ({100 * r['kernel_share']:.1f} % of the "
            f"kernel time{': the rest ran outside any range' if low else ''})")
    first = skip(r) + 1
    if r["after_warmup"] == 1:
        return _nvtx(r, "one step", f"{'guessing: ' if low else ''}{only}; it occurs once, so no spread between "
                     "steps can be measured", low, first=first, last=first)
    return _nvtx(r, "only", f"guessing: {only}, but not step-like: {'; '.join(r['reasons'])}", True, first=first)


def _active(rows: list[dict[str, Any]], active: list[dict[str, Any]], nameless: str | None) -> dict[str, Any]:
    """The GPU-active window: no range marks a step (none at all, none named, or none step-like: a guess)."""
    spans = sorted((a["span_ns"] for a in active if a["busy_rows"]), reverse=True)
    window = (f"the GPU-active window of each process ({_duration(spans[0])}" + (
        f"; {len(spans)} processes, the longest" if len(spans) > 1 else "") + "), from its first GPU row's start "
        "to its last one's end, setup included")
    ops = [r["name_group"] for r in rows if r["kernel_sum_ns"] > 0 and "::" in r["name_group"]]
    if not rows:
        why = (f"{nameless}; " if nameless else "no NVTX range: ") + f"{window}, is what can be measured: the " \
              "FLOPs you state must be those of everything the capture ran"
    elif ops and len(ops) == sum(r["kernel_sum_ns"] > 0 for r in rows):
        why = (f"guessing: the ranges holding GPU work mark operators ({', '.join(map(repr, ops[:3]))}), none a "
               f"step; proposed: {window}; the operator groups are listed as alternatives")
    else:
        best = rows[0]
        why = (f"guessing: no NVTX range marks a step (the one holding the most GPU work, '{best['name_group']}', "
               f"is not step-like: {'; '.join(best['reasons'])}); proposed: {window}; the ranges are listed as "
               "alternatives")
    return {"kind": "gpu_active", "shape": "active", "why": why, "guess": bool(rows), "covers": "step",
            "window_ns": spans}


def _duration(ns: int) -> str:
    """A window's length in the unit that shows it: s from 0.1 s, ms from 0.1 ms, else µs."""
    return (f"{ns / 1e9:.3f} s" if ns >= 100_000_000 else f"{ns / 1e6:.3f} ms" if ns >= 100_000
            else f"{ns / 1e3:.3f} µs")
