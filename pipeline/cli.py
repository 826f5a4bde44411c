"""`mfu` command line: a thin argparse layer over run/inspect/synth; maps errors to exit codes.

Exit codes (the same table is in README.md):
  0    ok
  1    a threshold was not met, or a computed figure is impossible (invalid: MFU above 100 %)
  2    usage: unknown command or option; an unusable --out, --cache or --history location (empty,
       a file, unreachable, read-only); a history in no known format; a Dask scheduler that does
       not answer; a full disk while writing
  3    anything wrong in a job, catalog or preset file (configs/hardware.yaml, configs/models.yaml):
       every problem listed with file:line:col and JSON pointer
  4    trace problem (missing, unreadable, not an Nsight Systems export, region or occurrences not
       found, contents the export schema does not allow, a leftover -wal/-journal beside it)
  5    internal error (a bug: please report it with the traceback printed)
  130  interrupted (Ctrl-C); 143: terminated (SIGTERM)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from pipeline import __version__, interrupts, locations
from pipeline.errors import ConfigError, ExitCode, MfuError, Problem, UsageError

EPILOG = __doc__.split("\n\n", 1)[1]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with interrupts.handled():
            return int(args.func(args))
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except BrokenPipeError:              # `mfu inspect t | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no second error at exit
        return 0
    except Exception as exc:
        if interrupts.pending():         # DuckDB reports a signal during a query as its own error
            return _interrupted(exc)
        if isinstance(exc, MfuError):
            print(f"error: {exc}", file=sys.stderr)
            return int(exc.code)
        # a bug, not a user mistake: show everything needed to fix it
        traceback.print_exc()
        print("internal error: this is a bug in mfu-pipeline; please report it with the text above",
              file=sys.stderr)
        return int(ExitCode.INTERNAL)


def _interrupted(exc: BaseException) -> int:
    """Ctrl-C (exit 130) or SIGTERM (143): one line, no traceback; cleanup already ran on the way out."""
    signal_exc = interrupts.pending() or (exc if isinstance(exc, interrupts.Interrupted) else None)
    code = signal_exc.exit_code if signal_exc else 130
    print("interrupted" if code == 130 else f"terminated (signal {code - 128})", file=sys.stderr)
    return code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 already; keep its format, add a hint
        self.print_usage(sys.stderr)
        self.exit(int(ExitCode.USAGE), f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mfu", description="MFU reports from Nsight Systems SQLite exports.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"mfu-pipeline {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    def cmd(name: str, func: Callable[[argparse.Namespace], int], help: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help, description=help, epilog=EPILOG,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
        sp.set_defaults(func=func)
        return sp

    sp = cmd("run", _run, "Run job files and write reports/<name>/report.md, report.html, result.json (charts inline in "
             "the HTML and as .svg files beside report.md), "
             "and reports/index.md and index.html linking every report in the folder with its headline figures. "
             "Several jobs run in parallel processes; a failing job does not stop the others, a summary "
             "table lists each job's status and reason, and the exit code is the worst one.")
    sp.add_argument("job_files", nargs="+", type=Path, metavar="JOB", help="job YAML file(s), e.g. configs/*.yaml")
    sp.add_argument("--out", default="reports", help="output folder (default: reports)")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="summary on stdout: text (default) or json (one object per job)")
    sp.add_argument("-j", "--jobs", dest="workers", type=int, default=None, metavar="N",
                    help="worker processes (default: the CPU count); jobs reading the same trace files share "
                         "one worker, so each trace is read once; a job over several trace files, when there are "
                         "fewer trace groups than workers, has each of its files read by one of the workers")
    sp.add_argument("--history", metavar="PATH", help="append this run's results (job name, config "
                    "hash, trace hash, MFU, step time) to a history, created if missing: a PATH ending in "
                    ".duckdb is a DuckDB file; any other PATH is a folder that gets one Parquet file per run "
                    "(run-000001.parquet, ...), never rewriting earlier ones, so runs may append at once. "
                    "Render it with `mfu history PATH`")
    sp.add_argument("--label", metavar="TEXT", help="stored with this run in the --history, e.g. the commit "
                    "(--label \"$GITHUB_SHA\"); shown next to the run number")

    sp.add_argument("--cache", metavar="DIR", help="keep each trace's tables as Parquet under DIR and "
                    "reuse them (default: off for one job, the user cache folder for several; see README)")
    sp.add_argument("--no-cache", action="store_true", help="never use or write a cache")
    sp.add_argument("--executor", default="local", metavar="ENGINE",
                    help="local (default), dask-local, or dask://HOST:PORT (needs the [dask] extra)")
    sp = cmd("history", _history, "Render the trend of MFU and step time per job from a history, a *.duckdb "
             "file or a folder of Parquet files (history.md, history.html with SVG charts, history.json), "
             "flagging the runs where MFU or step time changed (regression or improvement). Histories of an "
             "older format are read as they are; `mfu run --history` migrates a DuckDB file when it appends.")
    sp.add_argument("path", type=Path, metavar="PATH", help="history written by `mfu run --history PATH`: "
                    "a DuckDB file if PATH ends in .duckdb, else a folder of Parquet files; either form "
                    "renders the same rows byte for byte")
    sp.add_argument("--out", default="reports/history",
                    help="output folder (default: reports/history)")
    sp.add_argument("--min-change", metavar="PCT", default="5%", help="flag a run whose MFU or median step "
                    "time moved by more than PCT (relative) since the job's previous run AND a one-sided "
                    "Mann-Whitney U test on the per-occurrence samples is significant at alpha 0.01, as the "
                    "compare gate (default 5%%); runs stored without samples (format 1) 'cannot decide'")

    sp = cmd("compare", _compare, "Side-by-side report of several runs (compare.md, compare.html, compare.json): "
             "every figure per input, its change against the baseline worded better/worse by the figure's "
             "direction, and per figure whether it is comparable with the baseline and why not (MFU/HFU need "
             "the same FLOPs convention, precision, peak, occurrence scope and attribution; step time and "
             "tokens/s also the same work per step, GPU count and type). With --max-regression it is a CI "
             "gate on MFU (wall) and the median step time: exit 1, with the reason on stderr, when a figure "
             "is worse by more than the limit AND a one-sided Mann-Whitney U test on the per-occurrence "
             "samples is significant at alpha 0.01, or when a gated figure is not comparable. Fewer than 5 "
             "samples on a side: 'cannot decide' (a failure only with --strict).")
    sp.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="job file (run now), result.json, or report folder holding one; at least two "
                         "counting --baseline results")
    sp.add_argument("--baseline", action="append", default=[], metavar="BASE",
                    help="an input's job name, the input as written or its 1-based position, or another "
                         "result.json / report folder (default: the first input). Repeat it for several "
                         "baseline runs of the same job: their samples are pooled and a value inside the "
                         "range they span is never called a regression (per-occurrence samples of one run "
                         "see jitter inside that run, not run-to-run noise)")
    sp.add_argument("--max-regression", metavar="PCT", help="gate: allowed regression, e.g. 5%% (relative "
                    "to the baseline's value)")
    sp.add_argument("--strict", action="store_true", help="gate: fail a figure worse than the limit even when "
                    "there are too few samples to test it")
    sp.add_argument("--allow-incomparable", action="store_true", help="gate figures that are not comparable "
                    "with the baseline anyway (each says so) instead of failing them")
    sp.add_argument("--format", choices=["text", "github"], default="text", help="github: also print "
                    "::error/::warning annotations on the job file for failed or undecided figures, write "
                    "summary.md to --out and append it to $GITHUB_STEP_SUMMARY when that is set")
    sp.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML: one test case per gated "
                    "figure per job (needs --max-regression)")
    sp.add_argument("--job-file", metavar="PATH", help="the job file annotations and test cases point at, as "
                    "the repository names it (default: the input when it is a job file, else the job file "
                    "name the result records)")
    sp.add_argument("--out", default="reports/compare",
                    help="output folder (default: reports/compare)")

    sp = cmd("validate", _validate, "Check job files (schema, scope rules, model) without reading traces. "
             "Base files (`kind: base`, used through `extends:`) are reported as skipped.")
    sp.add_argument("job_files", nargs="+", type=Path, metavar="JOB", help="job YAML file(s), e.g. configs/*.yaml")

    sp = cmd("inspect", _inspect, "Show what a trace holds: versions, GPUs, processes, counts, NVTX ranges, and "
             "which NVTX range looks like one training/inference step: range names ranked by the GPU work they "
             "enclose (share of the trace's kernel time, per-occurrence kernel sum/union/count), with nesting "
             "depth, occurrences per process and the steadiness of their period. When no name is step-like it "
             "says it is guessing.")
    sp.add_argument("trace", type=Path, metavar="TRACE", help="Nsight Systems SQLite export "
                    "(`nsys export --type sqlite`), opened read-only")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text (default) or json (the same content, for tools)")
    sp.add_argument("--ranges", type=int, default=30, metavar="N", help="range-name groups to list by count "
                    "(default 30)")
    sp.add_argument("--regions", type=int, default=10, metavar="N", help="range-name groups to rank by the GPU "
                    "work they enclose, step-like names first (default 10)")

    sp = cmd("init", _init, "Write a job file skeleton from a trace: the step-like NVTX region (other candidates "
             "in comments), warm-up occurrences skipped, devices and processes seen, `gpu: auto` when the trace "
             "names a catalog GPU, the precision kernel names suggest, and TODO for every value the trace cannot "
             "tell (model, batch, mode). `mfu validate` fails at each TODO with its line until it is filled in.")
    sp.add_argument("trace", type=Path, metavar="TRACE", help="Nsight Systems SQLite export, opened read-only")
    sp.add_argument("--preset", metavar="NAME", help="model preset to write as model.preset (`mfu models`)")
    sp.add_argument("-o", "--out", type=Path, metavar="JOB.yaml", help="write the job file here (never "
                    "overwritten; the trace path is written relative to it); default: print to stdout")

    sp = cmd("demo", _demo, "Generate a synthetic trace, run the demo job on it, write reports/demo.")
    sp.add_argument("--out", default="reports", help="output folder (default: reports)")

    sp = cmd("synth", _synth, "Write a synthetic step-level trace and its ground truth (OUT.truth.json).")
    sp.add_argument("out", type=Path, metavar="OUT.sqlite", help="SQLite file to write (replaced if present); "
                    "the ground truth goes to OUT.sqlite.truth.json")
    for name, default, text in [("ranks", 2, "processes, one GPU each"), ("steps", 5, "step ranges per rank"),
                                ("kernels-per-step", 40, "kernels per step per rank"),
                                ("step-ns", 50_000_000, "step length in ns"), ("seed", 0, "random seed"),
                                ("drop-launch-every", 0, "every n-th kernel has no launch row (0: none)"),
                                ("layers", 0, "nested 'decoder_layer' ranges per step (0: none)"),
                                ("warmup-steps", 0, "first steps that take twice as long (warm-up)")]:
        sp.add_argument(f"--{name}", type=int, default=default, help=f"{text} (default {default})")
    sp.add_argument("--region", default="train_step", help="NVTX name of the step range")
    sp.add_argument("--gpu-name", default="NVIDIA H100 80GB HBM3", help="TARGET_INFO_GPU.name to write")
    sp.add_argument("--scaled", action="store_true", help="generate inside DuckDB for millions of kernels "
                    "(benchmarks); the truth file then holds counts only")

    sp = cmd("flops", _flops, "Print the model FLOPs breakdown for a job file, a preset, or architecture flags "
             "(flags override the preset's fields).")
    sp.add_argument("job", nargs="?", type=Path, metavar="JOB", help="job file (then no model flags)")
    sp.add_argument("--preset", help="model preset name (`mfu models` lists them)")
    for flag in ("hidden", "layers", "heads", "kv-heads", "head-dim", "ffn", "vocab", "mtp-layers",
                 "moe-experts", "moe-top-k", "moe-expert-ffn", "moe-shared-ffn", "moe-first-dense",
                 "sliding-window-window"):
        sp.add_argument(f"--{flag}", type=int, help=f"model.{flag.replace('-', '_')} (see schemas/model.schema.json)")
    sp.add_argument("--mlp", choices=["swiglu", "geglu", "gelu", "relu"], help="MLP kind")
    sp.add_argument("--attention", choices=["causal", "full"], help="attention mask")
    sp.add_argument("--lm-head", action=argparse.BooleanOptionalAction, default=None, help="count the LM head")
    sp.add_argument("--mode", choices=["training", "inference", "decode"], default="training")
    sp.add_argument("--seq-len", type=int, default=None, help="tokens per sequence (required without JOB)")
    sp.add_argument("--batch", type=int, default=1, help="sequences per step (without JOB; default 1)")
    sp.add_argument("--context-len", type=int, help="decode: KV-cache length")
    sp.add_argument("--recompute", choices=["none", "selective", "full"], default="none")
    sp.add_argument("--convention", choices=["megatron", "palm", "6n"], help="override the convention")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text table (default) or json (the breakdown as data)")

    sp = cmd("gpus", _gpus, "List the GPU catalog: dense peaks, bandwidth, sources.")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text table (default) or json (every entry with its source)")

    sp = cmd("models", _models, "List the model presets (configs/models.yaml): shape, published parameter "
             "count and the source each shape comes from. Use one with `model.preset` or `mfu flops --preset`.")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text table (default) or json (every preset with its full model section)")
    return p


def _run(args: argparse.Namespace) -> int:
    from pipeline.batch import run_batch, summary_table, worst
    from pipeline.trace.cache import default_cache_dir
    from pipeline.report.index import write_index
    if args.workers is not None and args.workers < 1:
        raise UsageError("--jobs needs at least 1 worker")
    args.out = locations.folder(args.out, "--out")           # every location checked before any job runs
    if args.cache is not None and not args.no_cache:
        args.cache = locations.folder(args.cache, "--cache")
    if args.history is not None:
        from pipeline.history import check, is_folder
        check(Path(args.history))
        args.history = (locations.folder if is_folder(Path(args.history)) else locations.file_in_folder)(
            args.history, "--history")
    quiet = len(args.job_files) == 1
    cache = None if args.no_cache else args.cache or (default_cache_dir() if len(args.job_files) > 1 else None)
    if cache is not None and args.cache is None:
        try:                                      # the default place may be unusable (read-only home): run without
            locations.folder(cache, "cache")
        except UsageError as exc:
            print(f"warning: {exc}; running without a cache (set MFU_CACHE_DIR or --cache)", file=sys.stderr)
            cache = None
    try:
        rows = run_batch(args.job_files, args.out, workers=args.workers,
                         progress=io.StringIO() if quiet else sys.stderr, cache_dir=cache, engine=args.executor)
    finally:
        write_index(args.out)                 # also after Ctrl-C: the index lists the interrupted jobs
    if args.history is not None:
        from pipeline.history import append
        done = [json.loads((Path(r["report"]) / "result.json").read_text(encoding="utf-8"))
                for r in rows if "metrics" in r]
        run = append(args.history, done, args.label)
        print(f"history: appended {len(done)} results as run {run} to {args.history}", file=sys.stderr)
    for r in rows:
        if r["status"] == "skipped":
            print(f"note: {r['job']}: {r['reason']}", file=sys.stderr)
        elif "metrics" not in r:
            print(f"error: {r['reason']}", file=sys.stderr)
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
    elif quiet:
        for r in rows:
            if "metrics" in r:
                print(_run_line(r))
    else:
        print(summary_table(rows))
    return worst(rows)


def _run_line(s: dict[str, Any]) -> str:
    m = s["metrics"]
    line = (f"{s['name']}: MFU {_pct(m['mfu_pct_wall'])} (wall), HFU {_pct(m['hfu_pct_wall'])}, "
            f"active-time ratio {_pct(m['active_ratio_pct_union'])} (diagnostic), "
            f"step {s['step_time_median_s']:.6f} s median -> {s['report']}/report.md")
    if s["status"] == "invalid":
        line += "  [INVALID]"
    for t in s["failed_thresholds"]:
        line += f"\n  threshold {t['name']} {t['limit']} not met: {t['value']:.3f}"
    return line


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f} %"


def _compare(args: argparse.Namespace) -> int:
    from pipeline.compare import compare, gate_lines, gather, parse_pct
    from pipeline.report.render import render_all, write_files
    from pipeline import ci
    args.out = locations.folder(args.out, "--out")
    limit = parse_pct(args.max_regression) if args.max_regression is not None else None
    if args.junit is not None and limit is None:
        raise UsageError("--junit lists the gated figures: give --max-regression too")
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
        for line in ci.annotations(doc):
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
        print(f"gate {'passed' if doc['passed'] else 'FAILED'} (max regression {limit:g} %)")
    return int(ExitCode.OK if doc["passed"] else ExitCode.THRESHOLD)


def _history(args: argparse.Namespace) -> int:
    from pipeline.compare import parse_pct
    from pipeline.history import write
    args.out = locations.folder(args.out, "--out")
    doc = write(args.path, args.out, parse_pct(args.min_change, "--min-change"))
    print(f"history of {args.path} -> {args.out}/history.md, history.html, history.json")
    for job in doc["jobs"]:
        for r in job["runs"]:
            for c in r["changes"]:
                print(f"{c['outcome']}: {job['name']} run {r['run']}{_label(r)} {c['metric']}: {c['detail']}",
                      file=sys.stderr)
    return 0


def _label(run: dict[str, Any]) -> str:
    return f" ({run['label']})" if run.get("label") else ""


def _validate(args: argparse.Namespace) -> int:
    from pipeline.job.extends import BASE_NOTE, is_base
    from pipeline.run import validate_file
    worst = 0
    for job in args.job_files:
        if is_base(job):
            print(f"{job}: {BASE_NOTE}")
            continue
        try:
            validate_file(job)
            print(f"ok: {job}")
        except MfuError as exc:
            print(f"{exc}", file=sys.stderr)
            worst = max(worst, int(exc.code))
    return worst


def _inspect(args: argparse.Namespace) -> int:
    from pipeline.trace.inspect import format_text, inspect_trace
    from pipeline.trace.integrity import explain
    try:
        info = inspect_trace(args.trace, ranges=args.ranges, regions=args.regions)
    except Exception as exc:
        raise explain(exc, [args.trace]) from None
    print(json.dumps(info, indent=2, sort_keys=True) if args.format == "json" else format_text(info))
    return 0


def _init(args: argparse.Namespace) -> int:
    from pipeline.init import skeleton, write
    text = skeleton(args.trace, args.preset, args.out.parent if args.out else Path.cwd())
    if args.out is None:
        print(text, end="")
        return 0
    write(text, args.out)
    print(f"wrote {args.out}: fill in each TODO (`mfu validate {args.out}` lists them), then `mfu run {args.out}`",
          file=sys.stderr)
    return 0


def _demo(args: argparse.Namespace) -> int:
    from pipeline.demo import run_demo
    args.out = locations.folder(args.out, "--out")
    res, folder = run_demo(args.out)
    m = res["metrics"]
    print(f"demo: MFU {_pct(m['mfu_pct_wall'])} (wall) on a synthetic 8-GPU Llama-3-8B trace -> "
          f"{folder}/report.md, report.html, result.json and the charts (*.svg)")
    return 0


def _synth(args: argparse.Namespace) -> int:
    from pipeline.trace.synth import SynthSpec, generate
    from pipeline.trace.synth_scaled import generate_scaled
    spec = SynthSpec(ranks=args.ranks, steps=args.steps, kernels_per_step=args.kernels_per_step,
                     step_ns=args.step_ns, seed=args.seed, drop_launch_every=args.drop_launch_every,
                     region=args.region, gpu_name=args.gpu_name, layers=args.layers, warmup_steps=args.warmup_steps)
    truth = (generate_scaled if args.scaled else generate)(spec, args.out)
    kernels = sum(o["kernel_count"] for o in truth["occurrences"])
    print(f"wrote {args.out} ({args.ranks} ranks x {args.steps} steps, {kernels} attributed kernels) "
          f"and {args.out}.truth.json")
    return 0


_MODEL_FLAGS = ("preset", "hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab", "mtp_layers",
                "moe_experts", "moe_top_k", "moe_expert_ffn", "moe_shared_ffn", "moe_first_dense",
                "sliding_window_window", "mlp", "attention", "lm_head")


def _flops(args: argparse.Namespace) -> int:
    from pipeline.model.flops import compute_flops
    from pipeline.model.presets import model_from_flags
    from pipeline.run import job_flops, resolved_model, validate_file
    flags = {k: getattr(args, k) for k in _MODEL_FLAGS}
    if args.job is not None:
        if any(v is not None for v in flags.values()):
            raise UsageError("give either a job file or model flags, not both")
        job = validate_file(args.job)
        result = job_flops(job, resolved_model(job))
    else:
        if args.seq_len is None or all(v is None for v in flags.values()):
            raise UsageError("without a job file, give --preset and/or architecture flags, and --seq-len")
        try:
            result = compute_flops(model_from_flags(**flags), mode=args.mode, seq_len=args.seq_len,
                                   sequences=args.batch, recompute=args.recompute, convention=args.convention,
                                   context_len=args.context_len)
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


def _models(args: argparse.Namespace) -> int:
    from pipeline.model.presets import presets
    rows = [{"name": name, "source": p["source"], "published_params": p["published_params"], "model": p["model"]}
            for name, p in sorted(presets().items())]
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
        return 0
    print(f"{'preset':<22} {'params':>9} {'hidden':>6} {'layers':>6}  source")
    for r in rows:
        m = r["model"]
        print(f"{r['name']:<22} {r['published_params'] / 1e9:>8.2f}B {m.get('hidden', '—'):>6} "
              f"{m.get('layers', '—'):>6}  {r['source']}")
    print("Use with `model: {preset: NAME}` in a job, or `mfu flops --preset NAME --seq-len N`.")
    return 0


def _flops_text(d: dict[str, Any]) -> str:
    rows = [f"{'component':<28} {'forward FLOPs':>24} {'x':>3} {'total':>26}"]
    rows += [f"{c['component']:<28} {c['forward_flops']:>24,} {c['multiplier']:>3} {c['total']:>26,}"
             for c in d["breakdown"]]
    rows.append(f"{'model FLOPs per step':<56} {d['model_flops_per_step']:>26,}")
    rows.append(f"{'hardware FLOPs per step':<56} {d['hardware_flops_per_step']:>26,}")
    rows.append(f"convention {d['convention']}: {d['convention_note']}")
    if d["tokens_per_step"] is not None:
        rows.append(f"tokens per step {d['tokens_per_step']:,}; FLOPs per token {d['flops_per_token']:.6g}")
    if d["params_total"] is not None:
        rows.append(f"parameters {d['params_total']:,} total, {d['params_active']:,} active")
    if d["six_n_flops_per_step"] is not None:
        rows.append(f"cross-check 6·N·tokens: {d['six_n_flops_per_step']:,}")
    rows += [f"warning: {w}" for w in d["warnings"]]
    return "\n".join(rows)


def _gpus(args: argparse.Namespace) -> int:
    from pipeline.hardware.catalog import catalog_rows, load_catalog
    rows = catalog_rows(load_catalog())
    if args.format == "json":
        print(json.dumps(rows, indent=2, sort_keys=True))
        return 0
    print(f"{'key':<18} {'name':<34} {'bf16':>8} {'fp16':>8} {'fp8':>8} {'tf32':>8} {'HBM GB/s':>9} {'GB':>6}")
    for r in rows:
        cells = [f"{r[k]:>8g}" if r[k] is not None else f"{'—':>8}"
                 for k in ("bf16_tflops", "fp16_tflops", "fp8_tflops", "tf32_tflops")]
        print(f"{r['key']:<18} {r['name'][:34]:<34} {' '.join(cells)} {r['hbm_gbps']:>9g} {r['memory_gb']:>6g}")
    print("Dense TFLOP/s per GPU; sources: `mfu gpus --format json` or configs/hardware.yaml.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
