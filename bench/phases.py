"""One `mfu run` (one job or a batch) in this process with per-phase timers (bench/run_bench.py runs it as a child).

Prints JSON, last line: wall seconds per phase and per SQL file, and where they were spent:
  process_s  outside any trace group: start-up imports, loading the job files, the index
  shared_s   inside a trace group but outside every job: opening the files, anything a batch
             builds once for all its jobs
  per_job_s  inside the jobs (`run_to_folder`, else `run_job`), summed over them; job_s lists
             each job's wall time, so a batch shows its shared part against its per-job part
Phases (each second counts in exactly one: a timer nested in another takes its time out):
  startup      imports before the command runs (the interpreter's own start is not counted)
  job          reading and checking job files
  read         opening the files and the region's ranges (views, region_ranges, selection)
  attribution  kernels and memory operations to occurrences, and their classes (the window)
  analyses     unions, times, kernel classes, overlap, top kernels, precision, roofline inputs
  flops        the numerator (model FLOPs)
  peak         the GPU catalog and the peak (the denominator)
  render       report files as text (Markdown, HTML, JSON, SVG charts)
  publish      report folders swapped in, status records
  index        the output folder's index (rendered and written), rebuilt once per command
  other        the rest: result assembly, checks, glue
Each statement is timed too (statement_s: "file#n table", wall and CPU seconds of the whole process, its
rows' fetching and a unions file's numpy pass included), so a phase's time can be traced to the statement
that takes it under load as well (CPU), e.g. attribute_launch.sql's launch and kernel statements;
job_statement_s has those run inside the jobs (a batch's per-job part), every one, summed over the jobs.
SQL files are timed by name (sql_s); a name not listed below counts in the phase of the
function that ran it (attribution inside build_window, analyses elsewhere), so a renamed or
new query lands in a sensible phase. Functions are wrapped by name wherever a module bound
them; a name that no longer exists is skipped (its time then counts in the enclosing phase),
so the benchmark keeps running while the code moves. A batch runs in this process: pass -j 1.
  python bench/phases.py --no-cache --out DIR JOB.yaml [JOB.yaml ...]
  python bench/phases.py inspect TRACE     `mfu inspect`'s statements (issue 34: its CPU against a cold run's);
                                            its text comes first, then the JSON line; its SQL counts as analyses
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import defaultdict

START = time.perf_counter()

import pipeline.batch  # noqa: E402,F401  (after START: imports count as `startup`)
import pipeline.cli  # noqa: E402
import pipeline.report.index  # noqa: E402,F401
import pipeline.run  # noqa: E402,F401
from pipeline.trace import queries  # noqa: E402

READ = {"views", "region_ranges", "region_counts", "nested_counts", "unclosed_counts", "select_occurrences",
        "gpu_rows", "macros"}
ATTRIBUTION = {"attribute_launch", "attribute_window", "attribute_memops", "unattributed", "classify",
               "classify_collect", "classify_combine", "rank_collect", "rank_combine", "window_cut"}
# (module, function, phase): wrapped where present
WRAPPED = [
    ("pipeline.run", "load_checked", "job"), ("pipeline.job.extends", "is_base", "job"),
    ("pipeline.analysis.ranks", "open_set", "read"),
    ("pipeline.analysis.sharing", "build", "attribution"), ("pipeline.analysis.ranks", "build_set", "attribution"),
    ("pipeline.analysis.measure", "build_window", "attribution"),
    ("pipeline.analysis.ranks", "analyse_set", "analyses"), ("pipeline.analysis.ranks", "measure_set", "analyses"),
    ("pipeline.analysis.registry", "measure_all", "analyses"),
    ("pipeline.trace.queries", "sort_unions", "analyses"), ("pipeline.trace.queries", "store_cut", "analyses"),
    ("pipeline.run", "resolved_model", "flops"), ("pipeline.run", "job_flops", "flops"),
    ("pipeline.hardware.catalog", "load_catalog", "peak"), ("pipeline.hardware.detect", "resolve_job_peak", "peak"),
    ("pipeline.report.render", "render_all", "render"), ("pipeline.report.render", "write_files", "render"),
    ("pipeline.report.publish", "replace_folder", "publish"), ("pipeline.report.publish", "record", "publish"),
    ("pipeline.report.index", "write_index", "index"),
]
WHOLE = {"index", "publish"}          # phases that keep the time of functions they call (the index's render)
GROUP = ("pipeline.batch", "run_group")
JOB = [("pipeline.run", "run_to_folder"), ("pipeline.run", "run_job")]   # the outermost one is a job

totals: dict[str, dict[str, float]] = {k: defaultdict(float) for k in ("process", "shared", "per_job")}
sql_s: dict[str, float] = defaultdict(float)
statement_s: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])      # "file#n table" -> [wall, CPU]
job_statement_s: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])  # the same, inside the jobs only
last_intervals = ["?"]                     # the unions file whose rows were fetched last (timed_intervals)
job_s: list[float] = []
stack: list[list] = []                 # [phase, start, seconds taken by nested timers]


def _where() -> str:
    kinds = {frame[0] for frame in stack}
    return "per_job" if "<job>" in kinds else "shared" if "<group>" in kinds else "process"


def _enter(phase: str) -> None:
    stack.append([phase, time.perf_counter(), 0.0])


def _leave() -> float:
    """Close the innermost timer: its time minus its nested timers' goes to its phase, where it ran."""
    phase, start, nested = stack[-1]
    elapsed = time.perf_counter() - start
    totals[_where()]["other" if phase.startswith("<") else phase] += elapsed - nested   # a boundary's glue
    stack.pop()
    if stack:
        stack[-1][2] += elapsed
    return elapsed


def timed(phase: str, fn):
    def wrapper(*args, **kw):
        if any(frame[0] in WHOLE for frame in stack):
            return fn(*args, **kw)
        outermost = phase == "<job>" and _where() != "per_job"
        _enter(phase)
        try:
            return fn(*args, **kw)
        finally:
            elapsed = _leave()
            if outermost:
                job_s.append(elapsed)
    wrapper.__wrapped__ = fn
    return wrapper


def timed_sql(fn):
    def wrapper(con, name, /, **params):
        outer = stack[-1][0] if stack and stack[-1][0] in ("read", "attribution", "analyses") else "analyses"
        _enter("read" if name in READ else "attribution" if name in ATTRIBUTION else outer)
        start = time.perf_counter()
        try:
            return fn(con, name, **params)
        finally:
            sql_s[name] += time.perf_counter() - start
            _leave()
    return wrapper


def timed_statements(executed):
    """queries._executed with each statement's wall and CPU time, until its caller asks for the next one."""
    def wrapper(con, query, params):
        inner = executed(con, query, params)
        for n, stmt in enumerate(queries.statements(query), start=1):
            made = re.search(r"(?:TABLE|VIEW|MACRO)\s+(\w+)", stmt[:200])
            key = f"{query}#{n}" + (f" {made.group(1)}" if made else "")
            wall, cpu = time.perf_counter(), time.process_time()
            item = next(inner)               # executes statement n
            try:
                yield item
            finally:
                _count(key, time.perf_counter() - wall, time.process_time() - cpu)
    return wrapper


def _count(key: str, wall: float, cpu: float) -> None:
    """A statement's time, in statement_s and, when a job's own, in job_statement_s too."""
    for times in (statement_s, job_statement_s) if _where() == "per_job" else (statement_s,):
        times[key][0] += wall
        times[key][1] += cpu


def timed_intervals(intervals):
    """queries._intervals (a unions file's statements, its last one's rows fetched) timed as its last statement,
    which then takes the numpy pass over those rows too (`timed_pass`)."""
    def wrapper(con, query, params):
        key = f"{query}#{len(queries.statements(query))}"
        last_intervals[0] = key
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return intervals(con, query, params)
        finally:
            _count(key, time.perf_counter() - wall, time.process_time() - cpu)
    return wrapper


def timed_pass(fn):
    """A unions pass (trace/unions.py compute, islands, sort), in the time of the statement that fetched its rows."""
    def wrapper(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _count(last_intervals[0], time.perf_counter() - wall, time.process_time() - cpu)
    return wrapper


def patch(module: str, name: str, phase: str) -> bool:
    """Wrap module.name, and every binding of the same function in pipeline's loaded modules."""
    mod = sys.modules.get(module)
    if mod is None:
        try:
            mod = __import__(module, fromlist=[name])
        except ImportError:
            return False
    fn = getattr(mod, name, None)
    if fn is None:
        return False
    wrapped = timed(phase, fn)
    for other in list(sys.modules.values()):
        if getattr(other, "__name__", "").startswith("pipeline") and getattr(other, name, None) is fn:
            setattr(other, name, wrapped)
    return True


def main(argv: list[str]) -> None:
    queries.run = timed_sql(queries.run)
    queries._executed = timed_statements(queries._executed)
    if hasattr(queries, "_intervals"):
        from pipeline.trace import unions
        queries._intervals = timed_intervals(queries._intervals)
        for name in ("compute", "islands", "sort"):
            setattr(unions, name, timed_pass(getattr(unions, name)))
    for module, name, phase in WRAPPED:
        patch(module, name, phase)
    patch(*GROUP, "<group>")
    for module, name in JOB:
        patch(module, name, "<job>")
    totals["process"]["startup"] = time.perf_counter() - START
    try:
        pipeline.cli.main(argv if argv[:1] == ["inspect"] else ["run", *argv])
    except SystemExit:
        pass
    total = time.perf_counter() - START
    counted = sum(sum(t.values()) for t in totals.values())
    totals["process"]["other"] += total - counted
    phases: dict[str, float] = defaultdict(float)
    for t in totals.values():
        for k, v in t.items():
            phases[k] += v
    print(json.dumps({"total_s": total, "phases_s": dict(phases), "sql_s": dict(sql_s),
                      "statement_s": {k: v for k, v in statement_s.items() if max(v) >= 0.01},
                      "job_statement_s": dict(job_statement_s), "jobs": len(job_s),
                      "job_s": job_s, **{f"{k}_s": dict(v) for k, v in totals.items()}}))


if __name__ == "__main__":
    main(sys.argv[1:])
