"""Several trace files as one job: one file per rank (or node), measured in turn, combined in SQL.

Multi-node jobs write one export per rank. Each file is attached on one DuckDB
connection in turn, measured exactly as a single file is (measure.py), and its
matched ranges and attributed kernels are kept (rank_collect.sql), and its kernels are
classified against its own string table and kept too (classify_collect.sql). The combined
tables key ranks by (file, process) and devices by (file, device), because pids
and device ids repeat across hosts (rank_combine.sql); the ordinary queries then
run on the combination (class, overlap and pattern times included), so every figure means
what it means for one file.

A TraceSet can also be shared by several jobs of a batch: its files are then
copied into DuckDB once (`materialize`), so each file is read once, not per job.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.analysis import classes
from pipeline.trace import cache
from pipeline.trace import chain, queries
from pipeline.job.config import Job
from pipeline.analysis.measure import Measurement, assemble_occurrences, measure, prepare
from pipeline.trace.open import RAW_TABLES, Trace, attach, connect

# Warnings measure.py derives per occurrence; for several files they are derived again on the combination.
_COMBINED_CODES = {"occurrence_missing_ranks", "gpu_outlasts_range", "no_kernels", "unattributed_kernels",
                   "occurrences_overlap"}


@dataclass
class TraceSet:
    """Trace files on one connection; `traces[i].con` is that connection for every file."""

    con: Any
    paths: list[Path]
    traces: list[Trace] = field(default_factory=list)
    materialized: bool = False

    def use(self, i: int) -> Trace:
        """Point the raw_* views at file i (a no-op for a single, unmaterialized file)."""
        if self.materialized:
            for raw in RAW_TABLES:
                self.con.execute(f"CREATE OR REPLACE TEMP VIEW {raw} AS SELECT * FROM {raw}__f{i}")
        return self.traces[i]

    def close(self) -> None:
        self.con.close()

    def sha256(self) -> str:
        """One file: its SHA-256. Several: SHA-256 of their hashes in order (the set's identity)."""
        if len(self.traces) == 1:
            return self.traces[0].sha256
        return hashlib.sha256("\n".join(t.sha256 for t in self.traces).encode()).hexdigest()


def open_set(paths: list[Path], materialize: bool = False, cache_dir: Path | None = None) -> TraceSet:
    """Attach every file; with several files (or when shared), copy each into DuckDB once.

    With a cache, each file's tables are Parquet files of the cache (built on first use), and
    per-file views over them replace the in-memory copies: nothing is read twice, nothing copied.
    """
    ts = TraceSet(con=connect(), paths=list(paths),
                  materialized=materialize or len(paths) > 1 or cache_dir is not None)
    try:
        for i, path in enumerate(ts.paths):
            if cache_dir is not None:
                ts.traces.append(cache.attach_cached(ts.con, path, cache_dir, suffix=f"__f{i}"))
                continue
            trace = attach(ts.con, path)
            if ts.materialized:
                for raw in RAW_TABLES:
                    ts.con.execute(f"CREATE OR REPLACE TEMP TABLE {raw}__f{i} AS SELECT * FROM {raw}")
                ts.con.execute("DETACH nsys")
            ts.traces.append(trace)
    except BaseException:
        ts.close()
        raise
    return ts


@dataclass
class SetMeasurement:
    """The combined measurement plus what only several files have: per-file GPUs and labels."""

    measurement: Measurement
    files: list[dict[str, Any]]                 # per file: label, sha256, versions, gpu rows, devices
    device_labels: dict[int, str]               # device id in the measurement -> what the user knows it as


def measure_set(ts: TraceSet, job: Job, rules: list[classes.Rule]) -> SetMeasurement:
    """Measure the job's region in every file and classify its kernels; combine when there are several.

    Classifying here, while each file is in use, resolves kernel names against that file's own
    string table: ids differ per file, so the combined kernels cannot be named afterwards.
    """
    labels = [job.file_label(p) for p in ts.paths]
    files, per = [], []
    for i, trace in enumerate(ts.traces):
        ts.use(i)
        prepare(trace)
        m = measure(trace, job.region)
        classes.classify(trace, m, rules)
        files.append({"label": labels[i], "sha256": trace.sha256, "nsys_version": trace.nsys_version,
                      "export_schema_version": trace.export_schema_version, "devices": m.devices_used,
                      "gpu_rows": queries.run(ts.con, "gpu_rows") if trace.has("raw_gpu") else None})
        if len(ts.traces) == 1:
            own = {r["global_pid"]: (0, r["global_pid"]) for r in m.ranks}
            _label_ranks(m.ranks, queries.run(ts.con, "rank_union"), own, labels)
            return SetMeasurement(m, files, {d: str(d) for d in m.devices_used})
        queries.run(ts.con, "rank_collect", file=i)
        queries.run(ts.con, "classify_collect", file=i)
        per.append(m)
    return _combine(ts, per, files, labels)


def _combine(ts: TraceSet, per: list[Measurement], files: list[dict], labels: list[str]) -> SetMeasurement:
    """Rerun the per-occurrence queries on the combined ranges and kernels of every file.

    The combined `classified` table is built here too, on the same rank and device keys.
    """
    first, last = min(m.first for m in per), max(m.last for m in per)
    rows = chain.run(ts.con, {"rank_combine", "classify_combine", "classified_unions", "attributed_unions",
                              "kernel_union", "select_occurrences", "occurrence_times", "occurrence_spans",
                              "occurrence_totals", "device_times", "rank_times", "rank_union"},
                     first=first, last=last, comm_class=classes.COMM_CLASS)
    keys = rows["rank_combine"]
    rank_of = {k["key"]: (k["file"], k["original"]) for k in keys if k["kind"] == "rank"}
    device_labels = {k["key"]: f"{labels[k['file']]}:{k['original']}" for k in keys if k["kind"] == "device"}
    occurrences, devices, ranks = rows["occurrence_times"], rows["device_times"], rows["rank_times"]
    _label_ranks(ranks, rows["rank_union"], rank_of, labels)
    unattributed: dict[int, dict[str, int]] = {}
    for m in per:
        for o in m.occurrences:
            u = unattributed.setdefault(o["occurrence"], {"kernel_count": 0, "kernel_sum_ns": 0})
            u["kernel_count"] += o["unattributed_kernel_count"]
            u["kernel_sum_ns"] += o["unattributed_kernel_sum_ns"]
    counts = {f"{labels[i]}:{pid}": n for i, m in enumerate(per) for pid, n in m.counts_per_process.items()}
    warnings = [{**w, "message": f"{labels[i]}: {w['message']}"}
                for i, m in enumerate(per) for w in m.warnings if w["code"] not in _COMBINED_CODES]
    totals = rows["occurrence_totals"][0]
    assemble_occurrences(occurrences, devices, unattributed, counts, warnings, totals)
    used = sorted({d["device_id"] for d in devices})
    attribution = ", ".join(sorted({m.attribution for m in per}))
    return SetMeasurement(Measurement(attribution, first, last, occurrences, ranks, used, counts, warnings, totals),
                          files, device_labels)


def _label_ranks(ranks: list[dict], unions: list[dict], rank_of: dict[int, tuple[int, int]],
                 labels: list[str]) -> None:
    """Give each rank row its file, a printable rank name and its own kernel union."""
    union = {(u["occurrence"], u["global_pid"]): u["union_ns"] for u in unions}
    several = len(labels) > 1
    for r in ranks:
        file, _ = rank_of[r["global_pid"]]
        r["file"] = labels[file]
        r["rank"] = f"{labels[file]}:{r['pid']}" if several else str(r["pid"])
        r["union_ns"] = union.get((r["occurrence"], r["global_pid"]), 0)
