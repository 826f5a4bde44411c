"""The pipeline in one place: job -> trace -> times -> FLOPs and peak -> result -> report files.

`run_job` is the whole story; the helpers below it only adapt one layer's
output to the next. Nothing here does arithmetic on kernels or formulas.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.analysis import classes
from pipeline.analysis import metrics
from pipeline.analysis import precision
from pipeline.analysis import ranks
from pipeline.report import publish, render
from pipeline.report import result
from pipeline.analysis import roofline
from pipeline.job.config import Job, load_job
from pipeline.errors import ConfigError, ExitCode
from pipeline.model.flops import FlopsResult, compute_flops
from pipeline.hardware.catalog import load_catalog
from pipeline.analysis.measure import Measurement


def run_job(job: Job, shared: ranks.TraceSet | None = None, cache_dir: Path | None = None) -> dict[str, Any]:
    """Measure the job's region in its trace(s) and compute every figure of the report.

    `shared`: trace files already opened for several jobs of a batch (each file read once).
    """
    fl = job_flops(job)                       # config mistakes surface before the trace is read
    scope_warnings = numerator_check(job, fl)
    catalog = load_catalog()
    analysis = job.data.get("analysis", {})
    rules = _rules(job, analysis)
    ts = shared or ranks.open_set(job.trace_files(), cache_dir=cache_dir)
    try:
        sm = ranks.measure_set(ts, job, rules)
        where = classes.measure_all(ts.traces[0], sm.measurement, analysis.get("figures", []))
    finally:
        if shared is None:
            ts.close()
    m = sm.measurement
    check_gpu_scope(job, m)
    peak = ranks.resolve_set_peak(catalog, job.hardware, sm)
    m.warnings.extend(scope_warnings)
    res = result.build(job, ts.traces[0], m, peak, fl)
    ranks.enrich(res, sm, ts)
    figure_device_s = where.pop("figure_device_s")
    res.update(where)
    res["hardware"]["ridge_flop_per_byte"] = (metrics.ridge_flop_per_byte(peak.peak_tflops, peak.hbm_gbps)
                                              if peak.hbm_gbps else None)
    res["warnings"] += precision.judge(res["gemm_precision"], job.hardware, peak, catalog)
    res["warnings"] += classes.graph_rows_warning(res["kernel_classes"])
    res["roofline"] = roofline.table(res, job.data, fl, figure_device_s)
    res["warnings"] += roofline.above_roof(res["roofline"])
    unsteady = metrics.unsteady_steps([o["index"] for o in res["occurrences"]],
                                      [o.get("step_time_s", o["wall_time_s"]) for o in res["occurrences"]])
    res["warnings"] += [unsteady] if unsteady else []
    return res


def _rules(job: Job, analysis: dict[str, Any]) -> list[classes.Rule]:
    """Kernel-class rules, the job's first; a broken pattern is located in the job file."""
    try:
        return classes.load_rules(analysis.get("kernel_classes"))
    except ConfigError as exc:
        raise ConfigError([job.locate(p) for p in exc.problems]) from None


def validate_file(job_file: Path) -> Job:
    """Everything that can be checked without the trace: schema, scope rules, the model itself."""
    job = load_job(job_file)
    job_flops(job)
    return job


def run_file(job_file: Path, out_root: Path) -> tuple[dict[str, Any], Path]:
    """Load, run and write one job's report folder (all files or none)."""
    job = load_job(job_file)
    res = run_job(job)
    folder = out_root / job.name
    publish.replace_folder(folder, render.render_all(res))
    return res, folder


def job_flops(job: Job) -> FlopsResult:
    """FLOPs of one optimizer step (global_batch sequences); result.py scales them to an occurrence."""
    wl = job.workload
    try:
        return compute_flops(job.model, mode=wl["mode"], seq_len=wl.get("seq_len"), sequences=wl.get("global_batch"),
                             recompute=wl["recompute"], flash_recompute=wl["flash_recompute"],
                             convention=job.model.get("convention"), seq_lens=_packed(wl),
                             context_len=wl.get("context_len"), generated_tokens=wl.get("generated_tokens"))
    except ConfigError as exc:
        raise ConfigError([job.locate(p) for p in exc.problems]) from None


def numerator_check(job: Job, fl: FlopsResult) -> list[dict[str, str]]:
    """An explicit numerator next to a declared architecture must agree with it (SEMANTICS §11:
    one forward pass over a 5-step region printed 5.1 % "MFU"). Far off is a scope error."""
    arch = {k: v for k, v in job.model.items() if k not in ("flops_per_step", "hardware_flops_per_step")}
    if fl.convention != "explicit" or not ({"preset", "hidden"} & arch.keys()):
        return []
    if fl.tokens_per_step is None:
        return [{"code": "numerator_unchecked", "message": "flops_per_step is not cross-checked against the "
                 "declared architecture: add workload.seq_len and global_batch to check it"}]
    ref = job_flops(replace(job, model=arch)).model_flops_per_step
    ratio = fl.model_flops_per_step / ref
    if abs(ratio - 1) <= 0.10:
        return []
    code = "scope_mismatch" if not 0.5 <= ratio <= 2.0 else "numerator_differs"
    return [{"code": code, "message":
             f"flops_per_step ({fl.model_flops_per_step:.4g}) is {ratio:.3f}x what the declared architecture gives "
             f"for this workload ({ref:.4g}, convention {job.model.get('convention', 'megatron')}); "
             + ("about 1/3 looks like one forward pass where training needs forward + backward (3x); "
                if 0.28 <= ratio <= 0.38 else "")
             + "check that the numerator covers exactly one optimizer step of global_batch sequences"}]


def _packed(wl: dict[str, Any]) -> list[int] | None:
    """Job seq_lens describe one sequence slot; the step holds global_batch such slots."""
    return list(wl["seq_lens"]) * wl["global_batch"] if "seq_lens" in wl else None


def check_gpu_scope(job: Job, m: Measurement) -> None:
    """The time denominator uses num_gpus: fewer GPUs than ran the work is a scope error."""
    ran = len(m.devices_used)
    gpus = job.hardware["num_gpus"]
    if ran > gpus:
        raise ConfigError([job.problem(
            f"kernels of the selected occurrences ran on {ran} devices ({', '.join(map(str, m.devices_used))}), "
            f"but num_gpus is {gpus}", "/hardware/num_gpus",
            f"set num_gpus to the GPUs of the whole job (at least {ran})")])


def exit_code(res: dict[str, Any]) -> ExitCode:
    """1 when a threshold is missed or the result is invalid; 0 otherwise."""
    if res["status"] != "ok" or any(not t["passed"] for t in res["thresholds"]):
        return ExitCode.THRESHOLD
    return ExitCode.OK



