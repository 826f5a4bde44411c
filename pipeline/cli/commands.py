"""One function per `mfu` command: check the locations given, call the stage that does the work,
print what the user needs (the reports written, warnings, a summary) and return the exit code."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from pipeline import locations
from pipeline.errors import ConfigError, ExitCode, MfuError, Problem, UsageError, io_reason, without_current_folder

INT64_MAX = 2**63 - 1           # DuckDB's BIGINT and the export's timestamps: a larger count ended in a traceback
MAX_SYNTH_KERNELS = 200_000_000  # about 95 bytes a kernel in an export (bench/RESULTS.md: 0.76 GB for 8 M)


def cmd_run(args: argparse.Namespace) -> int:
    from pipeline.batch import distinct, run_batch, summary_table, worst
    from pipeline.trace.cache import default_cache_dir
    from pipeline.report.index import write_index
    if args.label is not None and args.history is None:       # ignored, the scheduled run's trend would lose it
        raise UsageError("--label is stored with the run in a history: give --history PATH too")
    args.out = locations.folder(args.out, "--out")           # every location checked before any job runs
    if args.cache is not None and not args.no_cache:
        args.cache = locations.folder(args.cache, "--cache")
    if args.history is not None:
        from pipeline.history import check, is_folder
        check(Path(args.history))
        args.history = (locations.folder if is_folder(Path(args.history)) else locations.file_in_folder)(
            args.history, "--history")
    args.job_files, notes = distinct(args.job_files)
    for note in notes:
        print(note, file=sys.stderr)
    quiet = len(args.job_files) == 1
    cache = None if args.no_cache else args.cache
    if cache is None and not args.no_cache and len(args.job_files) > 1:
        try:                                      # the default place may be unusable (read-only or no home): run without
            cache = locations.folder(default_cache_dir(), "cache")
        except UsageError as exc:
            print(f"warning: {exc}; running without a cache (set MFU_CACHE_DIR or --cache)", file=sys.stderr)
            cache = None
    try:
        rows = run_batch(args.job_files, args.out, workers=args.workers,
                         progress=io.StringIO() if quiet else sys.stderr, cache_dir=cache, engine=args.executor)
    finally:
        if args.out.is_dir():                 # also after Ctrl-C: the index lists the interrupted jobs; a run
            write_index(args.out)             # whose every job was refused made no folder to index
    if args.history is not None:
        _to_history(args.history, rows, args.label)
    for r in rows:
        if r["status"] == "skipped":
            print(f"note: {r['job']}: {r['reason']}", file=sys.stderr)
        elif "metrics" not in r:
            print(f"error: {r['reason']}", file=sys.stderr)
    if args.format == "json":            # for a tool or a file: no folder of this machine (stderr said it)
        print(json.dumps([{**r, "reason": without_current_folder(r["reason"])} for r in rows], indent=2,
                         sort_keys=True))
    elif quiet:
        for r in rows:
            if "metrics" in r:
                print(_run_line(r))
    else:
        print(summary_table(rows))
    return worst(rows)


def _to_history(path: Path, rows: list[dict[str, Any]], label: str | None) -> None:
    """Append the run's results and its failed jobs (a job broken on a schedule shows as failing, not as
    absent), saying how many of each."""
    from pipeline.batch import job_names
    from pipeline.history import append, failures_of
    done = [json.loads((Path(r["report"]) / "result.json").read_text(encoding="utf-8"))
            for r in rows if "metrics" in r]
    failed = failures_of(rows, job_names(rows))
    if not done and not failed:
        print(f"history: nothing appended to {path}: no job of this run ran", file=sys.stderr)
        return
    run = append(path, done, label, failed)
    print(f"history: appended {_count(len(done), 'result')} and {_count(len(failed), 'failure')} as run {run} "
          f"to {path}", file=sys.stderr)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _run_line(s: dict[str, Any]) -> str:
    """One job's line. An invalid result's figures are no measurements (its report strikes them through,
    which a terminal cannot): the line gives the reason instead of printing "407.04 %" as a plain figure."""
    from pipeline.report.fmt import fmt_against
    if s["status"] == "invalid":
        return (f"{s['name']}: [INVALID] no figure is a measurement -> {s['report']}/report.md (figures struck "
                f"through): {s['reason']}")
    m = s["metrics"]
    line = (f"{s['name']}: MFU {_pct(m['mfu_pct_wall'])} (wall), HFU {_pct(m['hfu_pct_wall'])}, "
            f"active-time ratio {_pct(m['active_ratio_pct_union'])} (diagnostic), "
            f"step {s['step_time_median_s']:.6f} s median -> {s['report']}/report.md")
    for t in s["failed_thresholds"]:
        line += f"\n  threshold {t['name']} {t['limit']} not met: {fmt_against(t['value'], t['limit'], 3)}"
    return line


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f} %"


def cmd_compare(args: argparse.Namespace) -> int:
    from pipeline.compare import compare, gather
    from pipeline.gate import gate_lines
    from pipeline.report.render import render_all, write_files
    from pipeline import ci
    args.out = locations.folder(args.out, "--out")
    limit = args.max_regression
    if args.junit is not None and limit is None:
        raise UsageError("--junit lists the gated figures: give --max-regression too")
    for given, option in ((args.strict, "--strict"), (args.allow_incomparable, "--allow-incomparable")):
        if given and limit is None:             # ignored, it would pass every run of a CI job that means to gate
            raise UsageError(f"{option} changes the gate, and there is none: give --max-regression too")
    inputs, baselines = gather(args.inputs, args.baseline)
    if len(inputs) < 2:
        raise UsageError("compare needs at least two inputs (counting --baseline results)")
    doc = compare(inputs, baselines, limit, strict=args.strict, allow_incomparable=args.allow_incomparable,
                  job_file=args.job_file)
    files = render_all(doc, kind="compare")
    if args.format == "github":
        files["summary.md"] = ci.summary(doc)
    write_files(args.out, files)
    if args.junit is not None:
        ci.write_junit(args.junit, doc)
    if args.format == "github":
        ci.append_step_summary(files["summary.md"])
        for line in ci.workflow_commands(doc):
            print(line)
    print(f"compared {len(doc['columns'])} inputs against {', '.join(doc['baselines'])} -> {args.out}/compare.md, "
          "compare.html, compare.json")
    for c in doc["columns"]:
        for group in c["not_comparable"]:
            print(f"warning: {c['label']}: {', '.join(group['figures'])} not comparable with the baseline: "
                  f"{'; '.join(group['reasons'])}", file=sys.stderr)
    for line in gate_lines(doc):
        print(line, file=sys.stderr)
    if doc["gates"]:
        tail = ": a figure had too few samples to test; not failed (use --strict to fail)" \
            if doc["gate"] == "undecided" else ""
        print(f"gate {doc['gate']} (max regression {limit:g} %){tail}")
    return int(ExitCode.OK if doc["passed"] else ExitCode.THRESHOLD)


def cmd_history(args: argparse.Namespace) -> int:
    from pipeline.history import write
    args.out = locations.folder(args.out, "--out")
    doc = write(args.path, args.out, args.min_change)
    print(f"history of {args.path} -> {args.out}/history.md, history.html, history.json")
    for job in doc["jobs"]:
        for r in job["runs"]:
            if r["status"] == "failed":          # said, so a nightly log does not read the job as not scheduled
                print(f"failed: {job['name']} run {r['run']}{_label(r)} exit {r['exit_code']}: {r['error']}",
                      file=sys.stderr)
            for g in r["not_comparable"]:         # said, so a nightly log does not read the run as unchanged
                print(f"not comparable: {job['name']} run {r['run']}{_label(r)} {', '.join(g['figures'])} with run "
                      f"{r['compared_with_run']}: {'; '.join(g['reasons'])}", file=sys.stderr)
            for c in r["changes"]:
                print(f"{c['outcome']}: {job['name']} run {r['run']}{_label(r)} {c['label']}: {c['detail']}",
                      file=sys.stderr)
    return 0


def _label(run: dict[str, Any]) -> str:
    return f" ({run['label']})" if run.get("label") else ""


def cmd_validate(args: argparse.Namespace) -> int:
    from pipeline.job.extends import BASE_NOTE, is_base
    from pipeline.run import load_checked
    rows = []
    for job in args.job_files:
        if is_base(job):
            rows.append(_validated(job, "skipped", BASE_NOTE))
        else:
            try:
                load_checked(job)
                rows.append(_validated(job, "valid"))
            except MfuError as exc:
                print(f"{exc}", file=sys.stderr)      # in either format, as `mfu run --format json` says its errors
                rows.append(_validated(job, "invalid", exc=exc))
        if args.format == "text" and rows[-1]["status"] != "invalid":
            print(f"ok: {job}" if rows[-1]["status"] == "valid" else f"{job}: {BASE_NOTE}")
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
    return max((r["exit_code"] for r in rows), default=int(ExitCode.OK))


def _validated(job: Path, status: str, reason: str = "", exc: MfuError | None = None) -> dict[str, Any]:
    """A job file's entry in `mfu validate --format json` (schemas/validate.schema.json): what the text form says,
    as data, naming no folder of this machine the user did not type (a CI keeps it, as it keeps a report)."""
    from pipeline.report.publish import without_machine_folders as kept
    problems = [] if exc is None else (exc.problems if isinstance(exc, ConfigError)
                                       else [Problem(str(exc), "", str(job))])
    return {"job": str(job), "status": status, "exit_code": int(exc.code) if exc else int(ExitCode.OK),
            "reason": kept(str(exc)) if exc else reason,
            "problems": [{"file": kept(p.file) or None, "line": p.line,
                          "column": None if p.line is None else p.col or 1,
                          "pointer": p.pointer if p.pointer or p.line is not None else None,
                          "message": kept(p.message), "hint": kept(p.hint) or None} for p in problems]}


def cmd_inspect(args: argparse.Namespace) -> int:
    from pipeline.trace.inspect import format_text, inspect_trace
    info = inspect_trace(args.trace, ranges=args.ranges, regions=args.regions, verify=args.verify)
    print(json.dumps(info, indent=2, sort_keys=True) if args.format == "json" else format_text(info))
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    from pipeline.init import skeleton, write
    if args.out is not None:                  # checked before the trace is read; made once there is a job to write
        locations.file_in_folder(args.out, "-o")
    text = skeleton(args.trace, args.preset, args.out.parent if args.out else None)
    if args.out is None:
        print(text, end="")
        return 0
    write(text, args.out)
    print(f"wrote {args.out}: fill in each TODO (`mfu validate {args.out}` lists them), then `mfu run {args.out}`",
          file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from pipeline.demo import run_demo
    args.out = locations.folder(args.out, "--out")
    res, folder = run_demo(args.out)
    m = res["metrics"]
    print(f"demo: MFU {_pct(m['mfu_pct_wall'])} (wall) on a synthetic 8-GPU Llama-3-8B trace -> "
          f"{folder}/report.md, report.html, result.json and the charts (*.svg)")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from pipeline.trace.synth import SynthSpec, generate
    from pipeline.trace.synth_scaled import generate_scaled
    kernels = args.ranks * args.steps * args.kernels_per_step
    if kernels > MAX_SYNTH_KERNELS:
        raise UsageError(f"--ranks x --steps x --kernels-per-step asks for {kernels:,} kernels: more than "
                         f"{MAX_SYNTH_KERNELS:,} (a trace of about 20 GB); ask for fewer")
    if args.steps * args.step_ns * 2 > INT64_MAX:
        raise UsageError(f"--steps x --step-ns spans {args.steps * args.step_ns:,} ns: beyond the 64-bit "
                         "timestamps of an export; ask for fewer or shorter steps")
    spec = SynthSpec(ranks=args.ranks, steps=args.steps, kernels_per_step=args.kernels_per_step,
                     step_ns=args.step_ns, seed=args.seed, drop_launch_every=args.drop_launch_every,
                     region=args.region, gpu_name=args.gpu_name, layers=args.layers, warmup_steps=args.warmup_steps)
    locations.file_in_folder(args.out, "OUT.sqlite").parent.mkdir(parents=True, exist_ok=True)
    truth = _synthesized(generate_scaled if args.scaled else generate, spec, Path(args.out))
    attributed = sum(o["kernel_count"] for o in truth["occurrences"])
    print(f"wrote {args.out} ({args.ranks} ranks x {args.steps} steps, {attributed} attributed kernels) "
          f"and {args.out}.truth.json")
    return 0


def _synthesized(generate: Any, spec: Any, out: Path) -> dict[str, Any]:
    """`generate` writing `out`; a disk that fills (or a folder turned read-only) is a usage error (exit 2)
    and leaves neither a half-written trace nor its truth file."""
    import sqlite3

    import duckdb
    try:
        return generate(spec, out)
    except (OSError, sqlite3.OperationalError, duckdb.IOException) as exc:
        for left in (out, Path(f"{out}.truth.json")):
            with contextlib.suppress(OSError):       # a read-only folder: nothing was written to remove
                left.unlink(missing_ok=True)
        raise UsageError(f"{out}: cannot write the synthetic trace ({io_reason(exc)})") from None


_MODEL_FLAGS = ("preset", "hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab", "mtp_layers",
                "moe_experts", "moe_top_k", "moe_expert_ffn", "moe_shared_ffn", "moe_first_dense_layers",
                "sliding_window_window", "mlp", "attention", "lm_head")
_WORKLOAD_FLAGS = ("mode", "seq_len", "batch", "context_len", "recompute", "convention")   # without a job file only


def cmd_flops(args: argparse.Namespace) -> int:
    from pipeline.model.flops import compute_flops
    from pipeline.model.presets import model_from_flags
    from pipeline.run import load_checked
    flags = {k: getattr(args, k) for k in _MODEL_FLAGS}
    if args.job is not None:
        if any(v is not None for v in flags.values()):
            raise UsageError("give either a job file or model flags, not both")
        if (ignored := [f"--{k.replace('_', '-')}" for k in _WORKLOAD_FLAGS if getattr(args, k) is not None]):
            raise UsageError(f"{', '.join(ignored)}: the job file's workload and model sections say this; "
                             "change them there, or give model flags instead of the job file")
        _, result = load_checked(args.job).numerator
    else:
        if args.seq_len is None or all(v is None for v in flags.values()):
            raise UsageError("without a job file, give --preset and/or architecture flags, and --seq-len")
        try:
            result = compute_flops(model_from_flags(**flags), mode=args.mode or "training", seq_len=args.seq_len,
                                   sequences=args.batch or 1, recompute=args.recompute or "none",
                                   convention=args.convention, context_len=args.context_len)
        except ConfigError as exc:     # no job file: name the flag the value came from, not "<job>:"
            raise UsageError("\n".join(_flag_problem(p) for p in exc.problems)) from None
    data = result.to_dict()
    print(json.dumps(data, indent=2, sort_keys=True) if args.format == "json" else _flops_text(data))
    return 0


def _flag_problem(p: Problem) -> str:
    """/model/kv_heads -> --kv-heads, /workload/seq_len -> --seq-len: where the user typed the value."""
    parts = [x for x in p.pointer.split("/") if x][1:]
    flag = "--" + "-".join(parts).replace("_", "-") if parts else "model flags"
    return f"{flag}: {p.message}" + (f" (fix: {p.hint})" if p.hint else "")


def cmd_models(args: argparse.Namespace) -> int:
    from pipeline.bundled import label
    from pipeline.model import presets
    rows = [{"name": name, "source": p["source"], "published_params": p["published_params"], "model": p["model"]}
            for name, p in sorted(presets.presets().items())]
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
        return 0
    print(f"{'preset':<22} {'params':>9} {'hidden':>6} {'layers':>6}  source")
    for r in rows:
        m = r["model"]
        print(f"{r['name']:<22} {r['published_params'] / 1e9:>8.2f}B {m.get('hidden', '—'):>6} "
              f"{m.get('layers', '—'):>6}  {r['source']}")
    print(f"From {label(presets.PRESETS_FILE)}. Use with `model: {{preset: NAME}}` in a job (keys beside it override "
          "the preset's), or `mfu flops --preset NAME --seq-len N`.")
    return 0


def _flops_text(d: dict[str, Any]) -> str:
    """The breakdown as a table. With recomputation the HFU multiplier and hardware total of each row stand beside
    MFU's, so both step totals add up on the screen (as in the report's FLOPs table); without, they are MFU's."""
    hfu = any(c["hardware_multiplier"] != c["multiplier"] for c in d["breakdown"])
    extra = f" {'HFU x':>5} {'hardware total':>26}" if hfu else ""
    rows = [f"{'component':<28} {'forward FLOPs':>24} {'MFU x' if hfu else 'x':>5} {'total':>26}{extra}"]
    rows += [f"{c['component']:<28} {c['forward_flops']:>24,} {c['multiplier']:>5} {c['total']:>26,}"
             + (f" {c['hardware_multiplier']:>5} {c['hardware_total']:>26,}" if hfu else "") for c in d["breakdown"]]
    rows.append(f"{'model FLOPs per step':<58} {d['model_flops_per_step']:>26,}")
    rows.append(f"{'hardware FLOPs per step':<{91 if hfu else 58}} {d['hardware_flops_per_step']:>26,}")
    rows.append(f"convention {d['convention']}: {d['convention_note']}")
    if d["tokens_per_step"] is not None:
        rows.append(f"tokens per step {d['tokens_per_step']:,}; FLOPs per token {d['flops_per_token']:.6g}")
    if d["params_total"] is not None:
        rows.append(f"parameters {d['params_total']:,} total, {d['params_active']:,} active")
    if d["six_n_flops_per_step"] is not None:
        rows.append(f"cross-check {d['quick_check_factor']}·N·tokens: {d['six_n_flops_per_step']:,}")
    rows += [f"warning: {w}" for w in d["warnings"]]
    return "\n".join(rows)


def cmd_gpus(args: argparse.Namespace) -> int:
    from pipeline.bundled import label
    from pipeline.hardware import catalog
    rows = catalog.catalog_rows(catalog.load_catalog())
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
        return 0
    shown = ("bf16", "fp16", "fp8", "tf32", "fp32")
    print(f"{'key':<18} {'name':<34} {' '.join(f'{p:>8}' for p in shown)} {'HBM GB/s':>9} {'GB':>6}")
    for r in rows:
        cells = [f"{r[f'{p}_tflops']:>8g}" if r[f"{p}_tflops"] is not None else f"{'—':>8}" for p in shown]
        print(f"{r['key']:<18} {r['name'][:34]:<34} {' '.join(cells)} {r['hbm_gbps']:>9g} {r['memory_gb']:>6g}")
    others = ", ".join(p for p in catalog.PRECISIONS if p not in shown)
    print(f"Dense TFLOP/s per GPU, from {label(catalog.DEFAULT_CATALOG)} (each entry's source, and its {others} "
          "peaks: `mfu gpus --format json`); a job file sets its own peak with hardware.peak_tflops.")
    return 0
