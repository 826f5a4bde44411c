"""What a window's ranges and rows say about the trace, in words: the warnings (and the refusals) of
building and analysing a window (measure.py), each worded from the rows of the SQL that counts it.

Kept apart from the measuring because they are read apart: a warning's words are a promise to the
user (tests pin them by hand), the measuring is arithmetic in SQL. Counts kept per occurrence
(duplicate rows) are worded over the occurrences a job analyses, never the whole window built: a
batch's shared window holds other jobs' occurrences too (analysis/sharing.py).
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import ResultWarning, TraceError
from pipeline.trace import queries
from pipeline.trace.open import Trace

MOST_LISTED = 10                    # occurrences a message names one by one, with their counts


def nested_warning(rows: list[dict[str, Any]]) -> list[ResultWarning]:
    """Matching ranges inside another matching range of their process were folded into it (docs/figures.md §6)."""
    return _left_out("nested_occurrences", rows, "nested", "lie inside another matching range of the same process",
                     "only the outermost count as occurrences, since the inner ones' work is inside them already")


def unclosed_warning(rows: list[dict[str, Any]]) -> list[ResultWarning]:
    """Matching ranges with no end (pushes never popped) are no occurrences: say so rather than drop them silently."""
    if not rows:
        return []
    return _left_out(
        "unclosed_ranges", rows, "unclosed", "were never closed",
        f"they are not counted as occurrences: the capture probably ended inside the step (the first starts at "
        f"{rows[0]['first_start_ns']} ns); select occurrences before it")


def refuse_early_rows(trace: Trace, rows: list[dict[str, Any]]) -> None:
    """Attributed rows starting before their process's range started before the call that launched them: no
    GPU can, so the trace is wrong there (docs/figures.md §6, exit 4). Measured, they stretched the kernel union
    past the wall and lowered the active-time ratio with no word; which figure is right is unknowable."""
    if not rows:
        return
    tables: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        tables.setdefault(trace.tables.get(r["source"], r["source"]), []).append(r)
    said = "; ".join(
        f"{table}: {sum(r['rows'] for r in found)} attributed row(s) start before the selected range of their "
        f"process ({_per_occurrence({r['occurrence']: r['rows'] for r in found})}; up to "
        f"{max(r['most_early_ns'] for r in found):,} ns before it)" for table, found in tables.items())
    raise TraceError(f"{trace.path}: {said}: each was launched by a CUDA call inside that range, and no GPU work "
                     "starts before the CUDA call that launched it, so these start times cannot be right (a damaged "
                     "or edited export, or a broken clock); the kernel union and sum, and the active-time ratio, "
                     "would rest on them. Export the report again, or select occurrences without them")


def refuse_negative_ranges(trace: Trace, region: str, counts: list[dict[str, Any]]) -> None:
    """A thread id is (host << 48 | pid << 24 | tid) and never negative (docs/figures.md §2): ranges with a negative
    NVTX_EVENTS.globalTid were measured as a phantom process of their own, with no kernel, skewing the ranks'
    alignment, spread and straggler cost, exit 0. Trace data that cannot be right: exit 4 (docs/figures.md §6), found
    in the per-process counts the selection makes anyway; one such range is looked up only then, to name it."""
    negative = sum(r["occurrences"] for r in counts if r["global_pid"] is not None and r["global_pid"] < 0)
    if not negative:
        return
    (row,) = queries.run(trace.con, "negative_ranges")
    raise TraceError(f"{trace.path}: {trace.tables['raw_nvtx']}.globalTid: {negative} occurrence(s) of region "
                     f"'{region}' have a negative thread id (e.g. the range starting at {row['start_ns']} ns, "
                     f"globalTid {row['global_tid']}): an id packs host, pid and tid and is never negative, so no "
                     "process is known for them and measured they were a process of their own; re-export the report "
                     "with `nsys export --type sqlite`, or remove those rows on a copy")


def refuse_negative_kernel(trace: Trace, found: dict[str, Any]) -> None:
    """A kernel (or CUDA graph launch) row whose globalPid is negative belongs to no process (docs/figures.md §2): no
    launch matches it and no range is its process's, so it was left out of every figure without a word. Found
    in the window's kernels, which the attribution holds in memory anyway (attribute_launch.sql); exit 4."""
    if found.get("negative_start_ns") is None:
        return
    table = trace.tables["raw_graph_trace" if found["negative_is_graph"] else "raw_kernel"]
    raise TraceError(f"{trace.path}: {table}.globalPid: a row inside the selected occurrences has a negative "
                     f"process id (start {found['negative_start_ns']} ns, deviceId {found['negative_device_id']}, "
                     f"correlationId {found['negative_correlation_id']}, globalPid {found['negative_global_pid']}): "
                     "an id packs host and pid and is never negative, so no process is known for it and it would be "
                     "left out of every figure; re-export the report with `nsys export --type sqlite`, or remove "
                     "those rows on a copy")


def refuse_negative_launch(trace: Trace, rows: list[dict[str, Any]]) -> None:
    """A kernel counted as launched by no call of its process whose launch row is there, with a negative
    globalTid (docs/figures.md §2: never negative): the trace is wrong there, not the capture trimmed; exit 4."""
    if not rows:
        return
    (row,) = rows
    raise TraceError(f"{trace.path}: {trace.tables['raw_runtime']}.globalTid: the launch row of a kernel inside the "
                     f"selected occurrences has a negative thread id (start {row['start_ns']} ns, correlationId "
                     f"{row['correlation_id']}, globalTid {row['global_tid']}): an id packs host, pid and tid and is "
                     "never negative, so no process is known for it and its kernel would be counted as never "
                     "launched; re-export the report with `nsys export --type sqlite`, or remove those rows on a copy")


def hosts_warning(shared: list[dict[str, Any]]) -> list[ResultWarning]:
    """Device ids are per host: one id used by processes of several hosts adds up their GPUs' figures."""
    if not shared:
        return []
    return [{"code": "devices_of_several_hosts", "message":
             f"device(s) {', '.join(str(d['device_id']) for d in shared)} ran kernels of processes on "
             f"{max(d['hosts'] for d in shared)} hosts of one file; device ids are per host, so their "
             "per-device figures add up the devices of several hosts (totals, per-rank and "
             "per-occurrence figures are not affected); give each host's export as its own file"}]


def backwards_warning(rows: list[dict[str, Any]]) -> list[ResultWarning]:
    """Attributed rows ending before they start ran for no time the export can tell: say so, not only count them."""
    if not rows:
        return []
    per = _per_occurrence({r["occurrence"]: r["rows"] for r in rows})
    return [{"code": "kernels_end_before_start", "message":
             f"{sum(r['rows'] for r in rows)} attributed kernel or memory row(s) end before they start ({per}; "
             f"{sum(r['negative_ns'] for r in rows):,} ns backwards in all): the trace's clock or the export is "
             "broken there. The union counts them as no time; kernel time sums, class "
             "times and the roofline's measured times subtract them. Export the report again"}]


def duplicate_warning(duplicates: dict[int, dict[str, int]], occurrences: list[dict]) -> list[ResultWarning]:
    """Kernel rows recorded twice were counted once (duplicate_kernels.sql): say how many and how much of
    the kernel sum as recorded (the figure's kernel sum plus the copies) they made, over the occurrences
    analysed (a shared or combined window may hold others)."""
    mine = analysed(duplicates, occurrences)
    if not mine:
        return []
    rows, copied, share, per = _copies(mine, sum(o["kernel_sum_ns"] for o in occurrences))
    return [{"code": "duplicate_kernels", "message":
             f"{rows} attributed kernel row(s) are exact copies of another (same device, stream, start, end, "
             f"correlationId and process; {per}): one stream runs one kernel at a time, so each is one execution "
             f"recorded twice by a damaged or merged export. They made {copied:,} ns, {share} of the kernel sum "
             "as recorded; each is counted once, so kernel sums, counts, class times and the roofline leave the "
             "copies out (unions and wall are the same either way)"}]


def analysed(duplicates: dict[int, dict[str, int]], occurrences: list[dict]) -> dict[int, dict[str, int]]:
    """The duplicate counts of the occurrences analysed, in order (a shared or combined window may hold others)."""
    mine = {o["occurrence"] for o in occurrences}       # a set: a merged export copies rows in every occurrence
    return {k: d for k, d in sorted(duplicates.items()) if k in mine}


def memory_duplicate_warning(mine: dict[int, dict[str, int]], kept_ns: int) -> list[ResultWarning]:
    """Memory copies and sets recorded twice were counted once (duplicate_memops.sql): how many, and how much of
    the memory operations' summed time as recorded (`kept_ns`, the memory class's summed time, plus the copies)."""
    rows, copied, share, per = _copies(mine, kept_ns)
    return [{"code": "duplicate_memory_operations", "message":
             f"{rows} attributed memory copy or set row(s) are exact copies of another (same device, stream, "
             f"start, end, correlationId and process; {per}): one stream runs one operation at a time, so each is "
             f"one operation recorded twice by a damaged or merged export. They made {copied:,} ns, {share} of the "
             "memory operations' summed time as recorded; each is counted once, so the memory class's time and "
             "the summed GPU time the top kernels' shares divide by leave the copies out"}]


def _copies(mine: dict[int, dict[str, int]], kept_ns: int) -> tuple[int, int, str, str]:
    """What both duplicate warnings say of the copies: how many rows, the ns they made, their share of the
    time as recorded (`kept_ns`, the time counted once, plus the copies), and the rows per occurrence."""
    rows, copied = sum(d["rows"] for d in mine.values()), sum(d["duplicate_ns"] for d in mine.values())
    recorded = kept_ns + copied
    share = f"{100 * copied / recorded:.4g} %" if recorded > 0 else "all"
    return rows, copied, share, _per_occurrence({k: d["rows"] for k, d in mine.items()})


def _per_occurrence(rows: dict[int, int]) -> str:
    """Rows per occurrence, each named up to MOST_LISTED occurrences, beyond that which ones as runs: a merged
    export or a broken clock touches every occurrence, and 20,000 of 'occurrence k: 1' is no message."""
    if len(rows) <= MOST_LISTED:
        return ", ".join(f"occurrence {k}: {n}" for k, n in rows.items())
    return f"{len(rows)} occurrences: {occurrence_runs(list(rows))}"


def _left_out(code: str, rows: list[dict[str, Any]], column: str, what: str, why: str) -> list[ResultWarning]:
    """One warning for matching ranges the selection left out, counted per process, with an example name."""
    if not rows:
        return []
    per = ", ".join(f"pid {r['pid']}: {r[column]}" for r in rows)
    return [{"code": code, "message": f"{sum(r[column] for r in rows)} matching range(s) {what} "
                                      f"({per}; e.g. '{rows[0]['example']}'); {why}"}]


def occurrence_runs(indices: list[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7': short enough for a warning about hundreds of occurrences."""
    out: list[str] = []
    for k in sorted(indices):
        if out and k == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{k}"
        else:
            out.append(str(k))
    return ", ".join(out)
