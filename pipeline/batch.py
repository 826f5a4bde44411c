"""Many jobs in one command: parallel processes, each trace read once, a failing job stops nothing.

Jobs are loaded first (a broken job file becomes one failed row, exit 3), then
grouped by the trace files they read. A group runs in one worker process on one
DuckDB connection with its files copied in once (ranks.open_set(materialize), or into the
cache's Parquet) when it builds several windows, so a trace shared by five jobs is read once,
not five times; one window built for all of them reads the file itself (or an existing entry). Within a group, jobs
whose windows would be built from the same inputs share one window built over all
their occurrences (analysis/sharing.py), so selection, attribution and classification
run once, not once per job. Groups run in parallel (`--jobs N`). With fewer groups
than workers, a job of its own over several files uses the spare ones: each file's
window is built by a task of the same pool (ranks.build_files), the job combined
here, unless its files are small enough to be built as one here (analysis/merged.py: no
task); with one worker nothing changes. Every job ends as a summary row; the exit
code of the batch is the worst one.
"""

from __future__ import annotations

import os
import sys
import traceback
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, TextIO

from pipeline import interrupts
from pipeline.analysis import classes, ranks, sharing
from pipeline.trace import integrity
from pipeline.job.config import Job
from pipeline.job.extends import BASE_NOTE, is_base
from pipeline.report import index, publish
from pipeline.report.fmt import fmt_against
from pipeline.run import class_rules, exit_code, load_checked, run_to_folder
from pipeline.errors import ConfigError, ExitCode, MfuError, Problem, environment_error, shown
from pipeline.executor import check_engine, pool

Row = dict[str, Any]
# A finished job's row carries its index summary (index.summary) from the worker to the batch's record of it,
# which takes it out: no row printed or kept has it.
SUMMARY = "_index_summary"


def distinct(job_files: list[Path]) -> tuple[list[Path], list[str]]:
    """Each job file once, as first given, and a note per repeat: overlapping globs (`jobs/*.yaml jobs/a.yaml`)
    name one file twice, which is one job, not two jobs clashing over one report folder."""
    seen: dict[Path, Path] = {}
    notes = []
    for path in job_files:
        first = seen.setdefault(Path(path).resolve(), path)
        if first is not path:
            again = "given twice" if str(path) == str(first) else f"{first} again"
            notes.append(f"note: {path} is {again}: run once")
    return list(seen.values()), notes


def plan(job_files: list[Path]) -> tuple[list[list[Job]], list[Row]]:
    """Group loadable jobs by trace files; rows for jobs that fail before any trace is read.

    Each job is loaded here, once, and travels to its worker with an absolute path: a Dask
    worker elsewhere resolves nothing relative.
    """
    groups: dict[tuple[str, ...], list[Job]] = {}
    failed: list[Row] = []
    names: dict[str, Path] = {}
    for path in job_files:
        if is_base(path):
            failed.append({"job": str(path), "name": None, "exit_code": int(ExitCode.OK), "status": "skipped",
                           "reason": BASE_NOTE})
            continue
        try:
            job = load_checked(path)
            if job.name in names:
                raise ConfigError([Problem(f"job name '{job.name}' is also used by {names[job.name]}; both would "
                                           "write the same report folder", "/name", str(path), 1, 1,
                                           "give every job its own name")], job.name, job.sha256)
        except MfuError as exc:
            failed.append(_failed(path, exc))
            continue
        names[job.name] = path
        try:        # a loaded job whose trace pattern matches nothing: its row has its name and config hash
            key = tuple(str(p) for p in job.trace_files())
        except MfuError as exc:
            failed.append(_failed(path, exc, job))
            continue
        groups.setdefault(key, []).append(replace(job, path=Path(path).resolve()))
    return list(groups.values()), failed


def run_group(jobs: list[Job], out_root: str, cache_dir: str | None = None,
              submit: ranks.Submit | None = None) -> list[Row]:
    """Worker: open the group's traces once (through the cache when given), run and write each job; never raise.

    With `submit` (a lone job over several files, given spare workers) it runs where it is called,
    each file's window built by a task of `submit`.
    """
    cache = Path(cache_dir) if cache_dir else None
    if submit is not None:
        return [_job_row(jobs[0], Path(out_root), cache_dir=cache, submit=submit)]
    sets = sharing_sets(jobs)
    try:    # one window built for several jobs: it reads the file itself (or an existing cache entry), no copy pays
        ts = ranks.open_set(jobs[0].trace_files(), materialize=len(sets) > 1, cache_dir=cache, lone=len(jobs) == 1,
                            copy=len(sets) > 1 or len(jobs) == 1)
    except Exception as exc:  # noqa: BLE001 - every job of the group gets the same failed row
        interrupts.reraise_if_pending()
        exc = integrity.explain(exc, jobs[0].trace_files())
        return [_failed(job.path, exc, job) for job in jobs]
    rows = []
    try:
        for same, rules in sets:
            rows += _run_sharing(ts, same, rules, Path(out_root))
    finally:
        ts.close()
    return rows


def sharing_sets(jobs: list[Job]) -> list[tuple[list[Job], list[classes.Rule] | None]]:
    """The group's jobs in sets that build the same window (sharing.key) over nearby occurrences
    (sharing.clusters), each with its class rules.

    A job whose key cannot be made (several files, a broken class rule) is a set of its own
    (rules None): it builds its own window, and meets its own error there.
    """
    sets: dict[Any, tuple[list[Job], list[classes.Rule] | None]] = {}
    for job in jobs:
        rules: list[classes.Rule] | None
        try:
            found = class_rules(job)
            rules, key = found, sharing.key(job, found)
        except MfuError:
            rules, key = None, None
        sets.setdefault(key if key is not None else id(job), ([], rules))[0].append(job)
    return [(run, rules) for same, rules in sets.values() for run in sharing.clusters(same)]


def _run_sharing(ts: ranks.TraceSet, jobs: list[Job], rules: list[classes.Rule] | None, out_root: Path) -> list[Row]:
    """Build one window for the set (when several share it), then run and write each job on it; never raise."""
    window = None
    if len(jobs) > 1 and rules is not None:
        try:
            window = sharing.build(ts, jobs, rules)
        except Exception:  # noqa: BLE001 - each job then builds its own window and meets its own error there
            interrupts.reraise_if_pending()
    try:
        with window.serving() if window is not None else nullcontext():
            return [_job_row(job, out_root, shared=ts, window=window) for job in jobs]
    finally:
        if window is not None:
            window.close()


def _job_row(job: Job, out_root: Path, **where: Any) -> Row:
    try:
        res, folder = run_to_folder(job, out_root, indexed=True, **where)     # mfu run writes the index
        row = _ok(job.path, res, folder, int(exit_code(res)))
        return {**row, SUMMARY: index.summary(row, res)}         # taken from the result here, not parsed back
    except Exception as exc:  # noqa: BLE001 - one job's failure must not stop the others
        interrupts.reraise_if_pending()
        return _failed(job.path, integrity.explain(exc, job.trace_files()), job, _trace_hash(where))


def _trace_hash(where: dict[str, Any]) -> str | None:
    """The traces' hash for a failed job's row, when the batch had opened them (its hashing started at
    open); None when the job opened them itself or the hash cannot be finished (the file gone)."""
    ts = where["window"].ts if where.get("window") else where.get("shared")
    try:
        return ts.sha256() if ts is not None else None
    except Exception:  # noqa: BLE001 - a hash for the history only: the job's own error is the one to report
        interrupts.reraise_if_pending()
        return None


def run_batch(job_files: list[Path], out_root: Path, workers: int | None = None,
              progress: TextIO | None = None, cache_dir: Path | None = None, engine: str = "local") -> list[Row]:
    """Run every job; rows in the order the files were given. `workers`: local worker processes."""
    check_engine(engine)
    groups, rows = plan(job_files)
    total = len(job_files)
    shown = _progress(progress or sys.stderr, total)

    # Jobs refused before any ran (a bad name, a broken file) create no missing parents of the output folder
    # (--out a/b/out where a/ does not exist): their records wait for the first job that runs or is skipped.
    deferred: list[Row] = []

    def tick(row: Row) -> None:
        for r in [*deferred, row]:
            publish.record(out_root, r, r.pop(SUMMARY) if SUMMARY in r else index.summary(r))
        deferred.clear()
        shown(row)
    for r in rows:
        if r["exit_code"] and not Path(out_root).absolute().parent.exists():
            deferred.append(r)
            shown(r)
        else:
            tick(r)
    requested = workers or os.cpu_count() or 1
    spread = [len(groups) < requested and len(g) == 1 and len(g[0].trace_files()) > 1 for g in groups]
    tasks = sum(len(g[0].trace_files()) if s else 1 for g, s in zip(groups, spread))
    workers = max(1, min(requested, tasks or 1))
    cache, out = (str(Path(cache_dir).resolve()) if cache_dir else None), str(Path(out_root).resolve())
    try:
        with pool(engine, workers) as (submit, gather):
            futures = [submit(run_group, g, out, cache) for g, s in zip(groups, spread) if not s]
            here = [run_group(g, out, cache, submit) for g, s in zip(groups, spread) if s]
            for done in [*here, *gather(futures)]:
                for r in done:
                    rows.append(_as_given(r, job_files, out_root))
                    tick(r)
    except KeyboardInterrupt as exc:       # Ctrl-C or SIGTERM: the unfinished jobs are recorded as such
        finished = {r["job"] for r in rows}
        for r in deferred:
            publish.record(out_root, r, index.summary(r))
        for job in [j for g in groups for j in g if str(j.path) not in finished]:
            publish.record(out_root, {"job": str(job.path), "name": job.name, "status": "interrupted",
                                      "exit_code": getattr(exc, "exit_code", 130),
                                      "reason": "interrupted before it finished; an earlier report is unchanged"})
        raise
    order = {str(p): i for i, p in enumerate(job_files)}
    return sorted(rows, key=lambda r: order.get(r["job"], total))


def _as_given(row: Row, job_files: list[Path], out_root: Path) -> Row:
    """Name the job file and report folder as the user wrote them, not as the worker saw them; so too the
    paths in the reason under the job file's folder (the job file itself, a trace beside it): an error
    found once the trace was read reads `jobs/a.yaml:4:17: ...`, as `mfu validate` says it, not with
    this machine's folders."""
    given = {str(Path(f).resolve()): f for f in job_files}
    seen = row["job"]
    if seen in given:
        row["job"] = str(given[seen])
        typed = Path(given[seen]).parent
        row["reason"] = publish.under_folder(row["reason"], str(Path(seen).parent),
                                             "" if typed == Path(".") else f"{typed}{os.sep}")
    if row.get("report") and not Path(out_root).is_absolute():
        row["report"] = os.path.relpath(row["report"])
    return row


def worst(rows: list[Row]) -> int:
    return max((r["exit_code"] for r in rows), default=int(ExitCode.OK))


def _ok(path: Path, res: dict[str, Any], folder: Path, code: int) -> Row:
    failed = [t for t in res["thresholds"] if t["passed"] is False]
    reason = res["status_reason"] if res["status"] != "ok" else \
        "; ".join(f"{t['name']} {t['limit']} not met: {fmt_against(t['value'], t['limit'], 3)}" for t in failed)
    return {"job": str(path), "name": res["job"]["name"], "exit_code": code,
            "status": "ok" if code == 0 else ("invalid" if res["status"] != "ok" else "threshold"),
            "reason": reason, "report": str(folder), "metrics": res["metrics"],
            "step_time_median_s": res["step_time"]["median_s"], "failed_thresholds": failed}


def _failed(path: Path, exc: BaseException, job: Job | None = None, trace_sha256: str | None = None) -> Row:
    """A job's failed row; its name once the job file loaded (`job`), so its record replaces the job's
    earlier outcome (the index lists one row per job name, with its latest run).

    What is known of the job goes with it for a history's failed row (history.failures_of): the config
    hash, the trace hash when the traces were opened, and, for a job file that did not load, the name it
    gives itself (`name_in_file`, from ConfigError), which the index does not use: that file may claim the
    name of another job."""
    exc = exc if isinstance(exc, MfuError) else environment_error(exc) or exc
    if isinstance(exc, MfuError):
        code, status, reason = int(exc.code), "error", str(exc)
    else:   # a bug: keep the traceback in the row so it can be reported
        code, status = int(ExitCode.INTERNAL), "internal error"
        reason = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip()
    return {"job": str(path), "name": job.name if job else None, "exit_code": code, "status": status,
            "reason": reason, "config_sha256": job.sha256 if job else getattr(exc, "config_sha256", None),
            "trace_sha256": trace_sha256, "name_in_file": None if job else getattr(exc, "job_name", None)}


def _progress(stream: TextIO, total: int) -> Callable[[Row], None]:
    """One line per finished job; on a terminal the line is rewritten in place."""
    done = [0]
    tty = hasattr(stream, "isatty") and stream.isatty()

    def tick(row: Row) -> None:
        done[0] += 1
        text = f"[{done[0]}/{total}] {row['name'] or row['job']}: {row['status']}"
        if tty:
            end = "\n" if done[0] == total else ""
            # the line's own controls, past the CLI's ShownStream (which would write them out); the name shown
            getattr(stream, "raw", stream).write(f"\r\033[K{shown(text)}{end}")
        else:
            stream.write(text + "\n")
        stream.flush()
    return tick


def job_names(rows: list[Row]) -> list[str]:
    """The name each job of a batch goes by in its summary and in a history. A loaded job's is its `name:`,
    whatever folder the run starts in; so a job file that did not load is named by what it holds, not by the
    path typed (run from another folder, the same file was another job): the name it gives itself, else its
    file's name, as the index shows it; when a job of the run already goes by that, the shortest end of the
    file's path that none does ('b/x.yaml'). A base file's row is named by its file and takes no name."""
    taken = {r["name"] for r in rows if r["name"] is not None}
    out = []
    for r in rows:
        name = r["name"]
        if r["status"] == "skipped":
            name = Path(r["job"]).name
        elif name is None:
            claimed = r.get("name_in_file")
            name = claimed if claimed is not None and claimed not in taken else _free_end(Path(r["job"]), taken)
            taken.add(name)
        out.append(name)
    return out


def _free_end(path: Path, taken: set[str]) -> str:
    """The fewest trailing parts of the file's path (never its root) that are not a name already taken."""
    parts = path.resolve().parts[1:]
    ends = ["/".join(parts[-k:]) for k in range(1, len(parts) + 1)]
    return next((end for end in ends if end not in taken), ends[-1])


def summary_table(rows: list[Row]) -> str:
    """The batch summary: one row per job with its status, exit code and reason or headline."""
    names = job_names(rows)
    width = max([32, *(len(n) for n in names)])          # a job's name in full: it names its folder
    lines = [f"{'job':<{width}} {'status':<14} {'exit':>4}  detail"]
    for r, name in zip(rows, names):
        if r["status"] == "invalid":           # its figures are no measurements: the reason, not "MFU 407 %"
            detail = f"no figure is a measurement -> {r['report']}/report.md; {r['reason']}"
        elif r["status"] in ("ok", "threshold"):
            m = r["metrics"]
            mfu = "—" if m["mfu_pct_wall"] is None else f"{m['mfu_pct_wall']:.2f} %"
            detail = f"MFU {mfu}, step {r['step_time_median_s']:.6f} s -> {r['report']}/report.md"
            if r["reason"]:
                detail += f"; {r['reason']}"
        else:
            detail = r["reason"].splitlines()[0] if r["exit_code"] != ExitCode.INTERNAL else r["reason"]
        lines.append(f"{name:<{width}} {r['status']:<14} {r['exit_code']:>4}  {detail}")
    return "\n".join(lines)
