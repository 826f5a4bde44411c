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
from pipeline.errors import ResultWarning
from pipeline.job.config import Hardware
from pipeline.trace import queries
from pipeline.trace.open import Trace

MISMATCH_SHARE = 0.10        # issue #11 §5: more than 10 % of GEMM time in another precision
TOP_NAMES = 3
UNKNOWN = "unknown"


def measure(trace: Trace, classes: tuple[str, ...], fp16_accumulate: tuple[str, ...]) -> dict[str, Any]:
    """Time per precision of the kernels of `classes` (those classify.sql gave a precision), and the time of
    the fp16 ones whose names match a `fp16_accumulate` pattern (they accumulate in FP16 too)."""
    rows = queries.run(trace.con, "precision_times", names=TOP_NAMES)
    total = sum(r["sum_ns"] for r in rows)
    acc: dict[str, Any] = (
        queries.run(trace.con, "fp16_accumulate_times", patterns=list(fp16_accumulate), names=TOP_NAMES)[0]
        if fp16_accumulate else {"kernel_count": 0, "sum_ns": 0, "top_names": []})
    return {"classes": list(classes), "sum_s": total / NS,
            "precisions": [{"precision": r["precision"], "count": r["kernel_count"], "sum_s": r["sum_ns"] / NS,
                            "share": r["sum_ns"] / total if total else None, "kernels": list(r["top_names"])}
                           for r in rows],
            "fp16_accumulate": {"count": acc["kernel_count"], "sum_s": acc["sum_ns"] / NS,
                                "share": acc["sum_ns"] / total if total else None, "kernels": list(acc["top_names"])}}


def matches(inferred: str, hardware: Hardware) -> bool | None:
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


def judge(measured: dict[str, Any], hardware: Hardware, peak_tflops: float, gpu: str,
          peaks: dict[str, float | None], fp16_accumulate_tflops: float | None = None
          ) -> tuple[dict[str, Any], list[ResultWarning]]:
    """The section completed with the declared precision and each precision's peak (`peaks`, from the
    catalog: hardware/detect.peak_at), a warning on a mismatch above 10 %, and one when more than 10 %
    ran in FP16-accumulate kernels on a GPU that runs them faster than the peak used
    (`fp16_accumulate_tflops`: hardware/detect.fp16_accumulate_at). `measured` is not changed."""
    rows = [{**row, "matches_declared": matches(row["precision"], hardware), "peak_tflops": peaks.get(row["precision"])}
            for row in measured["precisions"]]
    other = [r for r in rows if r["matches_declared"] is False]
    section = {**measured, "declared": hardware["precision"], "precisions": rows,
               "mismatch_share": sum(r["share"] for r in other) if measured["sum_s"] else None}
    warnings = _accumulate_warning(section, hardware, peak_tflops, gpu, fp16_accumulate_tflops)
    if not other or section["mismatch_share"] <= MISMATCH_SHARE:
        return section, warnings
    unknown = sum(r["share"] for r in rows if r["precision"] == UNKNOWN)
    ran = "; ".join(f"{100 * r['share']:.1f} % in {r['precision']} ({_peak_text(r['peak_tflops'])}: "
                    + ", ".join(r["kernels"]) + ")" for r in other)
    mismatch: ResultWarning = {"code": "precision_mismatch", "message":
        f"{100 * section['mismatch_share']:.1f} % of matrix-kernel time ({', '.join(section['classes'])}) "
        f"ran in a precision other than the declared {section['declared']} "
        f"({_peak_text(peak_tflops)} on {gpu}, used for MFU): {ran}. The kernel names say so; check "
        "hardware.precision against the model's dtype/autocast"
        + (f" ({100 * unknown:.1f} % of that time has names that carry no type and is not counted)"
           if unknown else "")}
    return section, [mismatch] + warnings


def faster_than_declared(section: dict[str, Any], peak_tflops: float) -> tuple[str, ...]:
    """Precisions the matrix kernels ran in, over 10 % of their time, whose peak is above the one used: the
    likeliest cause of an MFU above 100 % when they are there (`section`: judge's)."""
    return tuple(r["precision"] for r in section["precisions"] if r["matches_declared"] is False
                 and (r["share"] or 0) > MISMATCH_SHARE and (r["peak_tflops"] or 0) > peak_tflops)


def _accumulate_warning(section: dict[str, Any], hardware: Hardware, peak_tflops: float, gpu: str,
                        acc_tflops: float | None) -> list[ResultWarning]:
    """docs/figures.md §8, the peak of the precision the math ran in: a GeForce card's fp16 figure is its FP32-accumulate
    rate; kernels that accumulate in FP16 run at up to twice it, so MFU against it overstates their share of the peak."""
    if acc_tflops is None or acc_tflops <= peak_tflops or hardware["precision"] != "fp16":
        return []
    acc = section["fp16_accumulate"]
    if acc["share"] is None or acc["share"] <= MISMATCH_SHARE:
        return []
    return [{"code": "fp16_accumulate", "message":
             f"{100 * acc['share']:.1f} % of matrix-kernel time ({', '.join(section['classes'])}) ran in kernels whose "
             f"names say they accumulate in FP16 ({', '.join(acc['kernels'])}); {gpu} runs FP16-accumulate tensor math "
             f"at {acc_tflops:,g} TFLOP/s dense, {acc_tflops / peak_tflops:.3g}x the {_peak_text(peak_tflops)} used for "
             "MFU (the catalog's fp16 figure is its FP32-accumulate rate), so MFU overstates how close that work "
             f"came to the GPU's peak. If the matrix math accumulates in FP16, set hardware.peak_tflops: {acc_tflops:g}"}]


def _peak_text(tflops: float | None) -> str:
    return "peak unknown" if tflops is None else f"peak {tflops:,g} TFLOP/s"      # 1,978.9 as the tables print it
