"""`mfu demo`: the whole pipeline on a trace the tool generates itself, so a new user sees a real report.

The trace is synthetic (pipeline/trace/synth.py) and lives in a temporary folder; the
job is configs/examples/demo.yaml. Everything is seeded, so the report is
byte-identical from run to run — reports/demo/ in the repository is this output.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from pipeline.bundled import config_path
from pipeline.run import load_checked, run_to_folder
from pipeline.trace.synth import SynthSpec, generate

DEMO_JOB = config_path("examples", "demo.yaml")
# 8 ranks x 6 steps of ~1.1 s: Llama-3-8B at 8 x 8192 tokens per step is ~3.37 PFLOP,
# about 39 % of 8 x 989.4 TFLOP/s over that time. Its GEMM and attention launches sit in emit_nvtx-style
# operator ranges with shapes (some without, some launches in none), so the report counts FLOPs from them.
DEMO_SPEC = SynthSpec(ranks=8, steps=6, kernels_per_step=160, step_ns=1_100_000_000,
                      step_gap_ns=30_000_000, tail_ns=4_000_000, lead_ns=60_000_000, busy_fraction=0.85,
                      rank_skew_ns=150_000, seed=2024, operator_shapes=True)


def run_demo(out_root: Path) -> tuple[dict[str, Any], Path]:
    with tempfile.TemporaryDirectory(prefix="mfu-demo-") as tmp:
        job = Path(tmp) / DEMO_JOB.name
        shutil.copyfile(DEMO_JOB, job)
        generate(DEMO_SPEC, Path(tmp) / "demo.sqlite")
        return run_to_folder(load_checked(job), out_root)
