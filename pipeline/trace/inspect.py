"""`mfu inspect`: what a trace holds and which analyses it supports, before writing a job.

Everything is counted in SQL (pipeline/trace/sql/inspect_*.sql), over one read of the trace's launch and
kernel tables (inspect_read.sql; the SQLite scanner would read the file again for each query); this module only
decides what the counts mean for the user: which tables are missing and what
that prevents, and (trace/discovery.py) which NVTX range looks like one step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.analysis.classes import classify_params, load_rules
from pipeline.analysis.precision import UNKNOWN
from pipeline import progress
from pipeline.trace import chain, discovery, integrity, proposal, queries
from pipeline.errors import MfuError, TraceError
from pipeline.hardware.catalog import load_catalog
from pipeline.hardware.detect import detect
from pipeline.trace.open import GPU_WORK, RAW_TABLES, REFUSED, Trace, open_trace


def inspect_trace(path: Path, ranges: int = 30, regions: int = 10, verify: bool = False) -> dict[str, Any]:
    """What `mfu inspect` shows and `mfu init` writes from; contents the export schema does not allow
    (text in a time column) are the trace error naming them, for both commands. `verify`: first SQLite's
    quick_check over every page (a full read), damage refused before anything is counted from it."""
    if verify:
        integrity.verify_pages(path)
    try:
        info = _inspect(path, ranges, regions)
    except Exception as exc:
        raise integrity.explain(exc, [path]) from None
    if verify:
        info["trace"]["quick_check"] = "ok"
    return info


def _inspect(path: Path, ranges: int, regions: int) -> dict[str, Any]:
    trace = open_trace(path)
    try:
        with progress.phase("reading the trace", con=trace.con):
            chain.run(trace.con, {"views", "inspect_read"})
        counts = queries.run(trace.con, "inspect_counts")[0]
        groups = queries.run(trace.con, "inspect_ranges", limit=ranges)
        total_groups = queries.run(trace.con, "inspect_range_groups")[0]["groups"]
        devices = queries.run(trace.con, "inspect_devices")
        processes = queries.run(trace.con, "inspect_processes")
        if any(p["global_pid"] < 0 for p in processes):     # an id packs host, pid and tid: never negative
            raise integrity.diagnose(ValueError("negative process id"), [path]) or TraceError(
                f"{path}: a process id is negative, which no export writes; export the report again")
        gpus = queries.run(trace.con, "gpu_rows") if trace.has("raw_gpu") else None
        with progress.phase("ranking NVTX regions and kernel classes", con=trace.con):
            found = discovery.discover(trace.con, regions, counts["kernels"])
            proposal.propose(trace.con, found, counts["nvtx_ranges"], counts["kernels"])
            precision = _precision(trace.con)
        graphs = queries.run(trace.con, "inspect_graphs")[0]
        shapes = queries.run(trace.con, "inspect_shapes")[0]
    finally:
        trace.con.close()
    return {
        "trace": {"path": str(path), "sha256": trace.sha256, "nsys_version": trace.nsys_version,
                  "export_schema_version": trace.export_schema_version},
        "tables": {raw: trace.tables.get(raw) for raw in RAW_TABLES},
        "counts": counts,
        "gpus": gpus,
        "gpu_detection": _detection(gpus, [d["device_id"] for d in devices]),
        "devices_used": devices,
        "processes": processes,
        "nvtx_ranges": groups,
        "nvtx_range_groups": total_groups,
        "region_discovery": found,
        "precision_by_kernel_names": precision,
        "cuda_graphs": {"mode": graph_mode(graphs), **graphs},
        "operator_shapes": shapes,
        "supports": _supports(trace, counts) + shapes_support(shapes),
        "lacking": trace.refusals(),
        "notes": trace.notes + _backwards(counts),
    }


def _backwards(counts: dict[str, Any]) -> list[str]:
    """Rows ending before they start made negative durations, sums and shares, and a wrong step verdict, with
    no word of why (`mfu run` warns of them: trace_warnings)."""
    rows = [f"{n:,} {what}" for n, what in ((counts["backwards_kernels"], "kernel row(s)"),
                                           (counts["backwards_ranges"], "NVTX range(s)")) if n]
    if not rows:
        return []
    return [f"{' and '.join(rows)} end before they start: the trace's clock or the export is broken there. The "
            "range durations and kernel time sums and shares above subtract their negative time (the unions count "
            "it as none), so the step verdict may be wrong; export the report again"]


# How the range list shows ranges whose text is NULL and whose textId is in no StringIds row.
NO_NAME = "(no name: NVTX text NULL and textId not in StringIds)"


def _precision(con: Any) -> list[dict[str, Any]]:
    """Matrix-kernel time per precision the kernel names say, by the rules `mfu run` judges with
    (configs/kernel_classes.yaml), for `mfu init` to suggest hardware.precision. Names that say
    no type suggest nothing and are left out; share is of all matrix-kernel time. Matrix kernels without time
    (zero-length rows, or rows ending before they start) suggest nothing either: there is no share to take."""
    chain.run(con, {"inspect_all_kernels", "classify", "inspect_name_times"}, **classify_params(load_rules()))
    rows = queries.run(con, "precision_times", names=1)
    times = [max(r["sum_ns"], 0) for r in rows]     # rows ending before they start summed below 0: no time
    total = sum(times)
    if total <= 0:
        return []
    return [{"precision": r["precision"], "kernel_ns": t, "kernels": r["kernel_count"], "share": t / total}
            for r, t in zip(rows, times) if r["precision"] != UNKNOWN]


def graph_mode(counts: dict[str, int]) -> str:
    """Which --cuda-graph-trace the capture used, from what it recorded (docs/figures.md §4)."""
    rows, nodes = counts["graph_launch_rows"], counts["graph_node_kernels"]
    return "graph and node" if rows and nodes else "graph" if rows else "node" if nodes else "none"


GRAPH_MODE_TEXT = {
    "none": "none recorded",
    "graph": "graph level (--cuda-graph-trace=graph): {graph_launch_rows:,} launches of {graphs_as_rows} graphs, "
             "one row each; they count as GPU work (class cuda_graph), their kernels are not in the trace",
    "node": "node level (--cuda-graph-trace=node): {graph_node_kernels:,} kernel rows of {graphs_as_nodes} graphs; "
            "all kernels of a launch are attributed through its cudaGraphLaunch call",
    "graph and node": "both: {graph_launch_rows:,} whole-launch rows and {graph_node_kernels:,} kernel rows of graphs",
}


def _detection(gpus: list[dict] | None, used: list[int]) -> dict[str, Any]:
    try:
        found = detect(load_catalog(), gpus, used or None)
    except MfuError as exc:
        return {"entry": None, "reason": str(exc)}
    return {"entry": found.entry.key, "name": found.entry.display_name, "reason": found.reason,
            "warnings": list(found.warnings)}


def _supports(trace: Trace, counts: dict[str, Any]) -> list[str]:
    """Plain-words consequences of what is present (docs/figures.md §2: a missing table means no such events)."""
    tables, work, out = trace.tables, trace.gpu_work(), []
    lacking = [raw for raw in REFUSED if raw in trace.lacking]
    if lacking:             # as `mfu run` refuses it (measure._require_tables): export again, not capture again
        out.append("`mfu run` refuses this trace: " + "; ".join(trace.refusals()))
    if ("raw_nvtx" not in tables or not counts["nvtx_ranges"]) and "raw_nvtx" not in lacking:
        out.append("no NVTX ranges: nothing marks a step; `mfu run` can measure the GPU-active window (region kind "
                   "gpu_active, as `mfu init` writes) or a time window (kind time_window); mark each step with an NVTX "
                   f"range and capture with {discovery.CAPTURE} to measure steps" if work else
                   "no NVTX ranges: no region can be selected, so `mfu run` cannot measure a step here; mark each "
                   f"step with an NVTX range and capture with {discovery.CAPTURE}")
    if not work and not set(GPU_WORK) & set(lacking):
        out.append("no CUPTI_ACTIVITY_KIND_KERNEL table: no GPU kernels were captured, so there is no GPU work to "
                   f"measure; capture with {discovery.CAPTURE}")
    elif "raw_kernel" not in tables:
        out.append("no CUPTI_ACTIVITY_KIND_KERNEL table: all GPU work was recorded as whole CUDA graph launches "
                   "(--cuda-graph-trace=graph), which `mfu run` measures as one interval each (class cuda_graph); "
                   "kernel names, classes and precision are unavailable: capture with --cuda-graph-trace=node "
                   "for them")
    if "raw_runtime" not in tables and work:
        out.append("no CUPTI_ACTIVITY_KIND_RUNTIME table: kernel attribution falls back to the time window")
    elif gap := trace.lacks("launch attribution"):   # as `mfu run` refuses an NVTX region (measure._attribution)
        out.append(f"no kernel can be matched to its launch, so `mfu run` refuses an NVTX region attributed by launch "
                   f"(the default) and no range is seen to launch kernels: {gap}; `region.attribution: window`, "
                   "or a GPU-active or time window (region kind gpu_active, time_window), still measures")
    if counts["kernels_without_process"]:
        out.append(f"{counts['kernels_without_process']:,} kernels carry no globalPid: they are attributed by time "
                   "window, and only to a region in one process (with several, nothing says whose they are: "
                   "`mfu run` refuses such a region when the column is missing)")
    elif "raw_runtime" in tables and counts["kernels_without_launch"]:
        n, total = counts["kernels_without_launch"], counts["kernels"]
        out.append(f"{n:,} of {total:,} kernels ({100 * n / total:.1f} %) have no launch row in their process: "
                   "process and thread attribution cannot place them (a report counts those inside a selected "
                   "range as unattributed); `region.attribution: window` places every kernel by time")
    if "raw_gpu" not in tables:
        out.append("no TARGET_INFO_GPU table: the job must name hardware.gpu or hardware.peak_tflops")
    elif gap := trace.lacks("GPU identification"):
        out.append(f"the job must name hardware.gpu or hardware.peak_tflops: {gap}")
    if not out:
        out.append("regions, process/thread/window attribution and GPU detection are all available")
    return out


def shapes_support(shapes: dict[str, int]) -> list[str]:
    """What PyTorch's operator ranges enable (issue #31): with shapes, FLOPs counted from the trace."""
    if shapes["shaped_ranges"]:
        return [f"{shapes['shaped_ranges']:,} PyTorch operator ranges record their input shapes (emit_nvtx "
                "record_shapes=True): `mfu run` counts the FLOPs of their matrix products and attention and checks "
                "the declared numerator against the count (report section 'FLOPs counted from the trace')"]
    if shapes["operator_ranges"]:
        return [f"{shapes['operator_ranges']:,} PyTorch operator ranges record no shapes: captured under "
                "`torch.autograd.profiler.emit_nvtx(record_shapes=True)`, `mfu run` counts FLOPs from them"]
    return []


def format_text(info: dict[str, Any]) -> str:
    t, c = info["trace"], info["counts"]
    lines = [f"trace            {t['path']}" + ("  (SQLite quick_check: ok)" if t.get("quick_check") else ""),
             f"Nsight Systems   {t['nsys_version'] or 'unknown (no export metadata)'}; "
             f"export schema {t['export_schema_version'] or 'unknown'}",
             f"events           {c['kernels']:,} kernels, {c['launches']:,} runtime calls, "
             f"{c['nvtx_ranges']:,} NVTX ranges"]
    lines += ["", *_gpu_text(info), "", *_device_text(info), "", *_process_text(info)]
    lines += ["", *_range_text(info), "", *_discovery_text(info["region_discovery"])]
    g = info["cuda_graphs"]
    lines += ["", f"CUDA graphs      {GRAPH_MODE_TEXT[g['mode']].format(**g)}"]
    lines += ["", "what this trace supports"] + [f"  - {s}" for s in info["supports"]]
    lines += [f"  note: {n}" for n in info["notes"]]
    return "\n".join(lines)


def _gpu_text(info: dict[str, Any]) -> list[str]:
    lines = ["GPUs (TARGET_INFO_GPU)"]
    for g in info["gpus"] or []:
        bw = f"{g['memoryBandwidth'] / 1e9:,.0f} GB/s" if g["memoryBandwidth"] else "bandwidth ?"
        mem = f"{g['totalMemory'] / 2**30:.1f} GiB" if g["totalMemory"] else "memory ?"
        lines.append(f"  id {g['id']}{_cuda(g)}: {g['name']} ({g['chipName'] or '?'}, {mem}, {bw}, "
                     f"{g['smCount'] or '?'} SMs)")
    if info["gpus"] is None:
        lines.append("  none in this export")
    det = info["gpu_detection"]
    lines.append(f"  catalog match: {det.get('entry') or 'none'} — {det['reason']}")
    return lines


def _cuda(gpu: dict[str, Any] | None) -> str:
    return "" if gpu is None or gpu["cuDevice"] is None else f" (CUDA device {gpu['cuDevice']})"


def _device_text(info: dict[str, Any]) -> list[str]:
    """Kernels name their device by TARGET_INFO_GPU id (NSYS_SCHEMA), which need not be the CUDA device
    number the program used: both are shown, and a note says so when they differ."""
    gpus = {g["id"]: g for g in info["gpus"] or []}
    used = info["devices_used"]
    lines = ["devices that ran kernels"]
    lines += [f"  device {d['device_id']}{_cuda(gpus.get(d['device_id']))}: {d['kernels']:,} kernels"
              for d in used] or ["  none"]
    if any(gpus.get(d["device_id"], {}).get("cuDevice") not in (None, d["device_id"]) for d in used):
        lines.append("  note: kernels name a device by its TARGET_INFO_GPU id, not by the CUDA device number the "
                     "program used (cuda:N); reports show the id")
    return lines


def _process_text(info: dict[str, Any]) -> list[str]:
    lines = ["processes"]
    lines += [f"  pid {p['pid']}{' ' + p['name'] if p['name'] else ''}: {p['kernels']:,} kernels, "
              f"{p['ranges']:,} NVTX ranges" for p in info["processes"]]
    if not info["processes"]:
        lines.append(f"  none identified: the {info['counts']['kernels']:,} kernels carry no globalPid"
                     if info["counts"]["kernels_without_process"] else "  none")
    return lines


def _range_text(info: dict[str, Any]) -> list[str]:
    if not info["nvtx_ranges"]:
        return ["NVTX range names: none"]
    lines = [f"NVTX range names ({info['nvtx_range_groups']} groups; top {len(info['nvtx_ranges'])} by count;"
             " '…' = PyTorch ', seq = N, op_id = M' suffixes collapsed: use match: prefix)"]
    for r in info["nvtx_ranges"]:
        name = NO_NAME if r["name_group"] is None else r["name_group"] + (" …" if r["has_suffix"] else "")
        dom = f" [domain {r['domain']}]" if r["domain"] else ""
        lines.append(f"  {r['ranges']:>7,} x  median {r['median_ns'] / 1e6:>10.3f} ms  "
                     f"{r['processes']} proc  {name}{dom}")
    return lines


def _discovery_text(d: dict[str, Any]) -> list[str]:
    if not d["regions"]:
        return ["NVTX regions by the GPU work they launch: none", f"  verdict: {d['message']}"]
    lines = [f"NVTX regions by the GPU work they launch (top {len(d['regions'])}; medians per occurrence: the range's "
             "duration, then the time sum / union / count of the kernels launched inside it, which may run on "
             "after it ends)"]
    lines.append(f"  {'step':<4} {'share':>6} {'occ/proc':>9} {'depth':>5} {'duration':>11} {'sum':>11} "
                 f"{'union':>11} {'kernels':>7} {'period CV':>9}  name")
    for r in d["regions"]:
        per = (str(r["occurrences_per_process_min"]) if r["occurrences_per_process_min"] == r["occurrences_per_process_max"]
               else f"{r['occurrences_per_process_min']}-{r['occurrences_per_process_max']}")
        cv = "—" if r["period_cv"] is None else f"{100 * r['period_cv']:.1f} %"
        name = r["name_group"] + (" …" if r["has_suffix"] else "") + (f" [domain {r['domain']}]" if r["domain"] else "")
        share = "—" if r["kernel_share"] is None else f"{100 * r['kernel_share']:.1f}%"
        lines.append(f"  {'yes' if r['step_like'] else '':<4} {share:>6} {per:>9} "
                     f"{r['min_depth']:>5} {_ms(r['median_ns'])} {_ms(r['median_kernel_sum_ns'])} "
                     f"{_ms(r['median_kernel_union_ns'])} {r['median_kernel_count']:>7} {cv:>9}  {name}")
    lines.append(f"  verdict: {d['message']}")
    if d["suffix_note"]:
        lines.append(f"  note: {d['suffix_note']}")
    return lines


def _ms(ns: int | None) -> str:
    return f"{'—':>11}" if ns is None else f"{ns / 1e6:>8.3f} ms"
