"""Synthetic result.json documents for gate and comparability tests: every figure written from its formula here.

The template is the demo's result (all fields a real run writes); the per-occurrence
samples and the headline figures that depend on them are replaced, so a test chooses
the step times and knows every figure by hand.
"""

from __future__ import annotations

import copy
import json
import random
import statistics
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[1] / "reports" / "demo" / "result.json"


def result(name: str, steps_s: list[float], changes: dict[str, object] | None = None) -> dict:
    """A result whose occurrences took `steps_s`; `changes` sets fields by dotted path ('flops.convention')."""
    r = copy.deepcopy(_template())
    flops_occ, gpus, peak = 4 * 10**15, 8, 989.4
    r["job"].update(name=name, file=f"{name}.yaml")
    r["flops"].update(model_flops_per_occurrence=flops_occ, model_flops_per_step=flops_occ, tokens_per_step=65536,
                      hardware_flops_per_occurrence=flops_occ, convention="megatron", steps_per_occurrence="1")
    r["hardware"].update(num_gpus=gpus, peak_tflops=peak, precision="bf16", key="h100-sxm")
    r["region"].update(steps_per_occurrence="1", covers="step", attribution="process")
    r["occurrences"] = [{"index": i, "wall_time_s": t, "step_time_s": t,
                         "mfu_pct_wall": 100.0 * flops_occ / (t * gpus * peak * 1e12)} for i, t in enumerate(steps_s)]
    wall = sum(steps_s)
    mfu = 100.0 * flops_occ * len(steps_s) / (wall * gpus * peak * 1e12)
    r["metrics"].update(mfu_pct_wall=mfu, hfu_pct_wall=mfu, tokens_per_s=65536 * len(steps_s) / wall)
    r["step_time"].update(median_s=statistics.median(steps_s),
                          cv_pct=100 * statistics.pstdev(steps_s) / (wall / len(steps_s)))
    r["totals"].update(wall_time_s=wall, occurrences=len(steps_s))
    r["status"] = "ok"
    r.pop("step_parts", None)      # the demo's parts are not these steps': nothing to decompose (docs/compare.md)
    for dotted, value in (changes or {}).items():
        *path, last = dotted.split(".")
        node = r
        for key in path:
            node = node[key]
        node[last] = value
    return r


def normal_steps(seed: int, n: int, cv: float, mean: float = 1.0) -> list[float]:
    """n step times drawn from N(mean, (cv·mean)²) with a fixed seed."""
    rng = random.Random(seed)
    return [rng.gauss(mean, cv * mean) for _ in range(n)]


_cache: dict = {}


def _template() -> dict:
    if "t" not in _cache:
        _cache["t"] = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    return _cache["t"]
