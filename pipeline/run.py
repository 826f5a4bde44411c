"""The pipeline in one place: job -> trace -> times -> FLOPs and peak -> result -> report files.

`run_job` is the whole story; the helpers below it only adapt one layer's
output to the next. Nothing here does arithmetic on kernels or formulas.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from . import breakdown, metrics, render, result, roofline
from .config import Job, load_job
from .errors import ConfigError, ExitCode, MfuError
from .executor import Extract, Request, executor, extract_trace
from .flops import FlopsResult, compute_flops
from .hardware import load_catalog, resolve_peak
from .measure import Measurement


def run_job(job: Job, cache_dir: Path | None = None) -> dict[str, Any]:
    """Measure the job's region in its trace and compute every figure of the report."""
    fl = job_flops(job)                       # config mistakes surface before the trace is read
    [extract] = extract_trace(job.trace_path, [request(job)], cache_dir)
    return finish_job(job, extract, fl)


def request(job: Job) -> Request:
    """What the trace must answer for this job: its region plus the kernel-class breakdown it asks for."""
    analysis = job.data.get("analysis", {})
    return Request(job.region, _rules(job, analysis), analysis.get("figures", []))


def finish_job(job: Job, extract: Extract, fl: FlopsResult, catalog: Any = None) -> dict[str, Any]:
    """Everything after the trace: scope checks, peak, result. Runs locally whatever executed the extract.

    `catalog` lets a batch parse the GPU catalog once instead of once per job.
    """
    if extract.error is not None:
        raise extract.error
    m, where = extract.measurement, dict(extract.breakdown)
    check_gpu_scope(job, m)
    peak = resolve_peak(catalog or load_catalog(), job.hardware, extract.gpu_rows, m.devices_used)
    m.warnings.extend(numerator_check(job, fl))
    res = result.build(job, extract.trace, m, peak, fl)
    figure_device_s = where.pop("figure_device_s")
    res.update(where)
    res["hardware"]["ridge_flop_per_byte"] = (metrics.ridge_flop_per_byte(peak.peak_tflops, peak.hbm_gbps)
                                              if peak.hbm_gbps else None)
    res["roofline"] = roofline.table(res, job.data, fl, figure_device_s)
    res["warnings"] += roofline.above_roof(res["roofline"])
    return res


def run_batch(job_files: list[Path], out_root: Path, cache_dir: Path | None = None,
              engine: str = "local") -> list[tuple[Path, dict[str, Any] | None, Path | MfuError]]:
    """Run many jobs with one extraction task per trace file (shared by every job reading it).

    Returns (job file, result, report folder) per job in order, or (job file, None, error).
    """
    loaded: dict[Path, tuple[Job, Request] | MfuError] = {}
    for f in job_files:
        try:
            job = load_job(f)
            job_flops(job)
            loaded[f] = (job, request(job))
        except MfuError as exc:
            loaded[f] = exc
    jobs = [j for j in loaded.values() if not isinstance(j, MfuError)]
    traces = list(dict.fromkeys(j.trace_path.resolve() for j, _ in jobs))
    work = [(t, [r for j, r in jobs if j.trace_path.resolve() == t]) for t in traces]
    cache_dir = cache_dir.resolve() if cache_dir else None      # workers elsewhere need absolute paths
    with executor(engine) as run_map:
        done = dict(zip(traces, (iter(e) for e in run_map(work, cache_dir))))
    out: list[tuple[Path, dict[str, Any] | None, Path | MfuError]] = []
    catalog = load_catalog()
    for f, item in loaded.items():
        try:
            if isinstance(item, MfuError):
                raise item
            job = item[0]
            res = finish_job(job, next(done[job.trace_path.resolve()]), job_flops(job), catalog)
            folder = out_root / job.name
            render.write_files(folder, render.render_all(res))
            out.append((f, res, folder))
        except MfuError as exc:
            out.append((f, None, exc))
    return out


def _rules(job: Job, analysis: dict[str, Any]) -> list[breakdown.Rule]:
    """Kernel-class rules, the job's first; a broken pattern is located in the job file."""
    try:
        return breakdown.load_rules(analysis.get("kernel_classes"))
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
    render.write_files(folder, render.render_all(res))
    return res, folder


def job_flops(job: Job) -> FlopsResult:
    """FLOPs of one optimizer step (global_batch sequences); result.py scales them to an occurrence."""
    wl = job.workload
    try:
        return compute_flops(job.model, mode=wl["mode"], seq_len=wl["seq_len"], sequences=wl["global_batch"],
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



