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
WARMUP_HELD = 0.1        # most of its kernel time a step may share with a range named warm-up it holds
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
NUMBER = "<n>"                  # how a numbered group's label writes its number (numbered_label, macros.sql)
SUFFIX_RE = "(, (seq|op_id) = [0-9]+.*)?"          # PyTorch's per-call suffix, as range_group drops it
SUFFIX_NOTE = ("names marked '…' carry PyTorch's ', seq = N' / ', op_id = M' suffixes, one per call: "
               "`match: prefix` on the name groups them")


def discover(con: duckdb.DuckDBPyConnection, limit: int, kernels: int = 0) -> dict[str, Any]:
    """Name groups ranked by the GPU work they enclose, each with why it is (not) step-like and the region keys
    selecting it; `kernels`: the trace's kernel rows, so no kernel time is not called no kernels when they are
    there without lengths. The verdict is the proposal's (trace/proposal.py), made from these rows."""
    rows = chain.run(con, FILES, limit=limit, min_repeats=MIN_REPEATS, min_share=MIN_SHARE,
                     max_period_cv=MAX_PERIOD_CV, warmup_factor=WARMUP_FACTOR,
                     max_warmup_held=WARMUP_HELD)["inspect_regions"]
    for r in rows:
        r["reasons"] = reasons(r, kernels)
        r["select"] = selector(r)
    return {"regions": rows, "step_like": [r["name_group"] for r in rows if r["step_like"]],
            "suffix_note": SUFFIX_NOTE if any(r["has_suffix"] for r in rows) else None}


def selector(r: dict[str, Any]) -> dict[str, str]:
    """The region `name` and `match` that select exactly the group's ranges: a numbered group as an anchored RE2
    pattern (its number any run of digits, so 'Warm-up Step 1' is not a 'Step <n>'), a suffixed one by prefix."""
    if r["numbered"]:
        head, tail = r["name_group"].rsplit(NUMBER, 1)
        return {"name": f"^{re2_literal(head)}[0-9]+{re2_literal(tail)}{SUFFIX_RE if r['has_suffix'] else ''}$",
                "match": "regex"}
    return {"name": r["name_group"], "match": "prefix" if r["has_suffix"] else "exact"}


def re2_literal(text: str) -> str:
    """`text` as an RE2 pattern matching itself: its metacharacters escaped (Python's re.escape also escapes
    characters RE2 may not accept escaped)."""
    return "".join("\\" + c if c in "\\.+*?()|[]{}^$" else c for c in text)


def reasons(r: dict[str, Any], kernels: int = 0) -> list[str]:
    """Each criterion of a step-like name, stated with the figure it was judged on; `kernels`: the trace's kernel
    rows, so no kernel time is not called no kernels when they are there without lengths (as the verdict says)."""
    share = r["kernel_share"]
    cv = r["period_cv"]
    repeats = r["occurrences_per_process_min"] if r["warmup_named"] else r["after_warmup"]
    return [*_warmup_reasons(r),
        "top-level" if r["min_depth"] == 0 else f"nested (depth {r['min_depth']}), not top-level",
        (f"repeats {repeats}x per process" if repeats >= MIN_REPEATS else f"only {repeats} occurrence(s) in a process"
         + (" after the warm-up" if r["named_warmup_occurrences"] and not r["warmup_named"] else "")),
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


def _warmup_reasons(r: dict[str, Any]) -> list[str]:
    """What a range named warm-up does to a group: it is never the measured steps, its occurrences ending inside
    the warm-up (or before it) are skipped, and one holding much of the warm-up's GPU work is no step."""
    if r["warmup_named"]:
        return ["its name says warm-up: never proposed as the measured steps"]
    out = []
    if r["named_warmup_occurrences"]:
        out.append(f"{r['named_warmup_occurrences']} occurrence(s) end by the end of the named warm-up"
                   + ("" if r["after_warmup"] else ": none after it"))
    if held := warmup_held(r):
        out.append(f"holds the named warm-up ({100 * held:.1f} % of its kernel time launched inside it)"
                   + (": not the measured steps" if held > WARMUP_HELD else ""))
    return out


def warmup_held(r: dict[str, Any]) -> float:
    """The share of a group's kernel time that its occurrences holding the named warm-up launched inside it."""
    return r["warmup_held_ns"] / r["kernel_sum_ns"] if r["warmup_held_ns"] and r["kernel_sum_ns"] > 0 else 0.0


def skip(row: dict[str, Any]) -> int:
    """Leading occurrences to leave out: those inside a named warm-up, or slow ones while a second one stays."""
    slow = row["warmup_occurrences"] if row["warmup_occurrences"] < row["occurrences_per_process_min"] - 1 else 0
    return max(slow, row["named_warmup_occurrences"])
