"""`mfu inspect`: what a trace holds and which analyses it supports, before writing a job.

Everything is counted in SQL (pipeline/trace/sql/inspect_*.sql); this module only
decides what the counts mean for the user: which tables are missing and what
that prevents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.trace import queries
from pipeline.errors import MfuError
from pipeline.hardware.catalog import load_catalog
from pipeline.hardware.detect import detect
from pipeline.trace.open import RAW_TABLES, open_trace


def inspect_trace(path: Path, ranges: int = 30) -> dict[str, Any]:
    trace = open_trace(path)
    try:
        queries.run(trace.con, "views")
        counts = queries.run(trace.con, "inspect_counts")[0]
        groups = queries.run(trace.con, "inspect_ranges", limit=ranges)
        total_groups = queries.run(trace.con, "inspect_range_groups")[0]["groups"]
        devices = queries.run(trace.con, "inspect_devices")
        processes = queries.run(trace.con, "inspect_processes")
        gpus = queries.run(trace.con, "gpu_rows") if trace.has("raw_gpu") else None
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
        "supports": _supports(trace.tables, counts),
        "notes": trace.notes,
    }


def _detection(gpus: list[dict] | None, used: list[int]) -> dict[str, Any]:
    try:
        found = detect(load_catalog(), gpus, used or None)
    except MfuError as exc:
        return {"entry": None, "reason": str(exc)}
    return {"entry": found.entry.key, "name": found.entry.display_name, "reason": found.reason,
            "warnings": list(found.warnings)}


def _supports(tables: dict[str, str], counts: dict[str, Any]) -> list[str]:
    """Plain-words consequences of what is present (SEMANTICS §2: a missing table means no such events)."""
    out = []
    if "raw_nvtx" not in tables or not counts["nvtx_ranges"]:
        out.append("no NVTX ranges: no region can be selected, so `mfu run` cannot measure a step here")
    if "raw_kernel" not in tables:
        out.append("no CUPTI_ACTIVITY_KIND_KERNEL table: no GPU kernels were captured")
    if "raw_runtime" not in tables and "raw_kernel" in tables:
        out.append("no CUPTI_ACTIVITY_KIND_RUNTIME table: kernel attribution falls back to the time window")
    if counts["kernels_without_process"]:
        out.append("kernels carry no globalPid: kernel attribution falls back to the time window")
    if "raw_gpu" not in tables:
        out.append("no TARGET_INFO_GPU table: the job must name hardware.gpu or hardware.peak_tflops")
    if not out:
        out.append("regions, process/thread/window attribution and GPU detection are all available")
    return out


def format_text(info: dict[str, Any]) -> str:
    t, c = info["trace"], info["counts"]
    lines = [f"trace            {t['path']}",
             f"Nsight Systems   {t['nsys_version'] or 'unknown (no export metadata)'}; "
             f"export schema {t['export_schema_version'] or 'unknown'}",
             f"events           {c['kernels']:,} kernels, {c['launches']:,} runtime calls, "
             f"{c['nvtx_ranges']:,} NVTX ranges"]
    lines += ["", "GPUs (TARGET_INFO_GPU)"]
    for g in info["gpus"] or []:
        bw = f"{g['memoryBandwidth'] / 1e9:,.0f} GB/s" if g["memoryBandwidth"] else "bandwidth ?"
        mem = f"{g['totalMemory'] / 2**30:.1f} GiB" if g["totalMemory"] else "memory ?"
        lines.append(f"  id {g['id']}: {g['name']} ({g['chipName'] or '?'}, {mem}, {bw}, {g['smCount'] or '?'} SMs)")
    if info["gpus"] is None:
        lines.append("  none in this export")
    det = info["gpu_detection"]
    lines.append(f"  catalog match: {det.get('entry') or 'none'} — {det['reason']}")
    lines += ["", "devices that ran kernels"]
    lines += [f"  device {d['device_id']}: {d['kernels']:,} kernels" for d in info["devices_used"]] or ["  none"]
    lines += ["", "processes"]
    lines += [f"  pid {p['pid']} {p['name'] or ''}: {p['kernels']:,} kernels, {p['ranges']:,} NVTX ranges"
              for p in info["processes"]] or ["  none"]
    lines += ["", f"NVTX range names ({info['nvtx_range_groups']} groups; top {len(info['nvtx_ranges'])} by count;"
              " '…' = PyTorch ', seq = N, op_id = M' suffixes collapsed: use match: prefix)"]
    for r in info["nvtx_ranges"]:
        name = r["name_group"] + (" …" if r["has_suffix"] else "")
        dom = f" [domain {r['domain']}]" if r["domain"] else ""
        lines.append(f"  {r['ranges']:>7,} x  median {r['median_ns'] / 1e6:>10.3f} ms  "
                     f"{r['processes']} proc  {name}{dom}")
    lines += ["", "what this trace supports"] + [f"  - {s}" for s in info["supports"]]
    lines += [f"  note: {n}" for n in info["notes"]]
    return "\n".join(lines)
