"""The SQL layer on the real shared exports, against a reference written here in plain Python.

The reference reads the file with the standard library's sqlite3 (read-only URI), numbers
ranges per process, joins each kernel to its launch within its process (deduplicated per
kernel row) and takes unions by sort-and-merge. It shares no code with pipeline/.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.trace import chain, queries
from pipeline.job.config import Region
from pipeline.errors import TraceError
from tests.measuring import measure
from pipeline.trace.open import open_trace
from tiers import sweep

ALL_TRACES = [
    "LeiWang1999__memfusion_artifact__report1.sqlite",
    "MohanadOdema__DLProf__nsys_profile.sqlite",
    "NVIDIA__Fuser__8fa9ec29_report1.sqlite",
    "NVIDIA__Fuser__a0498920_report1.sqlite",
    "StellaWava__benchmarking-n-profiling-__report1.sqlite",
    "YoonKyonghwan__EfficientCenterFormer__baseline.sqlite",
    "amir-ghz__DynamicViT__nsys_profile.sqlite",
    "bwyogatama__Mordred-Deprecated__03527a5d_report1.sqlite",
    "cestwc__balinski-and-gomory-cuda__report19.sqlite",
    "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite",
    "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
    "mamedov-artem-rafaelevich__parallel_course_2__report4.sqlite",
    "nsysai__h100_2gpu_1s.sqlite",
    "nsysai__healthy_1pct.sqlite",
    "nsysai__mfu_2gpu_before.sqlite",
    "nsysai__mock.sqlite",
]
RANGE_TYPES = (59, 60, 70, 71)
PROCESS = ~0xFFFFFF


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


# ---------------------------------------------------------------- reference implementation

@dataclass(frozen=True)
class Range:
    pid_key: int
    tid: int
    start: int
    end: int


@dataclass(frozen=True)
class Kernel:
    start: int
    end: int
    device: int
    corr: int | None
    pid_key: int | None


def union(intervals: list[tuple[int, int]]) -> int:
    total, cur = 0, None
    for s, e in sorted(intervals):
        if cur is None or s > cur[1]:
            total += cur[1] - cur[0] if cur else 0
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    return total + (cur[1] - cur[0] if cur else 0)


def outermost(ranges: list[Range]) -> list[Range]:
    """Drop ranges lying inside an earlier one of the list (sorted by start): nested same-name ranges."""
    out: list[Range] = []
    for r in ranges:
        if not any(o.start <= r.start and r.end <= o.end for o in out):
            out.append(r)
    return out


class Reference:
    """Everything read once from the file; queries answered in Python."""

    def __init__(self, path: Path):
        con = read_only(path)
        try:
            strings = dict(con.execute("SELECT id, value FROM StringIds"))
            nvtx = con.execute('SELECT start, "end", eventType, text, textId, globalTid, domainId '
                               "FROM NVTX_EVENTS").fetchall()
            runtime = con.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME")
            self.launches: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
            self.raw_launch_rows: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for start, tid, corr in runtime:
                self.launches[(tid & PROCESS, corr)].append((start, tid))
                self.raw_launch_rows[corr].append((start, tid))
            self.kernels = [Kernel(*r) for r in con.execute(
                'SELECT start, "end", deviceId, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL')]
        finally:
            con.close()
        domains = {(tid & PROCESS, dom): text if text is not None else strings.get(text_id)
                   for _, _, etype, text, text_id, tid, dom in nvtx if etype == 75}
        self.named: list[tuple[str, str | None, Range]] = [
            (text if text is not None else strings.get(text_id), domains.get((tid & PROCESS, dom)),
             Range(tid & PROCESS, tid, start, end))
            for start, end, etype, text, text_id, tid, dom in nvtx if etype in RANGE_TYPES and end is not None]

    def occurrences(self, name: str, match: str = "exact", domain: str | None = None) -> list[dict[int, Range]]:
        """Occurrence k (0-based here) -> {process key: its k-th matching range}."""
        test = {"exact": lambda n: n == name, "prefix": lambda n: n.startswith(name),
                "contains": lambda n: name in n, "regex": lambda n: re.search(name, n) is not None}[match]
        per_process: dict[int, list[Range]] = defaultdict(list)
        for n, d, r in self.named:
            if n is not None and test(n) and (domain is None or d == domain):
                per_process[r.pid_key].append(r)
        occ: list[dict[int, Range]] = []
        for key, rs in per_process.items():
            for k, r in enumerate(outermost(sorted(rs, key=lambda r: (r.start, -r.end, r.tid)))):
                if k == len(occ):
                    occ.append({})
                occ[k][key] = r
        return occ

    def attributed(self, r: Range, *, process_key: bool = True) -> list[Kernel]:
        """Kernels whose launch started in r; with process_key=False, the naive correlationId-only join."""
        if process_key:
            return [k for k in self.kernels if k.pid_key == r.pid_key and any(
                r.start <= s <= r.end for s, _ in self.launches.get((k.pid_key, k.corr), []))]
        corrs = {c for (key, c), rows in self.launches.items()
                 if key == r.pid_key and any(r.start <= s <= r.end for s, _ in rows)}
        return [k for k in self.kernels if k.corr in corrs]

    def unattributed(self, r: Range) -> int:
        return sum(1 for k in self.kernels if k.pid_key == r.pid_key and (k.pid_key, k.corr) not in self.launches
                   and k.start < r.end and k.end > r.start)

    def times(self, occ: dict[int, Range]) -> dict:
        ks = [k for r in occ.values() for k in self.attributed(r)]
        start = min(r.start for r in occ.values())
        devices: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for k in ks:
            devices[str(k.device)].append((k.start, k.end))
        return {
            "cpu_range_ns": max(r.end - r.start for r in occ.values()),
            "wall_ns": max([r.end for r in occ.values()] + [k.end for k in ks]) - start,
            "kernel_sum_ns": sum(k.end - k.start for k in ks),
            "kernel_union_ns": union([(k.start, k.end) for k in ks]),
            "kernel_count": len(ks),
            "device_union_ns": {d: union(v) for d, v in devices.items()},
            "unattributed_kernel_count": sum(self.unattributed(r) for r in occ.values()),
        }


# ---------------------------------------------------------------- every shared trace opens

def raw_counts(path: Path) -> dict[str, int]:
    con = read_only(path)
    try:
        have = tables(con)
        count = (lambda table, where="": con.execute(f"SELECT count(*) FROM {table} {where}").fetchone()[0]
                 if table in have else 0)
        return {"kernels": count("CUPTI_ACTIVITY_KIND_KERNEL"), "launches": count("CUPTI_ACTIVITY_KIND_RUNTIME"),
                "nvtx_ranges": count("NVTX_EVENTS", f'WHERE eventType IN {RANGE_TYPES} AND "end" IS NOT NULL')}
    finally:
        con.close()


# Shared traces the tool must refuse, with what the refusal says: none today. Any other refusal fails.
REFUSED: dict[str, str] = {}


@pytest.mark.parametrize("name", sweep(ALL_TRACES))
def test_open_views_and_counts(real_trace, name: str) -> None:
    """Opens with the views and counts what the file holds; only the traces listed in REFUSED are refused,
    with a TraceError that names the file and says why."""
    path = real_trace(name)
    before = sha256(path)
    try:
        trace = open_trace(path)
    except TraceError as exc:
        assert name in REFUSED, f"a valid trace was refused: {exc}"
        assert str(exc).startswith(f"{path}: ") and REFUSED[name] in str(exc)
        return
    assert name not in REFUSED
    try:
        assert trace.sha256 == before
        (row,) = chain.run(trace.con, {"views", "inspect_read", "inspect_counts"})["inspect_counts"]
        assert {k: row[k] for k in ("kernels", "launches", "nvtx_ranges")} == raw_counts(path)
    finally:
        trace.con.close()
    assert sha256(path) == before


# ---------------------------------------------------------------- measure against the reference

CASES = [   # file, region name, match, domain, whether the region launches kernels
    ("nsysai__mfu_2gpu_before.sqlite", "aten::layer_norm", "prefix", None, True),
    ("nsysai__mfu_2gpu_before.sqlite", "ncclGroupEnd", "exact", None, True),
    ("nsysai__h100_2gpu_1s.sqlite", "aten::mm", "prefix", None, True),
    ("nsysai__h100_2gpu_1s.sqlite", "aten::item", "prefix", None, False),   # GPU work without launch rows
    ("MohanadOdema__DLProf__nsys_profile.sqlite", "aten::conv2d", "prefix", None, True),
    ("hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "saxpy", "exact", None, True),
    ("hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "MPI_Send", "exact", "MPI", False),
    ("LeiWang1999__memfusion_artifact__report1.sqlite", "ExecutionContext::execute", "exact", None, True),
    ("LeiWang1999__memfusion_artifact__report1.sqlite", "Conv", "contains", "TensorRT", True),
    ("NVIDIA__Fuser__8fa9ec29_report1.sqlite", "KernelExecutor::runFusion", "exact", None, True),
    ("NVIDIA__Fuser__a0498920_report1.sqlite", "FusionKernelRuntime::runKernelWithInput", "exact", None, True),
]


def region(name: str, match: str, domain: str | None) -> Region:
    return Region(name=name, match=match, domain=domain, first=1, last=None, attribution="process", covers=1)


@pytest.mark.parametrize(("file", "name", "match", "domain", "launches"), CASES)
def test_measure_matches_reference(real_trace, file: str, name: str, match: str, domain: str | None,
                                   launches: bool) -> None:
    """Per occurrence: cpu range, wall, kernel sum, union, count, per-device union, unattributed count."""
    path = real_trace(file)
    before = sha256(path)
    ref = Reference(path)
    expected = [ref.times(occ) for occ in ref.occurrences(name, match, domain)]
    assert expected, "the region must exist in the file"
    assert any(e["kernel_count"] for e in expected) == launches
    trace = open_trace(path)
    try:
        queries.run(trace.con, "views")
        m = measure(trace, region(name, match, domain))
    finally:
        trace.con.close()
    got = [{k: o[k] for k in expected[0]} for o in m.occurrences]
    assert got == expected
    assert sha256(path) == before


def _measured(path: Path, name: str, match: str):
    trace = open_trace(path)
    try:
        queries.run(trace.con, "views")
        return measure(trace, region(name, match, None))
    finally:
        trace.con.close()


def test_two_ranks_pair_by_occurrence_and_keep_their_kernels(real_trace) -> None:
    path = real_trace("nsysai__mfu_2gpu_before.sqlite")
    ref = Reference(path)
    occs = ref.occurrences("aten::layer_norm", "prefix")
    assert all(len(o) == 2 for o in occs), "every occurrence has both ranks in this file"
    m = _measured(path, "aten::layer_norm", "prefix")
    for k, occ in enumerate(occs, start=1):
        ranks = {r["global_pid"]: r for r in m.ranks if r["occurrence"] == k}
        assert {key: (r["start_ns"], r["cpu_range_ns"]) for key, r in ranks.items()} == {
            key: (r.start, r.end - r.start) for key, r in occ.items()}
        assert {key: r["kernel_count"] for key, r in ranks.items()} == {
            key: len(ref.attributed(r)) for key, r in occ.items()}
    # the naive join (no process key) attaches the other rank's kernels: the check above has teeth
    naive = sum(len(ref.attributed(r, process_key=False)) for o in occs for r in o.values())
    assert naive != sum(o["kernel_count"] for o in m.occurrences)


def test_duplicate_launch_rows_do_not_double(real_trace) -> None:
    """saxpy: every launch is recorded twice in RUNTIME under one correlationId."""
    path = real_trace("hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite")
    ref = Reference(path)
    assert all(len(ref.raw_launch_rows[k.corr]) == 2 for k in ref.kernels)
    m = _measured(path, "saxpy", "exact")
    assert sum(o["kernel_count"] for o in m.occurrences) == len(ref.kernels) == 5
    assert sum(o["kernel_sum_ns"] for o in m.occurrences) == sum(k.end - k.start for k in ref.kernels)


def test_kernels_without_launch_rows_are_counted_apart(real_trace) -> None:
    path = real_trace("nsysai__h100_2gpu_1s.sqlite")
    ref = Reference(path)
    occs = ref.occurrences("aten::item", "prefix")
    expected = [sum(ref.unattributed(r) for r in o.values()) for o in occs]
    assert sum(expected) > 0, "the region must overlap kernels that have no launch row"
    m = _measured(path, "aten::item", "prefix")
    assert [o["unattributed_kernel_count"] for o in m.occurrences] == expected


def test_overlapping_occurrences_count_once(real_trace) -> None:
    """h100, aten::linear (prefix), occurrences 5-24 on 2 GPUs: the CPU runs far ahead of the GPU,
    so the envelopes overlap; the totals are unions over all of them (docs/figures.md §6)."""
    path = real_trace("nsysai__h100_2gpu_1s.sqlite")
    ref = Reference(path)
    occs = ref.occurrences("aten::linear", "prefix")[4:24]
    per = [ref.times(o) for o in occs]
    starts = [min(r.start for r in o.values()) for o in occs]
    envelopes = [(s, s + t["wall_ns"]) for s, t in zip(starts, per)]
    kernels = [k for o in occs for r in o.values() for k in ref.attributed(r)]
    longest = [max(o.values(), key=lambda r: (r.end - r.start, -r.start)) for o in occs]
    devices: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for k in kernels:
        devices[k.device].append((k.start, k.end))
    expected = {"wall_ns": union(envelopes), "wall_sum_ns": sum(t["wall_ns"] for t in per),
                "cpu_range_ns": union([(r.start, r.end) for r in longest]),
                "kernel_union_ns": union([(k.start, k.end) for k in kernels]),
                "kernel_sum_ns": sum(k.end - k.start for k in kernels), "kernel_count": len(kernels)}
    assert expected["wall_sum_ns"] > 10 * expected["wall_ns"]          # 8.59 s of envelopes span 0.546 s
    trace = open_trace(path)
    try:
        queries.run(trace.con, "views")
        m = measure(trace, Region(name="aten::linear", match="prefix", domain=None, first=5, last=24,
                                  attribution="process", covers=1))
    finally:
        trace.con.close()
    assert {k: m.totals[k] for k in expected} == expected
    assert {d["device_id"]: d["union_ns"] for d in m.totals["devices"]} == {d: union(v) for d, v in devices.items()}
    steps = [nxt - s if nxt < e else e - s for (s, e), nxt in zip(envelopes, starts[1:])] + [per[-1]["wall_ns"]]
    assert [o["step_ns"] for o in m.occurrences] == steps
    assert [w["code"] for w in m.warnings].count("occurrences_overlap") == 1
