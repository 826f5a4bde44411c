"""Every option of `mfu` and its help text: `--help` prints this, the only copy.

Exit codes (the same table is in README.md):
  0    ok
  1    a threshold was not met, or a computed figure is impossible (invalid: e.g. MFU above 100 %, or
       FLOPs where no kernel ran; README.md lists every rule)
  2    usage: unknown command or option; a trace (an SQLite file) given where a job file goes (write
       the job with `mfu init TRACE`); an unusable --out, --cache or --history location (empty,
       a file, unreachable, read-only); a history in no known format; a Dask scheduler that does
       not answer; a full disk while writing; memory exhausted; the current folder removed; a path
       longer than the file system takes
  3    anything wrong in a job file or in the built-in GPU catalog, model presets or kernel classes
       (hardware.yaml, models.yaml, kernel_classes.yaml in pipeline/_data/configs/ of the installed
       package; `mfu gpus` and `mfu models` print the path): every problem listed with file:line:col
       and JSON pointer, in file order (by file, line, column); a job file that does not exist:
       'FILE: no such job file' and, for a relative path, the current folder it was looked for in
  4    trace problem (missing, unreadable, truncated, not an Nsight Systems export, region or
       occurrences not found, contents the export schema does not allow, a table lacking a column
       every export has (named, with the table), a leftover -wal/-journal beside it, locked by another
       program, cut short or rewritten while being read, pages found damaged by `mfu inspect --verify`)
  5    internal error (a bug: please report it with the traceback printed)
  130  interrupted (Ctrl-C); 143: terminated (SIGTERM)
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn

from pipeline import __version__
from pipeline.cli import commands
from pipeline.errors import ExitCode

EPILOG = __doc__.split("\n\n", 1)[1]

# `mfu compare` reads results and gates on them: its 1 is a gate, not a job's threshold (README.md,
# "Comparisons and CI gates", lists the same codes).
COMPARE_EPILOG = """Exit codes of mfu compare (the same list is in README.md, "Comparisons and CI gates"):
  0    no gate (no --max-regression), or every gated figure passed
  1    a gated figure failed: worse than --max-regression and significant, not comparable with the
       baseline (without --allow-incomparable), or undecided (too few samples) with --strict
  2    usage: unknown option; --junit, --strict or --allow-incomparable without --max-regression; an
       unknown --baseline; an input that does not exist or a folder holding no result.json; an
       unusable --out
  3    a file that was read and is not a result (not JSON, no schema_version/metrics, a field
       missing or of another type), or a job file input with a problem
  4    a job file input whose trace has a problem (`mfu run --help` lists them)
  5    internal error (a bug: please report it with the traceback printed)
  130  interrupted (Ctrl-C); 143: terminated (SIGTERM)
"""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `--min-change -5%`, `--seq-len -1e3`: a value starting with a minus and a digit is a value, as in Python
        # 3.13's argparse, so the option's own check says what is wrong; before, only -5 and -0.5 were, and
        # anything else failed as "expected one argument" (no option here looks like a negative number)
        self._negative_number_matcher = re.compile(r"-\.?\d")

    def error(self, message: str) -> NoReturn:  # argparse exits 2 already; keep its format, add a hint
        self.print_usage(sys.stderr)
        self.exit(int(ExitCode.USAGE), f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


INT64_MAX = commands.INT64_MAX


def _whole(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number from minimum to INT64_MAX, else a usage error (exit 2) naming the bound."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
        if value > INT64_MAX:
            raise argparse.ArgumentTypeError(f"{value} is more than {INT64_MAX:,} (64 bits)")
        return value
    return convert


def _percent(meaning: str) -> Callable[[str], float]:
    """An argparse type: '5%' or '5' -> 5.0, a size without a sign; else a usage error (exit 2) saying how to
    write it. `meaning`: why the option has no sign, said when it is given one."""
    def convert(text: str) -> float:
        number = text.strip().removesuffix("%")
        try:
            value = float(number)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a percentage; write it as e.g. 5%") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite percentage; write it as e.g. 5%")
        if value < 0:
            raise argparse.ArgumentTypeError(f"{text}: a size takes no sign ({meaning}); write {-value:g}%")
        return value
    return convert


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mfu", description="MFU reports from Nsight Systems SQLite exports.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"mfu-pipeline {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    for add in (_run_options, _history_options, _compare_options, _validate_options, _inspect_options,
                _init_options, _demo_options, _synth_options, _flops_options, _gpus_options, _models_options):
        add(sub)
    return p


# Commands whose work can run long on a big trace: they take --progress / --no-progress (pipeline/progress.py).
PROGRESS_COMMANDS = ("run", "inspect", "init", "demo", "synth")

# The exit codes are printed once, by `mfu --help`; a command's --help points there (compare has its own).
COMMAND_EPILOG = "Exit codes: `mfu --help` lists them (docs/cli.md, the same text)."


def _command(sub: Any, name: str, func: Callable[[argparse.Namespace], int], help: str,
             epilog: str = COMMAND_EPILOG) -> argparse.ArgumentParser:
    """A command's parser: its help is also its description."""
    sp = sub.add_parser(name, help=help, description=help, epilog=epilog,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.set_defaults(func=func, parser=sp)
    if name in PROGRESS_COMMANDS:
        sp.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show (or never show) on stderr the phase, what is done of how much, and the time, "
                             "for any phase over 2 s (default: only when stderr is a terminal, not under "
                             "--format json, not in CI)")
    return sp


def _run_options(sub: Any) -> None:
    sp = _command(sub, "run", commands.cmd_run,
                  "Run job files and write reports/<name>/report.md, report.html, result.json (charts inline in the "
                  "HTML and as .svg files beside report.md), and reports/index.md and index.html linking every "
                  "report in the folder with its headline figures. Several jobs run in parallel processes; a failing "
                  "job does not stop the others, a summary table lists each job's status and reason, and the exit "
                  "code is the worst one.")
    sp.add_argument("job_files", nargs="+", type=Path, metavar="JOB", help="job YAML file(s), e.g. jobs/*.yaml")
    sp.add_argument("--out", default="reports", help="output folder (default: reports)")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="summary on stdout: text (default) or json (one object per job)")
    sp.add_argument("-j", "--jobs", dest="workers", type=_whole(1), default=None, metavar="N",
                    help="worker processes (default: the CPU count); jobs reading the same trace files share "
                         "one worker, so each trace is read once; a job over several trace files, when there are "
                         "fewer trace groups than workers, has each of its files read by one of the workers")
    sp.add_argument("--history", metavar="PATH", help="append this run's results (job name, config "
                    "hash, trace hash, MFU, step time) and its failed jobs (exit code and error, as a failed "
                    "row of the run) to a history, created if missing: a PATH ending in "
                    ".duckdb is a DuckDB file; any other PATH is a folder that gets one Parquet file per run "
                    "(run-000001.parquet, ...), never rewriting earlier ones, so runs may append at once. "
                    "Render it with `mfu history PATH`")
    sp.add_argument("--label", metavar="TEXT", help="stored with this run in the --history, e.g. the commit "
                    "(--label \"$GITHUB_SHA\"); shown next to the run number (needs --history)")

    cache = sp.add_mutually_exclusive_group()       # both given, one was ignored without a word
    cache.add_argument("--cache", metavar="DIR", help="keep each trace's tables as Parquet under DIR and "
                       "reuse them (default: off for one job, the user cache folder for several; see README)")
    cache.add_argument("--no-cache", action="store_true", help="never use or write a cache")
    sp.add_argument("--executor", default="local", metavar="ENGINE",
                    help="local (default), dask-local, or dask://HOST:PORT (needs the [dask] extra)")


def _history_options(sub: Any) -> None:
    sp = _command(sub, "history", commands.cmd_history,
                  "Render the trend of MFU and step time per job from a history, a *.duckdb file or a folder of "
                  "Parquet files (history.md, history.html with SVG charts, history.json), flagging the runs where "
                  "MFU or step time changed (regression or improvement). A figure is tested only when `mfu compare`'s "
                  "rules find the run comparable with the previous valid one (same batch, model, GPUs, precision, "
                  "scope...); otherwise it is shown 'not comparable' with what changed, never flagged, and that run "
                  "is the next one's baseline. A run in which the job failed without a result is shown 'failed "
                  "(exit N): error', with no change, and is no baseline. Histories of an older format are read as "
                  "they are (their runs' comparability inputs unknown: not comparable); `mfu run --history` migrates "
                  "a DuckDB file when it appends. Each job's latest 100 runs are given in full and tested; older "
                  "ones are summarised (how many, their run numbers, MFU range), and the history keeps them all.")
    sp.add_argument("path", type=Path, metavar="PATH", help="history written by `mfu run --history PATH`: "
                    "a DuckDB file if PATH ends in .duckdb, else a folder of Parquet files; either form "
                    "renders the same rows byte for byte")
    sp.add_argument("--out", default="reports/history",
                    help="output folder (default: reports/history)")
    sp.add_argument("--min-change", metavar="PCT", default="5%", type=_percent(
                        "a run is flagged when MFU or the median step time moves by more than it, either way"),
                    help="flag a run whose MFU or median step "
                    "time moved by more than PCT (relative) since the job's previous valid run (when comparable) AND "
                    "a one-sided Mann-Whitney U test on the per-occurrence samples is significant at alpha 0.01, as "
                    "the compare gate (default 5%%); runs without samples 'cannot decide'")


def _compare_options(sub: Any) -> None:
    sp = _command(sub, "compare", commands.cmd_compare,
                  "Side-by-side report of several runs (compare.md, compare.html, compare.json): every figure per "
                  "input, its change against the baseline worded better/worse by the figure's direction, and per "
                  "figure whether it is comparable with the baseline and why not (MFU/HFU need the same FLOPs "
                  "convention, precision, peak, occurrence scope and attribution; step time and tokens/s also the "
                  "same work per step, GPU count and type). With --max-regression it is a CI gate on MFU (wall) and "
                  "the median step time: exit 1, with the reason on stderr, when a figure is worse by more than the "
                  "limit AND a one-sided Mann-Whitney U test on the per-occurrence samples is significant at alpha "
                  "0.01, or when a gated figure is not comparable. Fewer than 5 samples on a side: 'cannot decide' "
                  "(a failure only with --strict).", COMPARE_EPILOG)
    sp.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="job file (run now), result.json, or report folder holding one; at least two "
                         "counting --baseline results")
    sp.add_argument("--baseline", action="append", default=[], metavar="BASE",
                    help="an input's column heading (its job name; for runs of one job, e.g. 'step (pr/step)'), "
                         "the input as written or its 1-based position, or another "
                         "result.json / report folder (default: the first input). Repeat it for several "
                         "baseline runs of the same job: their samples are pooled and a value inside the "
                         "range they span is never called a regression (per-occurrence samples of one run "
                         "see jitter inside that run, not run-to-run noise)")
    sp.add_argument("--max-regression", metavar="PCT", type=_percent(
                        "how much worse a gated figure may be: MFU lower, step time higher"),
                    help="gate: allowed regression, e.g. 5%% (relative to the baseline's value)")
    sp.add_argument("--strict", action="store_true", help="gate: fail a figure worse than the limit even when "
                    "there are too few samples to test it (needs --max-regression)")
    sp.add_argument("--allow-incomparable", action="store_true", help="gate figures that are not comparable "
                    "with the baseline anyway (each says so) instead of failing them (needs --max-regression)")
    sp.add_argument("--format", choices=["text", "github"], default="text", help="text (default); github: also print "
                    "::error/::warning annotations on the job file for failed or undecided figures, write "
                    "summary.md to --out and append it to $GITHUB_STEP_SUMMARY when that is set")
    sp.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML: one test case per gated "
                    "figure per job (needs --max-regression)")
    sp.add_argument("--job-file", metavar="PATH", help="the job file annotations and test cases point at, as "
                    "the repository names it (default: the input when it is a job file, else the job file "
                    "name the result records)")
    sp.add_argument("--out", default="reports/compare",
                    help="output folder (default: reports/compare)")


def _validate_options(sub: Any) -> None:
    sp = _command(sub, "validate", commands.cmd_validate,
                  "Check job files (schema, scope rules, model) without reading traces. Base files (`kind: base`, "
                  "used through `extends:`) are reported as skipped.")
    sp.add_argument("job_files", nargs="+", type=Path, metavar="JOB", help="job YAML file(s), e.g. jobs/*.yaml")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text (default) or json: on stdout, one object per job file (status valid, invalid or "
                         "skipped; each problem's file, line, column, JSON pointer, message and fix; "
                         "schemas/validate.schema.json); the problems still go to stderr as text, and the exit code "
                         "is the same")


def _inspect_options(sub: Any) -> None:
    sp = _command(sub, "inspect", commands.cmd_inspect,
                  "Show what a trace holds: versions, GPUs, processes, counts, NVTX ranges, and which NVTX range "
                  "looks like one training/inference step: range names ranked by the GPU work they enclose (share of "
                  "the trace's kernel time, per-occurrence kernel sum/union/count), with nesting depth, occurrences "
                  "per process and the steadiness of their period. When no name is step-like it says it is guessing.")
    sp.add_argument("trace", type=Path, metavar="TRACE", help="Nsight Systems SQLite export "
                    "(`nsys export --type sqlite`), opened read-only")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text (default) or json (the same content, for tools)")
    sp.add_argument("--ranges", type=_whole(1), default=30, metavar="N", help="range-name groups to list by count "
                    "(default 30)")
    sp.add_argument("--regions", type=_whole(1), default=10, metavar="N", help="range-name groups to rank by the GPU "
                    "work they enclose, step-like names first (default 10)")
    sp.add_argument("--verify", action="store_true", help="first read the whole file through SQLite's "
                    "quick_check (a quarter to a third of the time of a run without the cache) and exit 4 naming "
                    "each damaged page and its table when its pages contradict themselves: damage SQLite otherwise "
                    "reads without complaint, rows lost or wrong; a value changed inside a record stays unseen "
                    "(compare the SHA-256 with the recorded file's). When it passes, the JSON's trace.quick_check "
                    "is 'ok'")


def _init_options(sub: Any) -> None:
    sp = _command(sub, "init", commands.cmd_init,
                  "Write a job file skeleton from a trace: the region, by the first shape that fits (steps, numbered "
                  "ones too, after any warm-up; one top-level step; a loop of steps; the only top-level range with GPU "
                  "work; else the GPU-active window, kind gpu_active), its reason and the other candidates in comments, "
                  "devices and processes seen, `gpu: auto` when the trace names a catalog GPU, the precision kernel "
                  "names suggest, and TODO for every value the trace cannot tell (model, batch, mode). `mfu validate` "
                  "fails at each TODO with its line until it is filled in. A trace without GPU work (no kernels, CUDA "
                  "graph launches or memory operations) gets no file: exit 4 says what to capture (GPU rows that all "
                  "lost their lengths: to export the report again).")
    sp.add_argument("trace", type=Path, metavar="TRACE", help="Nsight Systems SQLite export, opened read-only")
    sp.add_argument("--preset", metavar="NAME", help="model preset to write as model.preset (`mfu models`)")
    sp.add_argument("-o", "--out", type=Path, metavar="JOB.yaml", help="write the job file here (never "
                    "overwritten; the trace path is written relative to it when the trace is in its folder or below, "
                    "else absolute); default: print to stdout, with the trace's absolute path")


def _demo_options(sub: Any) -> None:
    sp = _command(sub, "demo", commands.cmd_demo,
                  "Generate a synthetic trace, run the demo job on it, write reports/demo.")
    sp.add_argument("--out", default="reports", help="output folder (default: reports)")


def _synth_options(sub: Any) -> None:
    sp = _command(sub, "synth", commands.cmd_synth,
                  "Write a synthetic step-level trace and its ground truth (OUT.sqlite.truth.json).")
    sp.add_argument("out", type=Path, metavar="OUT.sqlite", help="SQLite file to write (replaced if present); "
                    "the ground truth goes to OUT.sqlite.truth.json")
    for name, default, least, text in [
            ("ranks", 2, 1, "processes, one GPU each"), ("steps", 5, 1, "step ranges per rank"),
            ("kernels-per-step", 40, 1, "kernels per step per rank"), ("step-ns", 50_000_000, 1, "step length in ns"),
            ("seed", 0, 0, "random seed"), ("drop-launch-every", 0, 0, "every n-th kernel has no launch row (0: none)"),
            ("layers", 0, 0, "nested 'decoder_layer' ranges per step (0: none)"),
            ("warmup-steps", 0, 0, "first steps that take twice as long (warm-up)")]:
        sp.add_argument(f"--{name}", type=_whole(least), default=default, help=f"{text} (default {default})")
    sp.add_argument("--region", default="train_step", help="NVTX name of the step range; '{}' in it is the "
                    "step's number, as PyTorch's profiler names them: 'ProfilerStep#{}' (default train_step)")
    sp.add_argument("--gpu-name", default="NVIDIA H100 80GB HBM3",
                    help="TARGET_INFO_GPU.name to write (default 'NVIDIA H100 80GB HBM3')")
    sp.add_argument("--scaled", action="store_true", help="generate inside DuckDB for millions of kernels "
                    "(benchmarks); the truth file then holds counts only")


def _flops_options(sub: Any) -> None:
    sp = _command(sub, "flops", commands.cmd_flops,
                  "Print the model FLOPs breakdown for a job file, a preset, or architecture flags (flags override "
                  "the preset's fields). Each architecture flag sets the model key it names, described in "
                  "model.schema.json (pipeline/_data/schemas/ in the installed package).")
    sp.add_argument("job", nargs="?", type=Path, metavar="JOB", help="job file (then no model flags)")
    sp.add_argument("--preset", help="model preset name (`mfu models` lists them)")
    for flag, key in (("hidden", "hidden"), ("layers", "layers"), ("heads", "heads"), ("kv-heads", "kv_heads"),
                      ("head-dim", "head_dim"), ("ffn", "ffn"), ("vocab", "vocab"), ("mtp-layers", "mtp_layers"),
                      ("moe-experts", "moe.experts"), ("moe-top-k", "moe.top_k"),
                      ("moe-expert-ffn", "moe.expert_ffn"), ("moe-shared-ffn", "moe.shared_ffn"),
                      ("moe-first-dense-layers", "moe.first_dense_layers"),
                      ("sliding-window-window", "sliding_window.window")):
        sp.add_argument(f"--{flag}", type=int, help=f"model.{key}")
    sp.add_argument("--mlp", choices=["swiglu", "geglu", "gelu", "relu"], help="MLP kind")
    sp.add_argument("--attention", choices=["causal", "full"], help="attention mask")
    sp.add_argument("--lm-head", action=argparse.BooleanOptionalAction, default=None, help="count the LM head")
    sp.add_argument("--mode", choices=["training", "inference", "decode"],
                    help="workload.mode (without JOB; default training)")
    sp.add_argument("--seq-len", type=_whole(1), default=None, help="tokens per sequence (required without JOB)")
    sp.add_argument("--batch", type=_whole(1), help="sequences per step (without JOB; default 1)")
    sp.add_argument("--context-len", type=int, help="decode: KV-cache length (without JOB)")
    sp.add_argument("--recompute", choices=["none", "selective", "full"],
                    help="workload.recompute (without JOB; default none): raises HFU, never MFU")
    sp.add_argument("--convention", choices=["megatron", "palm", "6n"],
                    help="model.convention (without JOB; default: the preset's, else megatron)")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text table (default) or json (the breakdown as data)")


def _gpus_options(sub: Any) -> None:
    sp = _command(sub, "gpus", commands.cmd_gpus,
                  "List the built-in GPU catalog: dense peaks (bf16, fp16, fp8, tf32, fp32) and bandwidth, and the "
                  "file they are read from (hardware.yaml in the installed package); --format json adds each entry's "
                  "source and its fp64, fp64_tensor, int8 and fp4 peaks. A job file sets its own peak with "
                  "hardware.peak_tflops.")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text table (default) or json (every entry with its source and every precision's peak)")


def _models_options(sub: Any) -> None:
    sp = _command(sub, "models", commands.cmd_models,
                  "List the built-in model presets: shape, published parameter count and the source each shape comes "
                  "from, and the file they are read from (models.yaml in the installed package). Use one with "
                  "`model.preset` (keys beside it override the preset's) or `mfu flops --preset`.")
    sp.add_argument("--format", choices=["text", "json"], default="text",
                    help="text table (default) or json (every preset with its full model section)")
