"""Times per occurrence from a trace: region selection, kernel attribution, sum/union (docs/figures.md §3-6).

Two steps with a small seam between them: `build_window` reads the trace and leaves the
window tables (selected occurrences, their attributed and classified kernels and memory
operations) plus a `Window`; `analyse` reads only those tables. A batch can build one window
and analyse it per job; several files build one window each, combined in between (ranks.py).
All arithmetic on kernels happens in the SQL files; this module decides which queries apply
to this trace (attribution fallback) and turns "no such region" or "not that many
occurrences" into errors a user can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from pipeline.analysis import windows
from pipeline.analysis.trace_warnings import (analysed, backwards_warning, duplicate_warning, hosts_warning,
                                             memory_duplicate_warning, nested_warning, occurrence_runs,
                                             refuse_early_rows, refuse_negative_kernel, refuse_negative_launch,
                                             refuse_negative_ranges, unclosed_warning)
from pipeline.trace import chain, queries
from pipeline.trace.discovery import CAPTURE
from pipeline.job.config import Region
from pipeline import progress
from pipeline.errors import ResultWarning, TraceError
from pipeline.trace.open import Trace
from pipeline.trace.connection import memory_limit

if TYPE_CHECKING:
    from pipeline.trace.unions import Sorted    # numpy: imported where unions are computed (trace/queries.py)

NS = 1_000_000_000
# Kernel classes whose time counted FLOPs should cover (operator_work.sql, issue #31): matrix products and attention.
COVERAGE_CLASSES = ["gemm", "attention"]
# Warning thresholds in percent, compared in integer nanoseconds so the boundary is exact:
OUTLAST_PCT = 5                # a rank's GPU tail past its own range, of the longest CPU range (docs/figures.md §5)
OVERLAP_PCT = 1                # sum of envelopes above their union (docs/figures.md §6)


@dataclass
class Measurement:
    attribution: str                       # what was used (may differ from requested, with a warning)
    first: int
    last: int
    occurrences: list[dict[str, Any]]      # per occurrence, integer ns plus derived seconds
    ranks: list[dict[str, Any]]            # per occurrence and process
    devices_used: list[int]
    counts_per_process: dict[str, int]     # process label ("pid", or "pid@host" when pids repeat) -> ranges
    warnings: list[ResultWarning] = field(default_factory=list)
    # over all selected occurrences at once (occurrence_totals.sql): unions, so overlap counts once
    totals: dict[str, Any] = field(default_factory=dict)
    made: frozenset[str] = frozenset()     # Window.made: what a shared window made for every job (sharing.py)
    rows: SortedRows | None = None         # Window.rows


@dataclass(frozen=True, eq=False)
class SortedRows:
    """A shared window's rows as window_unions.sql fetched and sorted them once (sharing.py), from which a job's
    timeline takes its step's rows (timeline.py) instead of scanning the window again. Read-only: a deep copy
    (SharedWindow.analyse copies a job's results for a job selecting the same steps) shares it."""

    sorted: Sorted

    def __deepcopy__(self, memo: dict[int, Any]) -> SortedRows:
        return self


def prepare(trace: Trace) -> None:
    queries.run(trace.con, "views")


# Analyses a kept or shared window makes once with its tables, for every job it serves (kept_window.py, sharing.py).
WINDOW_MADE = frozenset({"window_unions", "name_times"})
# ... and what only a window shared by several jobs makes: its steps cut once for all (step_share.sql), and the
# unions per communicator, cut from one sort (analysis/sharing.py; those per stream are window_unions')
SHARED_MADE = WINDOW_MADE | {"step_share", "comm_unions"}


@dataclass
class Window:
    """What building the window leaves beside its tables, for `analyse` to read.

    The tables (selected_ranges, classified, operator_work) each have an `occurrence` column, so a window built
    over more occurrences than a job selects can be cut down to the job's before it is analysed;
    `unattributed` is keyed by occurrence too. `kernel_names` (what classified.name_id stands
    for) is a dictionary, kept whole. What only the build reads (attributed, launched,
    unlaunched, attributed_memops) is dropped once it is done (window_trim.sql).
    """

    attribution: str                       # what was used (may differ from requested, with a warning)
    first: int
    last: int
    counts_per_process: dict[str, int]     # process label ("pid", or "pid@host" when pids repeat) -> ranges
    unattributed: dict[int, dict[str, int]]  # occurrence -> kernel_count, kernel_sum_ns without a launch row
    warnings: list[ResultWarning] = field(default_factory=list)
    made: frozenset[str] = frozenset()     # analysis SQL files whose tables a shared window made (sharing.py)
    duplicates: dict[int, dict[str, int]] = field(default_factory=dict)  # occurrence -> rows, duplicate_ns dropped
    # the same for memory copies and sets (duplicate_memops.sql)
    memory_duplicates: dict[int, dict[str, int]] = field(default_factory=dict)
    # hosts of the selected ranges' processes: above 1, analyse names the device ids they share, over its
    # occurrences (a combined window of several files: 1, each file's build named its own)
    hosts: int = 1
    # backwards_kernels.sql's rows (per occurrence), when a shared window ran it once for its jobs (sharing.py)
    backwards: list[dict[str, Any]] | None = None
    rows: SortedRows | None = None         # the window's rows sorted once, when shared by several jobs (sharing.py)
    # a shared window's per-occurrence rows of OCCURRENCE_ROWS, cut per job (sharing.py): `analyse` takes them here
    occurrence_rows: dict[str, list[dict[str, Any]]] | None = None


# Analyses whose rows are per occurrence, the same whichever others were selected: a shared window runs them once
# (sharing.py) and each job takes its occurrences' rows; its occurrence_times from the window's (occurrence_cut.sql).
OCCURRENCE_ROWS = ("device_times", "rank_times", "rank_union")


def build_inputs(region: Region, classify_params: dict[str, Any]) -> tuple:
    """What build_window reads besides the trace and the occurrences asked for: the one list a shared
    (sharing.key) or a kept (kept_window.key) window is keyed on, so neither can miss a new input."""
    return (region.kind, region.start_s, region.end_s, region.name, region.match, region.domain, region.attribution,
            tuple((name, tuple(values)) for name, values in sorted(classify_params.items())))


def places(found: dict[str, Any]) -> bool:
    """Whether a window places kernels in operators and parts of the step (operator_ranges.sql's counts): only where
    there are some (an operator range, or more labels than the region's own); elsewhere the three sorts of the
    placement would cost every run for nothing."""
    return bool(found["operators"] > 0 or found["labels"] > 1)


def build_window(trace: Trace, region: Region, classify_params: dict[str, Any], several: bool = False,
                 counted: Callable[[list[dict[str, Any]]], dict[str, int]] | None = None,
                 placing: Callable[[bool], None] | None = None) -> Window:
    """Select the job's occurrences, attribute their kernels and memory operations, classify them.

    The only step that reads the trace's kernel, launch and memory tables; raise TraceError
    when the region cannot be measured. `classify_params`: classes.classify_params. `several`: the
    file is one of a job's several files, whose occurrences are checked against every file's
    (ranks.check_occurrences): a file whose processes have fewer is ranks missing occurrences. `counted`: how
    the region's rows per process (region_counts.sql) become the Window's counts (several files built as one,
    analysis/merged.py, names each file's processes as that file's window would); `placing`, told whether
    kernels are placed in operators, may refuse (merged.py: where the files would not all decide alike).
    """
    warnings: list[ResultWarning] = []
    counts = (counted or process_counts)(_select_ranges(trace, region, warnings) if region.kind == "nvtx"
                                         else windows.select(trace, region))
    if several:
        last = region.last if region.last is not None else max(counts.values())
    else:
        _, last = occurrence_range(trace, region, counts)
    attribution = _attribution(trace, region.attribution, warnings)
    if attribution == "window" and len(counts) > 1 and (pidless := _pidless(trace)):
        what = f"region '{region.name}'" if region.kind == "nvtx" else f"the {region.kind} window"
        raise TraceError(f"{trace.path}: {pidless} has no globalPid column and {what} is in "
                         f"{len(counts)} processes ({', '.join(sorted(counts))}): nothing says whose a kernel is, and "
                         "giving it to every process's range would count it once per rank. Measure one process "
                         "per file (one `nsys profile` report per rank), or export with an nsys that writes globalPid")
    steps = {"select_occurrences", *(("attribute_window",) if attribution == "window" else
                                     ("attribute_launch", "nccl_ranges")),
             "attribute_memops", "duplicate_kernels", "duplicate_memops", "classify", "operator_ranges"}
    with progress.phase("attributing kernels to occurrences", con=trace.con):
        rows = chain.run(trace.con, steps, first=region.first, last=last, same_thread=attribution == "thread",
                         mode=attribution, **classify_params)
    place = places(rows["operator_ranges"][0])
    if placing is not None:
        placing(place)
    queries.run(trace.con, "operator_work", coverage_classes=COVERAGE_CLASSES, place=place)
    hosts = rows["select_occurrences"][0]["hosts"]
    if gap := trace.lacks("time per CUDA stream"):  # the one analysis it leaves out (streams.py): said, not failed
        warnings.append({"code": "column_missing", "message": f"time per CUDA stream shows no stream ('—'): {gap}"})
    if several and hosts > 1:       # one file's window is analysed (and shared) alone: analyse names them there
        warnings += hosts_warning(queries.run(trace.con, "host_devices"))
    launch = rows.get("attribute_launch", [{}])[0]      # none under window attribution
    refuse_negative_kernel(trace, launch)
    refuse_early_rows(trace, queries.run(trace.con, "rows_before_range"))
    unattributed: dict[int, dict[str, int]] = {}
    if launch.get("unlaunched"):                        # the launch table is read again only then
        unattributed = {r["occurrence"]: r for r in queries.run(trace.con, "unattributed")}
        if unattributed:                # kernels with no launch row in their process: is theirs under a broken id?
            refuse_negative_launch(trace, queries.run(trace.con, "negative_launches"))
    queries.run(trace.con, "window_trim", memory_limit=memory_limit())
    copies = {step: {r["occurrence"]: {"rows": r["rows"], "duplicate_ns": r["duplicate_ns"]} for r in rows[step]}
              for step in ("duplicate_kernels", "duplicate_memops")}
    return Window(attribution, region.first, last, counts, unattributed, warnings,
                  duplicates=copies["duplicate_kernels"], memory_duplicates=copies["duplicate_memops"], hosts=hosts)


def _select_ranges(trace: Trace, region: Region, warnings: list[ResultWarning]) -> list[dict[str, Any]]:
    """region_ranges of an NVTX region (kind nvtx): its rows per process (region_counts.sql), or why there are none."""
    _require_tables(trace)
    found = chain.run(trace.con, {"region_ranges", "region_counts", "nested_counts", "unclosed_counts"},
                      name=region.name, match=region.match, domain=region.domain)
    _refuse_threadless(trace, region, found["region_counts"])
    refuse_negative_ranges(trace, region.name or "", found["region_counts"])     # kind nvtx: the schema requires name
    warnings += nested_warning(found["nested_counts"]) + unclosed_warning(found["unclosed_counts"])
    if not found["region_counts"]:
        raise TraceError(_not_found(trace, region))
    return found["region_counts"]


def _require_tables(trace: Trace) -> None:
    """Every missing table a measurement needs, named at once with what it prevents (docs/figures.md §2): a
    CPU-only capture lacks both, and naming only the first sends the user back to capture twice. A table
    present but lacking a column it needs is no capture problem: exporting again is the fix."""
    if lacking := trace.refusals():
        raise TraceError(f"{trace.path}: " + "; ".join(lacking))
    missing = [] if trace.has("raw_nvtx") else ["no NVTX_EVENTS table (no regions)"]
    if not trace.gpu_work():         # graph launch rows alone are GPU work (docs/figures.md §4)
        missing.append("no CUPTI_ACTIVITY_KIND_KERNEL table (no GPU kernels)")
    if missing:
        mark = "" if trace.has("raw_nvtx") else " and mark the step with an NVTX range"
        raise TraceError(f"{trace.path}: the trace has {' and '.join(missing)}; capture with {CAPTURE}{mark}")


class MissingOccurrences(TraceError):
    """The region has fewer occurrences than asked; `most` is how many the busiest process has."""

    def __init__(self, message: str, most: int):
        super().__init__(message)
        self.most = most


def occurrence_range(trace: Trace, region: Region, counts: dict[str, int]) -> tuple[int, int]:
    """The region's first..last occurrence (last: the most any process has, when not given), or why not.

    Also how a window shared by several jobs (analysis/sharing.py) checks each job.
    """
    return occurrence_range_of(str(trace.path), region, counts, "pid ")


def occurrence_range_of(where: str, region: Region, counts: dict[str, int], prefix: str) -> tuple[int, int]:
    """occurrence_range for `where` (a file, or a job's files), processes named by `prefix` + their key."""
    most = max(counts.values())
    last = region.last if region.last is not None else most
    if region.first > most or last > most:
        per = ", ".join(f"{prefix}{p}: {n}" for p, n in sorted(counts.items()))
        asked = f"{region.first}..{last}" if region.last is not None else f"first: {region.first}"
        raise MissingOccurrences(f"{where}: region '{region.name}' has fewer occurrences than asked "
                                 f"({asked}); per process: {per}. Fix region.occurrences in the job", most)
    return region.first, last


def analyse(con: duckdb.DuckDBPyConnection, window: Window, comm_class: str) -> Measurement:
    """Times per occurrence, device and rank, and over all occurrences, from the window tables alone."""
    steps = {"window_unions", "name_times", "kernel_union", "occurrence_times", "occurrence_spans",
             "occurrence_totals", "device_times", "rank_times", "rank_union", "backwards_kernels"}
    if window.backwards is not None:             # a shared window scanned for them once (sharing.py)
        steps.remove("backwards_kernels")
    shared = window.occurrence_rows
    with progress.phase("measuring the window", con=con):
        if shared is not None:
            steps -= {"kernel_union", "occurrence_times", *OCCURRENCE_ROWS}
            cut = queries.run(con, "occurrence_cut", first=window.first, last=window.last)
        rows = chain.run(con, steps - window.made, comm_class=comm_class)
    if shared is not None:                       # copies: the rows are filled in below
        rows.update({name: [dict(r) for r in shared[name]] for name in OCCURRENCE_ROWS}, occurrence_times=cut)
    # worded here, over the occurrences analysed: a shared window holds other jobs' too
    warnings = list(window.warnings)
    if window.hosts > 1:
        warnings += hosts_warning(queries.run(con, "host_devices"))
    warnings += backwards_warning(rows.get("backwards_kernels", window.backwards or []))
    totals = rows["occurrence_totals"][0]
    assemble_occurrences(rows["occurrence_times"], rows["device_times"], rows["rank_times"], window.unattributed,
                         window.counts_per_process, warnings, totals)
    warnings += duplicate_warning(window.duplicates, rows["occurrence_times"])
    if memory := analysed(window.memory_duplicates, rows["occurrence_times"]):     # rare: the class times only then
        kept = sum(c["sum_ns"] for c in queries.run(con, "class_times") if c["class"] == "memory")
        warnings += memory_duplicate_warning(memory, kept)
    union = {(u["occurrence"], u["global_pid"]): u["union_ns"] for u in rows["rank_union"]}
    for r in rows["rank_times"]:
        r["union_ns"] = union.get((r["occurrence"], r["global_pid"]), 0)
    used = sorted({d["device_id"] for d in rows["device_times"]})
    return Measurement(window.attribution, window.first, window.last, rows["occurrence_times"], rows["rank_times"],
                       used, window.counts_per_process, warnings, totals, window.made, window.rows)


def _refuse_threadless(trace: Trace, region: Region, counts: list[dict[str, Any]]) -> None:
    """Ranges with no thread (NVTX_EVENTS.globalTid NULL, which Nsight Systems always sets) belong to no process:
    none of their kernels can be attributed, and as a process of their own they crashed the rank labels (exit 5)
    or were measured as a rank that never ran. Trace data that cannot be right: exit 4 (docs/figures.md §6)."""
    threadless = sum(r["occurrences"] for r in counts if r["global_pid"] is None)
    if threadless:
        raise TraceError(f"{trace.path}: {threadless} occurrence(s) of region '{region.name}' have no thread "
                         "(NVTX_EVENTS.globalTid is NULL), so no process or rank is theirs and no kernel can be "
                         "attributed to them; re-export the report with `nsys export --type sqlite`, or remove those "
                         "rows on a copy")


def process_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Occurrences per process, keyed by pid; by pid@host when two hosts in one file share a pid."""
    pids = [r["pid"] for r in rows]
    return {(f"{r['pid']}@{r['global_pid'] >> 48}" if pids.count(r["pid"]) > 1 else str(r["pid"])): r["occurrences"]
            for r in rows}


def _attribution(trace: Trace, wanted: str, warnings: list[ResultWarning]) -> str:
    if wanted == "window":
        return wanted
    if not trace.has("raw_runtime"):            # none, or one lacking a column (its reason said after)
        fallback = (f"'{wanted}' attribution is impossible, so kernels are attributed by time window (every kernel "
                    "of the process overlapping the range, clipped to it)")
        lacking = trace.lacking.get("raw_runtime")
        warnings.append({"code": "attribution_window", "message": f"{fallback}: {lacking}" if lacking else
                         f"no CUPTI_ACTIVITY_KIND_RUNTIME table: {fallback}"})
        return "window"
    if pidless := _pidless(trace):
        warnings.append({"code": "attribution_window", "message":
                         f"{pidless} has no globalPid column, so launches cannot be matched within a "
                         "process; kernels are attributed by time window"})
        return "window"
    if gap := trace.lacks("launch attribution"):     # no kernel would match its launch: all read as outside
        raise TraceError(f"{trace.path}: {gap}; or attribute kernels by time: `region.attribution: window`")
    return wanted


def _pidless(trace: Trace) -> str | None:
    """The GPU work table present without globalPid, which says whose a row is: a trace without a kernel table
    (all its work in CUDA graph launch rows) has no kernel rows lacking one."""
    for raw, what in (("raw_kernel", "the kernel table"), ("raw_graph_trace", "the CUDA graph launch table")):
        if trace.has(raw) and not trace.has_column(raw, "globalPid"):
            return what
    return None


def _empty_in_totals(empty: int, selected: int) -> str:
    """Beside occurrences with kernels, the empty ones still count in the totals (docs/figures.md §6: FLOPs per occurrence
    x occurrences) with CPU time only, as when the capture ended before their kernels ran: the user must know."""
    if empty == selected:
        return ""
    return (f": the totals still count their model FLOPs ({empty} of {selected} occurrences) but none of their GPU "
            "work is in the wall, only their ranges, so MFU overstates the work the trace shows (a capture that ended "
            "before their kernels ran, or ranges that launch none); select occurrences that launch GPU work")


def gpu_tails(ranks: list[dict]) -> dict[int, int]:
    """Per occurrence, the longest time a rank's kernels ran past that rank's own range end (docs/figures.md §5).

    Per rank, not the occurrence's wall against its longest range: skew between ranks' starts is no GPU work,
    and a late kernel on a rank with a shorter range hides inside the others' ranges."""
    tails: dict[int, int] = {}
    for r in ranks:
        if r["kernel_count"]:
            tail = r["wall_ns"] - r["cpu_range_ns"]
            tails[r["occurrence"]] = max(tail, tails.get(r["occurrence"], 0))
    return tails


def assemble_occurrences(occurrences: list[dict], devices: list[dict], ranks: list[dict],
                         unattributed: dict[int, dict], counts: dict[str, int], warnings: list[ResultWarning],
                         totals: dict[str, Any]) -> None:
    """Add per-device unions and unattributed counts to each occurrence row; one warning per kind."""
    expected = len(counts)
    partial, late, empty = [], [], []
    per_device: dict[int, list[dict]] = {}
    for d in devices:
        per_device.setdefault(d["occurrence"], []).append(d)
    tails = gpu_tails(ranks)
    for occ in occurrences:
        k = occ["occurrence"]
        occ["device_union_ns"] = {str(d["device_id"]): d["union_ns"] for d in per_device.get(k, [])}
        occ["device_kernel_count"] = {str(d["device_id"]): d["kernel_count"] for d in per_device.get(k, [])}
        miss = unattributed.get(k, {})
        occ["unattributed_kernel_count"] = miss.get("kernel_count", 0)
        occ["unattributed_kernel_sum_ns"] = miss.get("kernel_sum_ns", 0)
        if occ["processes"] < expected:
            partial.append(k)
        if occ["cpu_range_ns"] > 0 and 100 * tails.get(k, 0) > OUTLAST_PCT * occ["cpu_range_ns"]:
            late.append((k, 100.0 * tails[k] / occ["cpu_range_ns"]))
        if occ["kernel_count"] == 0:
            empty.append(k)
    if partial:
        warnings.append({"code": "occurrence_missing_ranks", "message":
                         f"occurrence(s) {occurrence_runs(partial)} span fewer than the {expected} processes that have "
                         "this region (the others have fewer occurrences)"})
    if late:
        excess = sorted(x for _, x in late)
        warnings.append({"code": "gpu_outlasts_range", "message":
                         f"in {len(late)} of {len(occurrences)} occurrences "
                         f"({occurrence_runs([k for k, _ in late])}) the kernels of a rank end after that rank's "
                         f"range by more than 5 % of the CPU range (the "
                         f"latest rank's tail per occurrence: {excess[0]:.1f} % to {excess[-1]:.1f} % of the CPU "
                         "range): the region closes before its kernels finish, so wall time is the envelope of "
                         "range and kernels, as it should be"})
    if empty:
        warnings.append({"code": "no_kernels",
                         "message": f"no kernel was attributed in occurrence(s) {occurrence_runs(empty)}"
                         + _empty_in_totals(len(empty), len(occurrences))})
    warnings += overlap_warning(totals)
    missed = sum(o["unattributed_kernel_count"] for o in occurrences)
    if missed:
        warnings.append({"code": "unattributed_kernels", "message":
                         f"{missed} kernels of the ranges' processes ran, wholly or partly, inside the selected "
                         "ranges with no launch record in the trace (trimmed capture or CUDA graphs); they are not "
                         "counted"})


def overlap_warning(totals: dict[str, Any]) -> list[ResultWarning]:
    """The sum of the envelopes exceeds their union by more than 1 %: some seconds would count twice."""
    union, total = totals["wall_ns"], totals["wall_sum_ns"]
    if not union or 100 * total <= (100 + OVERLAP_PCT) * union:
        return []
    return [{"code": "occurrences_overlap", "message":
             f"the selected occurrences overlap in time (the CPU ran ahead of the GPU): their envelopes sum to "
             f"{total / NS:.6g} s but span {union / NS:.6g} s ({100.0 * (1 - union / total):.1f} % of the sum is "
             "overlap); totals, MFU and rates use the span, each second counted once, and step times the period "
             "between occurrence starts"}]


def _domain(row: dict[str, Any]) -> str:
    """A region_domains row in words: a domain with no name is the default one only when its id is 0."""
    if row["domain"] is not None:
        return repr(row["domain"])
    if not row["unnamed_id"]:
        return "the default domain"
    return f"domain id {row['unnamed_id']} (the export records no name for it, so region.domain cannot select it)"


def _not_found(trace: Trace, region: Region) -> str:
    """Say what the user probably meant: names a prefix match finds, then near misses by edit distance."""
    dom = f" in domain '{region.domain}'" if region.domain else ""
    msg = f"{trace.path}: no NVTX range matches '{region.name}' (match: {region.match}){dom}."
    if region.domain:
        domains = queries.run(trace.con, "region_domains", name=region.name, match=region.match)
        elsewhere = [d for d in domains if d["matching"]]
        if elsewhere:
            return (msg + " Ranges with that name are in " + ", ".join(
                f"{_domain(d)} ({d['matching']} ranges)" for d in elsewhere)
                + ": NVTX domain names are case-sensitive; set region.domain to the one meant, or remove it"
                + " to match in every domain")
        msg += " Domains in this trace: " + (", ".join(_domain(d) for d in domains) or "none") + "."
    near = queries.run(trace.con, "inspect_near_names", name=region.name)
    prefix = [r for r in near if r["kind"] == "prefix"]
    if prefix and region.match == "exact":
        msg += (" With `match: prefix` it would match " + ", ".join(
            f"{r['example']!r} ({r['ranges']} ranges)" for r in prefix)
            + " (PyTorch appends ', seq = N, op_id = M' to names).")
    close = [r for r in near if r["kind"] == "near"]
    if close:
        msg += " Close names: " + ", ".join(f"{r['name_group']!r} ({r['ranges']} ranges)" for r in close) + "."
    if not prefix and not close:
        top = queries.run(trace.con, "inspect_ranges", limit=8)
        names = dict.fromkeys(r["name_group"] for r in top)    # one per name, whatever its domains and suffixes
        shown = ", ".join("(no name: a textId in no StringIds row)" if n is None else repr(n) for n in names)
        msg += f" Most frequent range names: {shown or 'none'}."
    return msg + f" Run `mfu inspect {trace.path}` to rank the names by the GPU work they enclose"
