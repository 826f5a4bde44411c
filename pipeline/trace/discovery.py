"""Region discovery: which NVTX range marks one step, for `mfu inspect` and `mfu init`.

The figures come from one SQL chain over every range of the trace (sql/discovery_occurrences.sql,
discovery_work.sql, inspect_regions.sql) and the kernel rows inspect read once (inspect_read.sql);
this module only turns them into a verdict a user can check: which names look like a
training/inference step and why, or, when none does, that any choice is a guess.
"""

from __future__ import annotations

from typing import Any

import duckdb

from pipeline.trace import chain

FILES = {"discovery_occurrences", "discovery_work", "inspect_regions"}     # kernel_rows: the caller's read
# What makes a name step-like (all must hold); the reasons printed use the same numbers.
MIN_REPEATS = 2          # occurrences in every process that has the name
MIN_SHARE = 0.5          # of the trace's kernel time launched inside its occurrences
MAX_PERIOD_CV = 0.2      # coefficient of variation of the start-to-start period (after the first)
WARMUP_FACTOR = 1.2      # leading occurrences slower than this x the median are warm-up
GUESS = ("this trace has no NVTX range that covers one step; mark your step with "
         "`nvtx.range('train_step')` or use `covers: N` on a wider range")
CAPTURE = "`nsys profile --trace=cuda,nvtx`"
NO_RANGES = ("this trace has no NVTX ranges, so nothing marks a step and `mfu run` has no region to measure: wrap "
             "each step in a range (`torch.cuda.nvtx.range_push('train_step')` ... `torch.cuda.nvtx.range_pop()`) "
             f"and capture again with {CAPTURE}")
NAMELESS = ("this trace's {ranges:,} NVTX ranges have no name (text NULL and a textId in no StringIds row), so no "
            "region can select them: the export is incomplete; export the report again with `nsys export --type sqlite`")
NO_KERNELS = ("this trace holds no GPU kernels, so no range encloses GPU work and `mfu run` has nothing to "
              f"measure: capture again with CUDA tracing on ({CAPTURE})")
NO_KERNEL_TIME = ("this trace's {kernels:,} kernels all have no length (each ends at or before its start): it lost "
                  "their GPU timestamps, so no range encloses measurable GPU work, and a `mfu run` report over them "
                  "is invalid (warning kernels_without_length): export the report again with `nsys export --type "
                  "sqlite`")
SUFFIX_NOTE = ("names marked '…' carry PyTorch's ', seq = N' / ', op_id = M' suffixes, one per call: "
               "`match: prefix` on the name groups them")


def discover(con: duckdb.DuckDBPyConnection, limit: int, ranges: int, kernels: int = 0) -> dict[str, Any]:
    """Name groups ranked by the GPU work they enclose, each with why it is (not) step-like; `ranges` counts
    the trace's NVTX ranges, named or not (none named is not the same as none at all), and `kernels` its kernel
    rows (kernels without any time are not the same as none: the trace lost their timestamps)."""
    rows = chain.run(con, FILES, limit=limit, min_repeats=MIN_REPEATS, min_share=MIN_SHARE,
                     max_period_cv=MAX_PERIOD_CV, warmup_factor=WARMUP_FACTOR)["inspect_regions"]
    for r in rows:
        r["reasons"] = reasons(r, kernels)
    steps = [r["name_group"] for r in rows if r["step_like"]]
    best = rows[0] if rows else None
    if best is None:
        message = NAMELESS.format(ranges=ranges) if ranges else NO_RANGES
    elif best["kernel_share"] is None:       # no kernel time in the whole trace: no share to rank by
        message = NO_KERNEL_TIME.format(kernels=kernels) if kernels else NO_KERNELS
    elif steps:
        message = (f"'{steps[0]}' looks like one step: {'; '.join(rows[0]['reasons'])}"
                   + (f" (also step-like: {', '.join(repr(s) for s in steps[1:])})" if len(steps) > 1 else ""))
    elif best["kernel_share"]:
        message = (f"guessing: {GUESS}. The range enclosing the most GPU work is '{best['name_group']}', "
                   f"but it is not step-like: {'; '.join(best['reasons'])}")
    else:
        message = f"guessing: {GUESS}. No range encloses attributed GPU work"
    return {"regions": rows, "step_like": steps, "guessing": not steps, "message": message,
            "suffix_note": SUFFIX_NOTE if any(r["has_suffix"] for r in rows) else None}


def reasons(r: dict[str, Any], kernels: int = 0) -> list[str]:
    """Each criterion of a step-like name, stated with the figure it was judged on; `kernels`: the trace's kernel
    rows, so no kernel time is not called no kernels when they are there without lengths (as the verdict says)."""
    share = r["kernel_share"]
    cv = r["period_cv"]
    return [
        "top-level" if r["min_depth"] == 0 else f"nested (depth {r['min_depth']}), not top-level",
        (f"repeats {r['occurrences_per_process_min']}x per process" if r["occurrences_per_process_min"] >= MIN_REPEATS
         else f"only {r['occurrences_per_process_min']} occurrence(s) in a process"),
        (("no GPU kernels in the trace" if not kernels else f"no GPU kernel time in the trace (its {kernels:,} kernels "
          "have no length)") if share is None else
         f"{100 * share:.1f} % of the trace's kernel time launched inside"
         + ("" if share >= MIN_SHARE else f" (under {100 * MIN_SHARE:.0f} %)")),
        ("no period (one occurrence)" if r["period_ns"] is None else
         f"one period, {r['period_ns'] / 1e6:.3f} ms: too few to judge its steadiness" if cv is None else
         f"period {r['period_ns'] / 1e6:.3f} ms, CV {100 * cv:.1f} %"
         + (f" (periods after occurrence {r['period_skip']})" if r["period_skip"] else "")
         + ("" if cv <= MAX_PERIOD_CV else f" (over {100 * MAX_PERIOD_CV:.0f} %: not steady)")),
    ]
