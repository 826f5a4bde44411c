"""The precision the matrix kernels actually ran in, against the one the job declares (#11 §5).

The denominator's peak depends on precision: a job declaring bf16 over GEMMs that ran in FP32
FFMA divides by a peak 15x too high. classify.sql reads the precision from each matrix kernel's
name (configs/kernel_classes.yaml, `precisions`), 'unknown' where the name says none;
precision_times.sql sums the time. Here the shares are set beside the declared precision and the
catalog peak each precision would have, and a share above MISMATCH_SHARE in another known
precision is a warning. Unknown time is never counted as a mismatch: it is not a guess.
"""

from __future__ import annotations

from typing import Any

from pipeline.analysis.measure import NS
from pipeline.trace import queries
from pipeline.trace.open import Trace

MISMATCH_SHARE = 0.10        # issue #11 §5: more than 10 % of GEMM time in another precision
TOP_NAMES = 3
UNKNOWN = "unknown"


def measure(trace: Trace, classes: tuple[str, ...]) -> dict[str, Any]:
    """Time per precision of the kernels of `classes` (those classify.sql gave a precision)."""
    rows = queries.run(trace.con, "precision_times", names=TOP_NAMES)
    total = sum(r["sum_ns"] for r in rows)
    return {"classes": list(classes), "sum_s": total / NS,
            "precisions": [{"precision": r["precision"], "count": r["kernel_count"], "sum_s": r["sum_ns"] / NS,
                            "share": r["sum_ns"] / total if total else None, "kernels": list(r["top_names"])}
                           for r in rows]}


def matches(inferred: str, hardware: dict[str, Any]) -> bool | None:
    """Does a precision read from names agree with hardware.precision? None for unknown.

    fp64 names cover fp64 and fp64_tensor; a declared fp8 with fp8_fraction expects bf16 too.
    """
    declared = hardware["precision"]
    if inferred == UNKNOWN:
        return None
    if inferred == "fp64":
        return declared in ("fp64", "fp64_tensor")
    return inferred == declared or (declared == "fp8" and hardware.get("fp8_fraction") is not None
                                    and inferred == "bf16")


def judge(measured: dict[str, Any], hardware: dict[str, Any], peak_tflops: float, gpu: str,
          peaks: dict[str, float | None]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The section completed with the declared precision and each precision's peak (`peaks`, from the
    catalog: hardware/detect.peak_at), and a warning on a mismatch above 10 %. `measured` is not changed."""
    rows = [{**row, "matches_declared": matches(row["precision"], hardware), "peak_tflops": peaks.get(row["precision"])}
            for row in measured["precisions"]]
    other = [r for r in rows if r["matches_declared"] is False]
    section = {**measured, "declared": hardware["precision"], "precisions": rows,
               "mismatch_share": sum(r["share"] for r in other) if measured["sum_s"] else None}
    if not other or section["mismatch_share"] <= MISMATCH_SHARE:
        return section, []
    unknown = sum(r["share"] for r in rows if r["precision"] == UNKNOWN)
    ran = "; ".join(f"{100 * r['share']:.1f} % in {r['precision']} ({_peak_text(r['peak_tflops'])}: "
                    + ", ".join(r["kernels"]) + ")" for r in other)
    return section, [{"code": "precision_mismatch", "message":
             f"{100 * section['mismatch_share']:.1f} % of matrix-kernel time ({', '.join(section['classes'])}) "
             f"ran in a precision other than the declared {section['declared']} "
             f"({_peak_text(peak_tflops)} on {gpu}, used for MFU): {ran}. The kernel names say so; check "
             "hardware.precision against the model's dtype/autocast"
             + (f" ({100 * unknown:.1f} % of that time has names that carry no type and is not counted)"
                if unknown else "")}]


def _peak_text(tflops: float | None) -> str:
    return "peak unknown" if tflops is None else f"peak {tflops:,g} TFLOP/s"      # 1,978.9 as the tables print it
