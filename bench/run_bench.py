"""Benchmark for issue #10 (not part of the test suite): the cost of `mfu run` as ratios within one run.

Trace shape (`mfu synth --scaled`): 8 ranks x 25 steps x K kernels per step and rank, one launch
row per kernel plus a duplicate for every 10th; K = 2,500 / 10,000 / 40,000 gives 0.5 / 2 / 8 M
kernels. A job selects 10 occurrences (steps 8-17), so its window holds 40 % of the kernels:
0.2 / 0.8 / 3.2 M. Every figure is the median of --repeat runs, each a fresh child process,
the measurements alternating within a repetition so load changes hit them all alike:
  floor   DuckDB alone (in the child, start-up excluded): ATTACH, kernels joined to their launch
          rows on (correlationId, process), durations summed (bench/floor.sql)
  reads   the same, but both tables read with every column a job needs and no join (bench/reads.sql):
          what a cold run cannot go below, since the SQLite scanner takes no filter
  cold    `mfu run` on the job, no cache (start-up included), and its peak RSS
  warm    the same job with the Parquet cache already built by an earlier run of it, so also its kept
          window and the rows its analysis asked for (analysis/kept_window.py)
  batch   20 jobs on the same trace in one `mfu run` (windows steps 1-10 ... 16-25, all inside it),
          cache cold (the batch builds it: the trace is read once for all 20)
and, once per size, the phases of one cold run, one warm run and the batch (bench/phases.py: per
phase, and for the batch its shared part against each job's own part). Also, at the smallest size
selection: one job over 20,000 occurrences vs 2,000 (1 rank x 20,000 steps x 10 kernels), and
multi-file: 8 rank files in one job, `-j 2` vs `-j 1`. Writes bench/RESULTS.last.md.
  python bench/run_bench.py [--sizes 2] [--repeat 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RANKS, STEPS, FIRST, LAST, JOBS = 8, 25, 8, 17, 20
KERNELS = {0.5: 2_500, 2: 10_000, 8: 40_000}          # per step and rank, by millions of kernels
# Children keep Python's bytecode cache, as an installed package has it: with PYTHONDONTWRITEBYTECODE
# from the shell each of them would compile the package's sources again (about 0.05 s of every run).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(REPO)}
PHASES = ("startup", "job", "read", "attribution", "analyses", "flops", "peak", "render", "publish", "index", "other")


def child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS (MB), stdout and CPU seconds (user + system) of one child process; a failing
    child stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env or ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):            # 1: a threshold or validity verdict, still a full run
        raise SystemExit(f"{' '.join(cmd)} failed ({code}): {proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, out, usage.ru_utime + usage.ru_stime


def synth(path: Path, ranks: int, steps: int, kernels: int, seed: int = 0) -> Path:
    if not path.is_file():
        subprocess.run([sys.executable, "-m", "pipeline.cli", "synth", str(path), "--scaled", "--ranks", str(ranks),
                        "--steps", str(steps), "--kernels-per-step", str(kernels), "--seed", str(seed)],
                       check=True, env=ENV, stdout=subprocess.DEVNULL)
    return path


def job(folder: Path, name: str, trace: str | list[str], first: int, last: int, gpus: int) -> Path:
    """A llama-3-8b training job: kernel classes, overlap and roofline all on (JSON is YAML)."""
    body = {"name": name, "trace": trace, "region": {"name": "train_step", "occurrences": {"first": first, "last": last}},
            "hardware": {"gpu": "auto", "num_gpus": gpus, "precision": "bf16"}, "model": {"preset": "llama-3-8b"},
            "workload": {"mode": "training", "seq_len": 1024, "global_batch": 1}}
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps(body))
    return path


def reports(work: Path, name: str) -> Path:
    """An output folder per measurement: `mfu run` rebuilds the folder's index from every result.json in
    it, so one folder for all would make each run read the others' reports (the 20,000-occurrence one
    is 17 MB)."""
    return work / "reports" / name


def mfu(out: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", "run", "--out", str(out), *args]


def phases(*args: str) -> dict:
    """bench/phases.py's timers for one `mfu run` in a child (its last line of output)."""
    return json.loads(child([sys.executable, str(HERE / "phases.py"), *args])[2].splitlines()[-1])


def floor(trace: Path, *options: str, cpu: bool = False) -> float:
    """The floor's wall seconds (or, `cpu`, its CPU seconds), start-up excluded (bench/floor.py)."""
    return float(child([sys.executable, str(HERE / "floor.py"), *options, str(trace)])[2].split()[-1 if cpu else -2])


def measure_size(work: Path, millions: float, repeat: int, batch_too: bool = True) -> dict:
    trace = synth(work / f"synth-{millions:g}m.sqlite", RANKS, STEPS, KERNELS[millions])
    jobs = work / f"jobs-{millions:g}m"
    jobs.mkdir(exist_ok=True)
    one = job(jobs, "one", f"../{trace.name}", FIRST, LAST, RANKS)
    batch = [job(jobs, f"batch-{i:02d}", f"../{trace.name}", 1 + i % 16, 10 + i % 16, RANKS) for i in range(JOBS)]
    cache = work / f"cache-{millions:g}m"
    out, out_batch = reports(work, f"{millions:g}m"), reports(work, f"{millions:g}m-batch")
    shutil.rmtree(cache, ignore_errors=True)
    child(mfu(out, "--cache", str(cache), str(one)))                  # builds the cache for `warm`
    runs: dict[str, list] = {k: [] for k in ("floor", "reads", "cold", "warm", "batch")}
    cpu: dict[str, list[float]] = {k: [] for k in ("cold", "inspect", "cold_nobc", "warm_nobc")}
    nobc = ENV | {"PYTHONDONTWRITEBYTECODE": "1", "MFU_CACHE_DIR": str(work / "derived")}   # issue 34's machines
    load = []
    for _ in range(repeat):
        load.append(os.getloadavg()[0])
        runs["floor"].append((floor(trace), 0.0))
        runs["reads"].append((floor(trace, "--reads"), 0.0))
        cold = child(mfu(out, "--no-cache", str(one)))
        runs["cold"].append(cold[:2])
        cpu["cold"].append(cold[3])
        cpu["inspect"].append(child([sys.executable, "-m", "pipeline.cli", "inspect", str(trace)])[3])
        cpu["cold_nobc"].append(child(mfu(out, "--no-cache", str(one)), nobc)[3])
        cpu["warm_nobc"].append(child(mfu(out, "--cache", str(cache), str(one)), nobc)[3])
        runs["warm"].append(child(mfu(out, "--cache", str(cache), str(one)))[:2])
        if batch_too:
            shutil.rmtree(cache / "batch", ignore_errors=True)        # a cold cache: the batch reads the trace
            runs["batch"].append(child(mfu(out_batch, "--cache", str(cache / "batch"), *map(str, batch)))[:2])
    row = {k: (statistics.median(t for t, _ in v), max(m for _, m in v)) if v else (math.nan, math.nan)
           for k, v in runs.items()}
    row["cold_mb"] = [m for _, m in runs["cold"]]
    row["cpu"] = {k: statistics.median(v) for k, v in cpu.items()}
    row["floor_cpu"] = statistics.median(floor(trace, cpu=True) for _ in range(repeat))
    row["load"] = load + [os.getloadavg()[0]]
    row["phases"] = phases("--no-cache", "--out", str(out), str(one))
    row["warm_phases"] = phases("--cache", str(cache), "--out", str(out), str(one))
    if batch_too:                       # the same batch in one process (-j 1: it is one trace group anyway)
        shutil.rmtree(cache / "batch", ignore_errors=True)
        row["batch_phases"] = phases("-j", "1", "--cache", str(cache / "batch"), "--out", str(out_batch),
                                     *map(str, batch))
    row.update(millions=millions, window=int(millions * 1e6 * (LAST - FIRST + 1) / STEPS), bytes=trace.stat().st_size)
    return row


def selection(work: Path, repeat: int) -> dict[str, float]:
    """One rank x 20,000 steps x 10 kernels: 2,000 vs 20,000 selected occurrences (linear: about 10x)."""
    trace = synth(work / "synth-steps.sqlite", 1, 20_000, 10)
    folder = work / "jobs-steps"
    folder.mkdir(exist_ok=True)
    small, large = (job(folder, f"occ{n}", f"../{trace.name}", 1, n, 1) for n in (2_000, 20_000))
    times: dict[str, list[float]] = {"2000": [], "20000": []}
    for _ in range(repeat):
        times["2000"].append(child(mfu(reports(work, "occ2000"), "--no-cache", str(small)))[0])
        times["20000"].append(child(mfu(reports(work, "occ20000"), "--no-cache", str(large)))[0])
    return {k: statistics.median(v) for k, v in times.items()}


def multi_file(work: Path, repeat: int) -> dict[str, float]:
    """8 rank files (1 rank x 25 steps x 10,000 kernels each) in one job: -j 2 against -j 1 and against
    dask-local (2 workers); then (issue 34) 64 small rank files (1 x 25 x 500) against the same kernels in one
    file (64 ranks): CPU seconds inline (-j 1), the per-file fixed cost, and -j 2 against dask-local on them."""
    out: dict[str, float] = {}
    for name, count, kernels in (("ranks", 8, 10_000), ("ranks64", 64, 500)):
        folder = work / name
        folder.mkdir(exist_ok=True)
        files = [synth(folder / f"rank{i}.sqlite", 1, STEPS, kernels, seed=i) for i in range(count)]   # captures
        many = job(folder, name, [f.name for f in files], FIRST, LAST, count)
        runs = {"-j 1": ("-j", "1"), "-j 2": ("-j", "2"), "dask-local": ("-j", "2", "--executor", "dask-local")}
        if count == 64:
            single = job(folder, "one-file", f"../{synth(work / 'synth-64ranks.sqlite', 64, STEPS, kernels).name}",
                         FIRST, LAST, count)
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in [*runs, *(["one file"] if count == 64 else [])]}
        for _ in range(repeat):
            for k, options in runs.items():
                wall, _, _, cpu = child(mfu(reports(work, name), "--no-cache", *options, str(many)))
                times[k].append((wall, cpu))
            if count == 64:
                wall, _, _, cpu = child(mfu(reports(work, name + "-one"), "--no-cache", "-j", "1", str(single)))
                times["one file"].append((wall, cpu))
        for k, v in times.items():
            out[f"{count} {k}"] = statistics.median(w for w, _ in v)
            out[f"{count} {k} cpu"] = statistics.median(c for _, c in v)
    return out


def _cpu_ratios(r: dict) -> str:
    c = r["cpu"]
    return (f"{r['millions']:g} M: `mfu inspect` {c['inspect']:.2f} / cold run {c['cold']:.2f} = "
            f"{c['inspect'] / c['cold']:.2f}x; with PYTHONDONTWRITEBYTECODE=1 cold {c['cold_nobc']:.2f} = "
            f"{c['cold_nobc'] / c['cold']:.2f}x the cold run, warm {c['warm_nobc']:.2f}; floor {r['floor_cpu']:.2f}")


def report(rows: list[dict], sel: dict | None, multi: dict | None, repeat: int) -> str:
    lines = ["| kernels | window | trace GB | floor s | cold s / MB | warm s | 20 jobs s / MB | cold/floor | "
             "warm/floor | 20 jobs/cold |", "|" + "---|" * 10]
    for r in rows:
        ran = not math.isnan(r["batch"][0])
        batch = f"{r['batch'][0]:.2f} / {r['batch'][1]:.0f}" if ran else "(not run)"
        ratio = f"{r['batch'][0] / r['cold'][0]:.2f}" if ran else "—"
        lines.append(f"| {r['millions']:g} M | {r['window'] / 1e6:g} M | {r['bytes'] / 1e9:.2f} | {r['floor'][0]:.2f} | "
                     f"{r['cold'][0]:.2f} / {r['cold'][1]:.0f} | {r['warm'][0]:.2f} | "
                     f"{batch} | {r['cold'][0] / r['floor'][0]:.2f} | "
                     f"{r['warm'][0] / r['floor'][0]:.2f} | {ratio} |")
    lines += ["", "The job's unavoidable reads (bench/reads.sql: both tables, the columns a job needs, no join) "
              "against the floor: " + "; ".join(f"{r['millions']:g} M {r['reads'][0]:.2f} s = "
                                                f"{r['reads'][0] / r['floor'][0]:.2f}x" for r in rows)]
    lines += ["", "Issue 34, CPU seconds (user + system, start-up included; the floor's excludes it), median: "
              + "; ".join(_cpu_ratios(r) for r in rows)]
    lines += ["", "1-minute load average at the start of each repetition and at the end: " + "; ".join(
        f"{r['millions']:g} M {' / '.join(f'{x:.1f}' for x in r['load'])}" for r in rows)]
    lines += ["", "Peak RSS of each cold run (MB): " + "; ".join(
        f"{r['millions']:g} M {' / '.join(f'{m:.0f}' for m in r['cold_mb'])}" for r in rows)]
    for run, key in (("cold", "phases"), ("warm", "warm_phases")):
        lines += ["", f"Phases of one {run} run (seconds, in-process timers, bench/phases.py):", "",
                  "| kernels | " + " | ".join(PHASES) + " | total |", "|" + "---|" * (len(PHASES) + 2)]
        for r in rows:
            p = r[key]["phases_s"]
            lines.append(f"| {r['millions']:g} M | " + " | ".join(f"{p.get(k, 0.0):.3f}" for k in PHASES)
                         + f" | {r[key]['total_s']:.3f} |")
    lines += ["", "The cold run's statements over 0.05 s (bench/phases.py: `file#n table`, wall / CPU s of the process, "
              "rows fetched and a unions file's numpy pass included; CPU compares under load):"]
    for r in rows:
        top = sorted(r["phases"].get("statement_s", {}).items(), key=lambda kv: -kv[1][1])
        lines.append(f"{r['millions']:g} M: " + "; ".join(f"{k} {w:.2f} / {c:.2f}" for k, (w, c) in top if c >= 0.05))
    batches = [r for r in rows if "batch_phases" in r]
    if batches:
        lines += ["", f"The {JOBS}-job batch in one process (seconds): `once` = start-up, job files and index; "
                  "`shared` = inside the trace group but outside every job (opening the trace, work shared "
                  "between jobs); `per job` = the jobs' own time, median and sum, then the sum by phase:", "",
                  "| kernels | total | once | shared | per job median | per job sum | "
                  + " | ".join(PHASES[2:]) + " |", "|" + "---|" * (len(PHASES) + 4)]
        for r in batches:
            b = r["batch_phases"]
            sh = b["shared_s"]
            parts = ", ".join(f"{sh.get(k, 0.0):.2f} {k}" for k in ("read", "attribution", "analyses"))
            lines.append(f"| {r['millions']:g} M | {b['total_s']:.2f} | {sum(b['process_s'].values()):.2f} | "
                         f"{sum(sh.values()):.2f} ({parts}) | {statistics.median(b['job_s']):.2f} | "
                         f"{sum(b['job_s']):.2f} | " + " | ".join(f"{b['per_job_s'].get(k, 0.0):.2f}"
                                                             for k in PHASES[2:]) + " |")
    if sel:
        lines += ["", f"Selection: 2,000 occurrences {sel['2000']:.2f} s, 20,000 occurrences {sel['20000']:.2f} s "
                  f"(ratio {sel['20000'] / sel['2000']:.2f} for 10x the occurrences)"]
    if multi:
        lines += ["", f"8 rank files in one job: -j 1 {multi['8 -j 1']:.2f} s, -j 2 {multi['8 -j 2']:.2f} s "
                  f"(ratio {multi['8 -j 2'] / multi['8 -j 1']:.2f}), dask-local -j 2 {multi['8 dask-local']:.2f} s "
                  f"({multi['8 dask-local'] / multi['8 -j 2']:.2f}x -j 2)"]
        one, many = multi["64 one file cpu"], multi["64 -j 1 cpu"]
        lines += ["", f"64 small rank files (0.8 M kernels): inline {many:.2f} CPU s against {one:.2f} for the same "
                  f"kernels in one file ({many / one:.2f}x; {(many - one) / 63:.3f} CPU s fixed per extra file); "
                  f"-j 2 {multi['64 -j 2']:.2f} s, dask-local -j 2 {multi['64 dask-local']:.2f} s "
                  f"({multi['64 dask-local'] / multi['64 -j 2']:.2f}x -j 2)"]
    load = os.getloadavg()[0]
    lines += ["", f"Median of {repeat} alternating runs. Machine: {platform.system()} {platform.release()}, "
              f"{os.cpu_count()} cores, Python {platform.python_version()}, DuckDB {duckdb.__version__}; "
              f"1-minute load average at the end: {load:.1f}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2", help="millions of kernels, comma-separated: 0.5, 2, 8")
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs per measurement (median)")
    ap.add_argument("--skip", default="", help="comma-separated: selection, multi-file, batch-above-2 (the "
                    "20-job batch only up to 2 M kernels)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "mfu-bench",
                    help="where traces, jobs, caches and reports go (traces are kept for reruns)")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    skip = set(args.skip.split(","))
    rows: list[dict] = []
    for millions in (float(s) for s in args.sizes.split(",")):
        rows.append(measure_size(args.workdir, millions, args.repeat,
                                 batch_too=not ("batch-above-2" in skip and millions > 2)))
        print(report(rows[-1:], None, None, args.repeat), flush=True)
    sel = None if "selection" in skip else selection(args.workdir, args.repeat)
    multi = None if "multi-file" in skip else multi_file(args.workdir, args.repeat)
    text = report(rows, sel, multi, args.repeat)
    print(text)
    (HERE / "RESULTS.last.md").write_text(text)


if __name__ == "__main__":
    main()
