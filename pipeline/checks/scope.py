"""The job against what it measures (docs/figures.md §7, §11): the same work, the same GPUs, real time intervals.

Applied by run.run_job once the numerator is known and once the trace is measured: an explicit
numerator must agree with the declared architecture (`numerator_agrees`, `numerator_checkable`:
warnings; far off, `scope_mismatch` makes the result invalid) and with the FLOPs the trace's shapes count
(`counted_agrees`, a warning), the measured work must fit the job's
GPUs (`gpu_scope`, exit 3) and, when it ran on fewer, the figure says what it then assumes (`gpus_unseen`, a
warning), the selected ranges must be real time intervals (`ranges_have_length`,
exit 4), ranks whose kernels lost their lengths are named (`kernels_have_length`, a warning), and a file
given twice is one rank (`repeated_files`, a warning), as a copy of one file under another name is one
capture (`identical_files`, a warning).
Each rule has its own test in tests/test_checks_scope.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from pipeline.analysis.trace_warnings import occurrence_runs
from pipeline.errors import Problem, ResultWarning
from pipeline.job.config import Job

Doc = Mapping[str, Any]
Warning = ResultWarning

# --------------------------------------------------------------------------- numerator vs architecture

NUMERATOR_TOLERANCE = Fraction(1, 10)   # docs/figures.md §11: conventions differ by up to ~10 %; beyond, the inputs differ
SCOPE_RATIO = (0.5, 2.0)            # outside: a different amount of work (scope error), not another convention
FORWARD_ONLY_RATIO = (0.28, 0.38)   # ~1/3: one forward pass where training counts forward + backward (3x)


def numerator_agrees(flops: int, reference: int | None, convention: str) -> list[Warning]:
    """An explicit numerator next to a declared architecture must agree with it (docs/figures.md §11:
    one forward pass over a 5-step region printed 5.1 % "MFU"). Far off is a scope error."""
    if reference is None:
        return []
    if abs(Fraction(flops) - reference) <= NUMERATOR_TOLERANCE * reference:     # exactly 10 % off still agrees,
        return []                        # on both sides (in floats 1.1 - 1 is above 0.1, and 110 of 100 warned)
    ratio = flops / reference
    low, high = SCOPE_RATIO
    code = "scope_mismatch" if not low <= ratio <= high else "numerator_differs"
    forward = FORWARD_ONLY_RATIO[0] <= ratio <= FORWARD_ONLY_RATIO[1]
    return [{"code": code, "message":
             f"flops_per_step ({flops:.4g}) is {ratio:.3f}x what the declared architecture gives "
             f"for this workload ({reference:.4g}, convention {convention}); "
             + ("about 1/3 looks like one forward pass where training needs forward + backward (3x); "
                if forward else "")
             + "check that the numerator covers exactly one optimizer step of global_batch sequences"}]


COUNTED_COVERAGE = 0.90            # counted FLOPs cover this share of GEMM/attention time: they can judge the numerator


def counted_agrees(counted: Doc, recompute: str, attention_share: float | None) -> list[Warning]:
    """The FLOPs counted from the trace's shapes (model/counted.py) against the declared hardware FLOPs, per GPU
    and occurrence: when the count covers most GEMM and attention time, a difference beyond the convention
    tolerance is the declared work, not the count (issue #31). `attention_share`: attention's share of the
    count, which a convention (causal halving) changes."""
    share, declared = counted["coverage"]["share"], counted["declared"]
    ratio = declared["ratio_to_hardware"] if declared else None
    if share is None or share < COUNTED_COVERAGE or ratio is None or abs(ratio - 1) <= NUMERATOR_TOLERANCE:
        return []
    causes = ["batch or sequence wrong (workload.global_batch, seq_len, or region.covers: how many steps an "
              "occurrence holds)"]
    if ratio > 1 and recompute == "none":
        causes.append("recomputation not declared (workload.recompute, flash_recompute: the hardware re-ran "
                      "forwards the declared FLOPs leave out; full checkpointing is 4/3)")
    if attention_share:
        causes.append(f"wrong convention (attention is {attention_share:.0%} of the count; causal halving, "
                      "model.convention, changes it by half)")
    return [{"code": "counted_flops_differ", "message":
             f"the trace's recorded shapes count {declared['counted_per_gpu']:.4g} FLOPs per GPU and occurrence, "
             f"{ratio:.3f}x the declared hardware FLOPs ({declared['hardware_per_gpu']:.4g}), covering "
             f"{share:.0%} of GEMM and attention kernel time (more than ±{float(NUMERATOR_TOLERANCE):.0%}); likely: "
             + "; ".join(causes)}]


def numerator_checkable(beside_architecture: bool, tokens_per_step: int | None) -> list[Warning]:
    """Without seq_len and global_batch the architecture's FLOPs cannot be counted: say it was not checked."""
    if not beside_architecture or tokens_per_step is not None:
        return []
    return [{"code": "numerator_unchecked", "message": "flops_per_step is not cross-checked against the "
             "declared architecture: add workload.seq_len and global_batch to check it"}]


# --------------------------------------------------------------------------- the measured work

def gpu_scope(job: Job, devices_used: list[Any]) -> list[Problem]:
    """The time denominator uses num_gpus: fewer GPUs than ran the work is a scope error."""
    ran, gpus = len(devices_used), job.hardware["num_gpus"]
    if ran <= gpus:
        return []
    return [job.problem(f"kernels of the selected occurrences ran on {ran} devices "
                        f"({', '.join(map(str, devices_used))}), but num_gpus is {gpus}", "/hardware/num_gpus",
                        f"set num_gpus to the GPUs of the whole job (at least {ran})")]


def gpus_unseen(job: Job, devices_seen: list[str], ids_shared_by_hosts: bool) -> list[Warning]:
    """Fewer devices ran kernels than num_gpus: legitimate (one node or one rank of a larger job traced), so no
    error, but the figure then assumes the GPUs not traced did the same steps in the same wall time, with FLOPs
    of the whole job; a num_gpus typed too large would lower the MFU silently. Device ids are per host: when one
    id ran kernels of several hosts of one file (warning devices_of_several_hosts) the ids do not count the GPUs
    seen, and nothing is claimed."""
    seen, gpus = len(devices_seen), job.hardware["num_gpus"]
    if seen == 0 or seen >= gpus or ids_shared_by_hosts:
        return []
    return [{"code": "gpus_unseen", "message":
             f"kernels of the selected occurrences ran on {seen} device(s) ({', '.join(devices_seen)}), but "
             f"hardware.num_gpus is {gpus}: the MFU divides by {gpus} GPUs, so it assumes the {gpus - seen} GPU(s) "
             f"not in the trace ran the same steps in the same wall time, and that the FLOPs are those of the whole "
             f"job on all {gpus} GPUs. Tracing one node or rank of a larger job is fine if so; if the job ran on "
             f"only {seen} GPU(s), set hardware.num_gpus: {seen} (the MFU is then {gpus / seen:.3g}x this one)"}]


def ranges_have_length(ranks: Sequence[Doc]) -> str | None:
    """A selected range that ends before it starts, or has no length, is not a time interval: the trace's
    NVTX data cannot be right (exit 4), and no figure over it could be either."""
    bad = [r for r in ranks if r["cpu_range_ns"] <= 0]
    if not bad:
        return None
    shown = "; ".join(f"occurrence {r['occurrence']} rank {r.get('rank', r['pid'])}: "
                      + ("ends before it starts" if r["cpu_range_ns"] < 0 else "zero length")
                      + f" ({r['cpu_range_ns']} ns)" for r in bad[:10])
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    return (f"{len(bad)} selected range(s) of NVTX_EVENTS are not time intervals: {shown}{more}. Check the capture "
            "(unbalanced or cross-thread push/pop, a truncated export) or select other occurrences")


def kernels_have_length(ranks: Sequence[Doc], devices: Sequence[Doc]) -> list[Warning]:
    """Ranks whose attributed kernels in an occurrence all have no length (union 0 over kernel_count > 0: every end
    at or before its start) lost their GPU timestamps: their GPU time is unknown, not zero, and every figure taken
    from kernel lengths leaves it out while looking like a measurement (docs/figures.md §5). Name those ranks and the
    devices that ran only such kernels, and what does and does not stand."""
    lost: dict[str, dict[int, int]] = {}
    for r in ranks:
        if r["kernel_count"] and r["union_ns"] <= 0:
            lost.setdefault(str(r.get("rank", r["pid"])), {})[r["occurrence"]] = r["kernel_count"]
    if not lost:
        return []
    names = list(lost)
    shown = "; ".join(f"rank {rank} (occurrence(s) {occurrence_runs(sorted(occ))}: {_kernels(sum(occ.values()))})"
                      for rank, occ in list(lost.items())[:10])
    more = f"; and {len(names) - 10} more rank(s)" if len(names) > 10 else ""
    idle = [d["label"] for d in devices if d["kernel_count"] and d["union_s"] <= 0]
    on = f"; device(s) {', '.join(idle)} ran only such kernels" if idle else ""
    return [{"code": "kernels_without_length", "message":
             f"the attributed kernels of {shown}{more} all have no length (each ends at or before its start){on}: "
             "the trace lost their GPU timestamps (a damaged export: export the report again). Their GPU time is "
             "unknown, not zero, and is left out of everything taken from kernel lengths: kernel sums and unions, the "
             "active-time ratio, busy time per device and rank, class times, communication overlap and the roofline's "
             "measured times (per GPU over the devices whose kernels have length). The wall MFU rests on the NVTX "
             "ranges and the kernels' start times: a GPU tail past a range's end is lost with the ends"}]


def _kernels(count: int) -> str:
    return f"{count:,} kernel{'s' if count != 1 else ''}"


def repeated_files(repeats: list[tuple[str, str]]) -> list[Warning]:
    """The same file given twice (a symlink, a glob and a path) is one rank, read once: say so."""
    if not repeats:
        return []
    pairs = "; ".join(f"{a} is {b}" for a, b in repeats)
    return [{"code": "trace_file_repeated", "message": f"the job names the same trace file more than once ({pairs}); "
             "it is read once, as one set of ranks"}]


def identical_files(files: Sequence[Doc]) -> list[Warning]:
    """Two files with the same bytes are one capture under two names (a rank's file copied, a download kept
    twice): no two processes write byte-identical captures (process ids, clocks, host). Read as two ranks,
    its kernels count on twice the devices (the GPU-count checks), and the per-rank figures repeat it."""
    first: dict[str, str] = {}
    pairs = []
    for f in files:
        if f["sha256"] in first:
            pairs.append(f"{f['label']} = {first[f['sha256']]}")
        first.setdefault(f["sha256"], f["label"])
    if not pairs:
        return []
    return [{"code": "trace_files_identical", "message":
             f"trace files with the same contents (SHA-256) are read as different ranks ({'; '.join(pairs)}): "
             "one capture listed twice counts its kernels on twice the devices and repeats its rows in the "
             "per-rank figures; list each rank's own capture once"}]

