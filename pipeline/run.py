"""The pipeline in one place: job (checked, its FLOPs counted) -> trace -> times -> peak -> checks -> result -> files.

`run_job` is the only function that sequences the stages, for one trace file or many;
`mfu run`, `mfu demo`, batches and `mfu compare` all come through it (`run_to_folder`
adds the report files). Each stage returns its own typed output; result.build
assembles result.json once from them. Nothing here does arithmetic on kernels or formulas.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.analysis import classes, figures, metrics, precision, ranks, sharing
from pipeline.checks import plausibility, scope
from pipeline.checks.job_file import job_problems
from pipeline.errors import ConfigError, ExitCode, HardwareError, ResultWarning, TraceError
from pipeline.hardware.catalog import Catalog, load_catalog
from pipeline.hardware.detect import Peak, fp16_accumulate_at, peak_at, resolve_job_peak
from pipeline.job.config import Job, Workload, load_job
from pipeline.model import counted, roofline
from pipeline.model.flops import FlopsResult, flops_of, per_occurrence
from pipeline.model.presets import resolve_model
from pipeline.report import publish, render, result

NUMERATOR_KEYS = ("flops_per_step", "hardware_flops_per_step")   # an explicit numerator, not an architecture


def run_job(job: Job, shared: ranks.TraceSet | None = None, cache_dir: Path | None = None,
            window: sharing.SharedWindow | None = None, submit: ranks.Submit | None = None) -> dict[str, Any]:
    """Measure the job's region in its trace(s) and compute every figure of the report, stage by stage as
    ARCHITECTURE.md lists them: job, trace and analysis, model and hardware, checks, report.

    `shared`: trace files already opened for several jobs of a batch (each file read once).
    `window`: a window built for several jobs of a batch, this one among them (built once).
    `submit`: spare workers of the run's executor; with several files, each file's window is built by one.
    """
    job = checked(job)                     # job: its file's checks, unless load_checked ran them (before any trace)
    sm, where, trace_sha256 = _measure(job, shared, cache_dir, window, submit)      # trace, analysis
    m = sm.measurement
    if (not_intervals := scope.ranges_have_length(m.ranks)):        # a trace problem (exit 4) before any other
        raise TraceError(f"{job.trace_text}: {not_intervals}")
    model, fl = job.numerator                                                       # model: resolved when checked
    catalog = load_catalog()                                                        # hardware
    try:
        peak = resolve_job_peak(catalog, job.hardware, sm.files)
    except HardwareError as exc:                    # the fix is in the job file: say where
        raise ConfigError([job.problem(str(exc), exc.pointer)]) from None
    devices = [sm.device_labels[d] for d in m.devices_used]         # checks: as the report names them (file:device)
    _raise(scope.gpu_scope(job, devices))
    work = _work(job, fl, peak)
    fig, per_rank = figures.figures(m, work, sm.device_labels), figures.rank_figures(m, work)
    sections = {k: v for k, v in where.items() if k != "figure_device_s"}
    sections["gemm_precision"], precision_warnings = _precision(sections["gemm_precision"], job, catalog, peak)
    timed = sum(1 for d in fig.devices if d["union_s"] > 0)     # a device whose kernels lost their lengths has no time
    roofs = roofline.Roofs(peak.peak_tflops, peak.hbm_gbps, peak.precision, work.num_gpus, timed)
    sections["counted_flops"] = counted.section(sections["counted_flops"], fl, model, work, roofs,
                                                job.analysis.get("components", {}), job.steps_per_occurrence)
    rows = (roofline.table(fl, model, job, fig.totals, sections["kernel_classes"], roofs, where["figure_device_s"])
            + counted.roofline_rows(sections["counted_flops"], roofs))
    several_hosts = any(w["code"] == "devices_of_several_hosts" for w in m.warnings)
    warnings = (m.warnings + scope.gpus_unseen(job, devices, several_hosts) + scope.identical_files(sm.files)
                + _numerator_warnings(job, fl)
                + [{"code": "flops", "message": w} for w in fl.warnings]
                + [{"code": "hardware", "message": w} for w in peak.warnings]
                + scope.kernels_have_length(m.ranks, fig.devices) + per_rank.warnings + precision_warnings
                + scope.counted_agrees(sections["counted_flops"], fl.recompute,
                                       counted.attention_share(sections["counted_flops"]))
                + classes.graph_rows_warning(sections["kernel_classes"])
                + plausibility.roofline_under_roof(rows) + plausibility.roofline_under_peak(rows, peak.peak_tflops)
                + plausibility.figures_found_kernels(job.analysis.get("figures", []), where["figure_device_s"])
                + plausibility.achievable_is_a_ceiling(fig.metrics, peak.achievable_tflops)
                + _unsteady(fig.occurrences)
                + plausibility.occurrences_above_100(fig.occurrences)
                + plausibility.ranks_above_100(per_rank.summary, per_rank.ranks)
                + plausibility.percent_thresholds_below_one(job.thresholds))
    evidence = plausibility.Evidence(fig.metrics, [o["step_time_s"] for o in fig.occurrences],
                                     len(m.counts_per_process), warnings,
                                     precision.faster_than_declared(sections["gemm_precision"], peak.peak_tflops))
    status, reason = plausibility.verdict(job, evidence)
    return result.build(result.Outputs(                                             # report
        job=job, measurement=m, files=sm.files, trace_sha256=trace_sha256, time_sections=sections, flops=fl,
        work=work, peak=peak, ridge_flop_per_byte=(metrics.ridge_flop_per_byte(peak.peak_tflops, peak.hbm_gbps)
                                                   if peak.hbm_gbps else None),
        figures=fig, ranks=per_rank, roofline=rows, warnings=warnings, status=status, status_reason=reason,
        thresholds=plausibility.thresholds(job.thresholds, fig.metrics, fig.step_time, status)))


def _numerator_warnings(job: Job, fl: FlopsResult) -> list[ResultWarning]:
    """What the numerator checks say: the explicit FLOPs against the architecture beside them, whether they could
    be compared, and trace files named twice."""
    return (scope.numerator_agrees(fl.model_flops_per_step, *_reference(job, fl))
            + scope.numerator_checkable(_architecture_beside(job, fl) is not None, fl.tokens_per_step)
            + scope.repeated_files(job.repeated_trace_files()))


def _measure(job: Job, shared: ranks.TraceSet | None, cache_dir: Path | None,
             window: sharing.SharedWindow | None,
             submit: ranks.Submit | None) -> tuple[ranks.SetMeasurement, dict[str, Any], str]:
    """Every trace file read once: the combined measurement, the where-the-time-goes sections, the traces' hash."""
    spread = submit if window is None and shared is None and len(job.trace_files()) > 1 else None
    if spread is not None:
        ts, built = ranks.build_files(job, class_rules(job), cache_dir, spread)
    else:
        ts = window.ts if window else shared or ranks.open_set(job.trace_files(), cache_dir=cache_dir)
    try:
        if spread is None:
            built = window.cut(job) if window else ranks.build_set(ts, job, class_rules(job))
        figures = job.analysis.get("figures", [])
        sm, where = window.analyse(built, figures) if window else ranks.analyse_set(ts, built, figures)
        return sm, where, ts.sha256()
    finally:
        if shared is None and window is None:
            ts.close()


def _work(job: Job, fl: FlopsResult, peak: Peak) -> figures.Work:
    """The numerator scaled to one occurrence (the scope bridge), with the denominator's GPUs and peak."""
    steps = job.steps_per_occurrence
    return figures.Work(per_occurrence(fl.model_flops_per_step, steps),
                        per_occurrence(fl.hardware_flops_per_step, steps),
                        None if fl.tokens_per_step is None else per_occurrence(fl.tokens_per_step, steps),
                        job.hardware["num_gpus"], peak.peak_tflops, peak.achievable_tflops)


def _precision(measured: dict[str, Any], job: Job, catalog: Catalog, peak: Peak) -> tuple[dict[str, Any], list]:
    """The GEMM precision section judged against the declared precision, with each precision's catalog peak."""
    peaks = {r["precision"]: peak_at(catalog, peak, r["precision"]) for r in measured["precisions"]}
    return precision.judge(measured, job.hardware, peak.peak_tflops, peak.gpu, peaks,
                           fp16_accumulate_at(catalog, peak))


def run_to_folder(job: Job, out_root: Path, shared: ranks.TraceSet | None = None,
                  window: sharing.SharedWindow | None = None, cache_dir: Path | None = None,
                  submit: ranks.Submit | None = None, indexed: bool = False) -> tuple[dict[str, Any], Path]:
    """run_job, then the report folder out_root/<job name> (all files or none); `indexed` when out_root
    gets an index listing it (a batch: the pages then link up to it)."""
    res = run_job(job, shared=shared, cache_dir=cache_dir, window=window, submit=submit)
    folder = Path(out_root) / job.name
    publish.replace_folder(folder, render.render_all(res, indexed=indexed))
    return res, folder


def load_checked(job_file: Path) -> Job:
    """A job file read, schema-checked (load_job) and checked (`checked`): a broken job never reaches a trace."""
    return checked(load_job(job_file))


def checked(job: Job) -> Job:
    """Every check the job file gets, once, before any trace is opened: the job-file rules (job_file.JOB_RULES),
    the model section resolved (its preset, its shape: listed together with the rules' problems, not only once
    those are fixed), and its FLOPs counted. The job comes back carrying that numerator; a job checked already
    (by load_checked, for a batch or `mfu validate`) is returned as it is, so run_job checks nothing twice."""
    if job.numerator is not None:
        return job
    problems = job_problems(job)
    try:
        model = resolved_model(job)
    except ConfigError as exc:
        problems += exc.problems
    if problems:            # the name, as load_job gives it: only when no problem is about the name itself
        raise ConfigError(problems, None if any(p.pointer == "/name" for p in problems) else job.name, job.sha256)
    return replace(job, numerator=(model, job_flops(job, model)))


@contextmanager
def _in_job_file(job: Job) -> Iterator[None]:
    """Problems found by a lower layer (model, FLOPs, class rules) are located in the job file."""
    try:
        yield
    except ConfigError as exc:
        raise ConfigError([job.locate(p) for p in exc.problems]) from None


def resolved_model(job: Job) -> dict[str, Any]:
    """The job's model section with its preset merged in: resolved once per job."""
    with _in_job_file(job):
        return resolve_model(job.model)


def job_flops(job: Job, model: dict[str, Any]) -> FlopsResult:
    """FLOPs of one optimizer step (global_batch sequences); per_occurrence scales them to an occurrence."""
    wl = job.workload
    with _in_job_file(job):
        return flops_of(model, mode=wl["mode"], seq_len=wl.get("seq_len"), sequences=wl.get("global_batch"),
                        recompute=wl["recompute"], flash_recompute=wl["flash_recompute"],
                        convention=job.model.get("convention"), seq_lens=_packed(wl),
                        context_len=wl.get("context_len"), generated_tokens=wl.get("generated_tokens"))


def _architecture_beside(job: Job, fl: FlopsResult) -> dict[str, Any] | None:
    """The declared architecture when an explicit numerator sits beside it (the two must agree)."""
    arch = {k: v for k, v in job.model.items() if k not in NUMERATOR_KEYS}
    return arch if fl.convention == "explicit" and {"preset", "hidden"} & arch.keys() else None


def _reference(job: Job, fl: FlopsResult) -> tuple[int | None, str]:
    """What the declared architecture gives for this workload; None when there is nothing to compare."""
    arch = _architecture_beside(job, fl)
    if arch is None or fl.tokens_per_step is None:
        return None, fl.convention
    ref = job_flops(job, resolved_model(replace(job, model=arch)))
    return ref.model_flops_per_step, ref.convention


def _unsteady(occurrences: list[dict[str, Any]]) -> list[ResultWarning]:
    periods = any(o["step_time_s"] != o["wall_time_s"] for o in occurrences[:-1])
    found = metrics.unsteady_steps([o["index"] for o in occurrences], [o["step_time_s"] for o in occurrences],
                                   [o["kernel_count"] > 0 for o in occurrences], last_is_envelope=periods)
    return [found] if found else []


def _packed(wl: Workload) -> list[int] | None:
    """Job seq_lens describe one sequence slot; the step holds global_batch such slots."""
    return list(wl["seq_lens"]) * wl["global_batch"] if "seq_lens" in wl else None


def class_rules(job: Job) -> list[classes.Rule]:
    """Kernel-class rules, the job's first; a broken pattern is located in the job file."""
    with _in_job_file(job):
        return classes.load_rules(job.analysis.get("kernel_classes"))


def _raise(problems: list) -> None:
    if problems:
        raise ConfigError(problems)


def exit_code(res: dict[str, Any]) -> ExitCode:
    """1 when a threshold is missed or the result is invalid; 0 otherwise."""
    if res["status"] != "ok" or any(t["passed"] is False for t in res["thresholds"]):
        return ExitCode.THRESHOLD
    return ExitCode.OK
