"""Synthetic exports with millions of kernels, generated inside DuckDB (benchmarks, issue #7).

`synth.generate` plants every interval in Python and keeps them to compute an exact
per-kernel ground truth: right for tests, far too slow and memory hungry at 20 M
kernels. Here every row is a pure function of its index (pipeline/trace/sql/synth_scaled.sql)
and DuckDB writes the rows straight into the SQLite file, a chunk of steps per statement
(CHUNK_KERNELS), so memory stays flat and time grows linearly. Same tables, columns and quirks as `synth` (repeating
correlationIds, autograd-thread launches, duplicate launch rows, NCCL overlap, kernels
outliving the range); no setup kernels and no dropped launches. The truth file holds
only what follows from the layout: every kernel of a step is launched inside its range.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from pipeline import progress
from pipeline.trace import queries
from pipeline.trace.synth import COMPUTE_NAMES, HOST, NCCL_NAME, SynthSpec, Tables, write_export
from pipeline.trace.open import literal
from pipeline.trace.connection import connect

# Kernels written per statement: DuckDB held about 60 MB per 0.3 M kernels written by one INSERT
# into SQLite, so one statement for an 8 M-kernel trace passed the connection's 512 MB cap (out of
# memory) and took 1.4-2.1 GB without it; chunks of steps keep it near 200 MB.
CHUNK_KERNELS = 1_000_000


def generate_scaled(spec: SynthSpec, out: Path) -> dict:
    """Write `out` (SQLite) and `out` + '.truth.json' with counts only; return that truth."""
    assert spec.region is not None, "a scaled trace's steps are named ranges (synth_scaled.sql plants them)"
    t = Tables()
    for text in (spec.region, "cudaLaunchKernel", "cudaLaunchKernel_v7000", NCCL_NAME, *COMPUTE_NAMES):
        t.sid(text)                       # ids 1.. in this order, as synth_scaled.sql expects
    write_export(spec, t, out)            # schema, strings, GPUs, processes, metadata; no events yet
    con = connect()
    try:
        con.execute("SET preserve_insertion_order = true")
        con.execute(f"ATTACH {literal(out)} AS out (TYPE sqlite)")
        con.execute("BEGIN")
        per_step = spec.ranks * spec.kernels_per_step
        chunk = max(1, CHUNK_KERNELS // per_step)
        with progress.phase("writing the trace", total=spec.steps, unit="steps", con=con) as shown:
            for first in range(0, spec.steps, chunk):
                queries.run(con, "synth_scaled", **_params(spec), first_step=first,
                            last_step=min(first + chunk, spec.steps) - 1)
                shown.advance(min(chunk, spec.steps - first))
        con.execute("COMMIT")
    finally:
        con.close()
    truth = _truth(spec)
    Path(str(out) + ".truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    return truth


def _params(spec: SynthSpec) -> dict:
    return {"host": HOST, "first_pid": spec.first_pid, "ranks": spec.ranks, "steps": spec.steps,
            "k": spec.kernels_per_step, "step_ns": spec.step_ns, "step_gap_ns": spec.step_gap_ns,
            "tail_ns": spec.tail_ns, "rank_skew_ns": spec.rank_skew_ns, "busy_fraction": spec.busy_fraction,
            "nccl_every": spec.nccl_every, "second_thread_every": spec.second_thread_every,
            "duplicate_every": spec.duplicate_every, "seed": spec.seed, "compute_names": len(COMPUTE_NAMES)}


def _truth(spec: SynthSpec) -> dict:
    """What the layout guarantees, without reading a row back: counts per occurrence and in total."""
    per_step = spec.ranks * spec.kernels_per_step
    dups = -(-spec.kernels_per_step // spec.duplicate_every) if spec.duplicate_every else 0
    return {"spec": asdict(spec), "scaled": True,
            "kernels": per_step * spec.steps,
            "runtime_rows": spec.ranks * spec.steps * (spec.kernels_per_step + dups),
            "occurrences": [{"index": s + 1, "processes": spec.ranks, "kernel_count": per_step}
                            for s in range(spec.steps)]}
