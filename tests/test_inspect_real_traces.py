"""`mfu inspect` on every shared trace, against a reference written here from the export schema and docs/figures.md.

The reference reads the file with sqlite3 (read-only) and shares no code with pipeline/: event counts,
GPU rows, devices and processes that ran kernels, NVTX range-name groups, and region discovery's
figures per name group (occurrences per process as islands of overlapping ranges, nesting depth in
the thread, kernels attributed by the time of their launch row in the same process, medians, share
of the trace's kernel time, start-to-start period after the warm-up). Then the text a user reads:
which device a kernel ran on in CUDA's numbering, and what to do when a trace cannot give an MFU.
"""

from __future__ import annotations

import heapq
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.trace.inspect import inspect_trace

from test_real_traces import ALL_TRACES, PROCESS, RANGE_TYPES, read_only, sha256, tables, union
from tiers import sweep

SUFFIX = re.compile(r", (seq|op_id) = [0-9]+.*$", re.S)      # PyTorch's per-call suffixes (docs/figures.md §3)
NUMBER = re.compile(r"[0-9]+([^0-9A-Za-z]*)\Z")             # a name's number: its last digits, then punctuation only
GPU_COLUMNS = ("id", "name", "chipName", "totalMemory", "memoryBandwidth", "smCount", "clockRate", "cuDevice")
# Step-like: top-level, not named warm-up, >= 2 occurrences in every process after its named warm-up, >= 50 % of
# the kernel time, period CV <= 20 %;
# leading occurrences over 1.2x the median wall are warm-up, as are those ending by a named warm-up's end; one
# holding over a tenth of its kernel time inside the named warm-up is no step (pipeline/trace/discovery.py).
MIN_REPEATS, MIN_SHARE, MAX_CV, WARMUP, WARMUP_HELD = 2, 0.5, 0.2, 1.2, 0.1


def _select(con, table: str, wanted: tuple[str, ...], have: set[str]) -> list[dict]:
    if table not in have:
        return []
    present = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
    cols = ", ".join(f'"{c}"' if c in present else f"NULL AS {c}" for c in wanted)
    return [dict(zip(wanted, r)) for r in con.execute(f"SELECT {cols} FROM {table}")]


class Reference:
    def __init__(self, path: Path):
        con = read_only(path)
        try:
            have = tables(con)
            strings = dict(con.execute("SELECT id, value FROM StringIds")) if "StringIds" in have else {}
            self.kernels = _select(con, "CUPTI_ACTIVITY_KIND_KERNEL",
                                   ("start", "end", "deviceId", "correlationId", "globalPid"), have)
            self.runtime = _select(con, "CUPTI_ACTIVITY_KIND_RUNTIME", ("start", "globalTid", "correlationId"), have)
            nvtx = _select(con, "NVTX_EVENTS", ("start", "end", "eventType", "text", "textId", "globalTid",
                                                "domainId"), have)
            self.gpus = (sorted(_select(con, "TARGET_INFO_GPU", GPU_COLUMNS, have), key=lambda g: g["id"])
                         if "TARGET_INFO_GPU" in have else None)
            self.names = {r["globalPid"]: r["name"] for r in _select(con, "PROCESSES", ("globalPid", "name"), have)}
        finally:
            con.close()
        text = lambda e: e["text"] if e["text"] is not None else strings.get(e["textId"])
        domains = {(e["globalTid"] & PROCESS, e["domainId"]): text(e) for e in nvtx if e["eventType"] == 75}
        self.ranges = [(text(e), domains.get((e["globalTid"] & PROCESS, e["domainId"])), e["globalTid"],
                        e["start"], e["end"]) for e in nvtx if e["eventType"] in RANGE_TYPES and e["end"] is not None]

    def counts(self) -> dict:
        launched = {(r["globalTid"] & PROCESS, r["correlationId"]) for r in self.runtime}
        return {"kernels": len(self.kernels), "launches": len(self.runtime), "nvtx_ranges": len(self.ranges),
                "kernels_without_process": sum(k["globalPid"] is None for k in self.kernels),
                "kernels_without_launch": sum((k["globalPid"], k["correlationId"]) not in launched
                                              for k in self.kernels)}

    def processes(self) -> dict[int, dict]:
        per: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        for k in self.kernels:
            if k["globalPid"] is not None:
                per[k["globalPid"]][0] += 1
        for _, _, tid, _, _ in self.ranges:
            per[tid & PROCESS][1] += 1
        return {key: {"pid": (key >> 24) & 0xFFFFFF, "name": self.names.get(key), "kernels": k, "ranges": r}
                for key, (k, r) in per.items()}

    def groups(self) -> dict[tuple[str, str | None], list[tuple]]:
        """Names without PyTorch's suffix that differ only in their number are one group, labelled 'step <n>'."""
        keyed: dict[tuple[str, str | None], list[tuple]] = defaultdict(list)
        for name, domain, tid, start, end in self.ranges:
            plain = SUFFIX.sub("", name)
            keyed[(NUMBER.sub(r"0\1", plain), domain)].append((name, plain, tid, start, end))
        out = {}
        for (_, domain), rows in keyed.items():
            plains = {plain for _, plain, *_ in rows}
            label = NUMBER.sub(r"<n>\1", min(plains)) if len(plains) > 1 else min(plains)
            out[(label, domain)] = [(name, tid, start, end) for name, _, tid, start, end in rows]
        return out

    def depths(self) -> dict[tuple[int, int, int], int]:
        """(thread, start, end) -> ranges of that thread still open at its start (a range ending at it is closed)."""
        per_thread: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for _, _, tid, start, end in self.ranges:
            per_thread[tid].append((start, end))
        depth: dict[tuple[int, int, int], int] = {}
        for tid, spans in per_thread.items():
            open_ends: list[int] = []
            for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
                while open_ends and open_ends[0] <= start:
                    heapq.heappop(open_ends)
                depth.setdefault((tid, start, end), len(open_ends))
                heapq.heappush(open_ends, end)
        return depth

    def occurrences(self, spans: list[tuple[int, int]], launched: list[tuple[int, int, int]]) -> list[dict]:
        """One process's ranges of a group: overlapping ones are one occurrence; a kernel belongs to the one its
        launch starts in (a launch exactly where one ends and the next starts goes to the next)."""
        islands: list[list[int]] = []
        for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
            if islands and start < islands[-1][1]:
                islands[-1][1] = max(islands[-1][1], end)
            else:
                islands.append([start, end])
        out = []
        for i, (start, end) in enumerate(islands):
            nxt = islands[i + 1][0] if i + 1 < len(islands) else None
            ks = [(s, e) for t, s, e in launched if start <= t <= end and (t < end or nxt != end)]
            out.append({"start": start, "end": end, "duration": end - start, "sum": sum(e - s for s, e in ks), "union": union(ks),
                        "count": len(ks), "wall": max([end] + [e for _, e in ks]) - start,
                        "period": None if nxt is None else nxt - start})
        return out

    def discovery(self) -> dict[tuple[str, str | None], dict]:
        first_launch: dict[tuple[int, int], int] = {}
        for r in self.runtime:
            key = (r["globalTid"] & PROCESS, r["correlationId"])
            first_launch[key] = min(first_launch.get(key, r["start"]), r["start"])
        launched: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        for k in self.kernels:
            if (k["globalPid"], k["correlationId"]) in first_launch:
                launched[k["globalPid"]].append((first_launch[(k["globalPid"], k["correlationId"])], k["start"], k["end"]))
        total = sum(k["end"] - k["start"] for k in self.kernels)
        depth = self.depths()
        groups = self.groups()
        warm_end: dict[int, int] = {}            # per process: the end of its last range named warm-up
        for (label, _), rows in groups.items():
            if "warm" in label.lower():
                for _, tid, _, end in rows:
                    warm_end[tid & PROCESS] = max(warm_end.get(tid & PROCESS, end), end)
        occs = {}
        for key, rows in groups.items():
            per_process: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for _, tid, start, end in rows:
                per_process[tid & PROCESS].append((start, end))
            occs[key] = {p: self.occurrences(spans, launched[p]) for p, spans in per_process.items()}
        warm_ns: dict[int, int] = defaultdict(int)   # per process: the kernel time of the warm-up group holding most
        for key, occ in occs.items():
            for p, os in occ.items():
                if "warm" in key[0].lower():
                    warm_ns[p] = max(warm_ns[p], sum(o["sum"] for o in os))
        out = {}
        for key, occ in occs.items():
            # occurrences ending by the named warm-up's end are warm-up; one open then holds the warm-up's work
            inside = {p: sum(o["end"] <= warm_end.get(p, o["end"] - 1) for o in os) for p, os in occ.items()}
            held = sum(warm_ns[p] for p, os in occ.items() for o in os
                       if p in warm_end and o["start"] < warm_end[p] < o["end"])
            out[key] = self._figures(occ, total, min(depth[(tid, s, e)] for _, tid, s, e in groups[key]), inside,
                                     "warm" in key[0].lower(), held)
        return out

    @staticmethod
    def _figures(occ: dict[int, list[dict]], total: int, min_depth: int, inside: dict[int, int],
                 warm_named: bool, held: int) -> dict:
        every = [o for os in occ.values() for o in os]
        slowest = [max(os[k]["wall"] for os in occ.values() if len(os) > k) for k in range(max(map(len, occ.values())))]
        warmup = 0
        while warmup < len(slowest) and slowest[warmup] > WARMUP * statistics.median(slowest):
            warmup += 1
        warmup = max(warmup, max(inside.values()))
        after = min(len(os) - inside[p] for p, os in occ.items())
        skip = {p: max(1, warmup) if len(os) >= max(1, warmup) + 3 else 0 for p, os in occ.items()}
        periods = [o["period"] for p, os in occ.items() for k, o in enumerate(os, 1)
                   if k > skip[p] and o["period"] is not None]
        cv = statistics.pstdev(periods) / statistics.mean(periods) if len(periods) >= 2 else None  # one: no spread
        kernel_sum = sum(o["sum"] for o in every)
        share = kernel_sum / total if total else None
        least = min(map(len, occ.values()))
        return {"occurrences": len(every), "processes": len(occ), "occurrences_per_process_min": least,
                "occurrences_per_process_max": max(map(len, occ.values())), "min_depth": min_depth,
                "median_ns": statistics.median(o["duration"] for o in every),
                "median_wall_ns": statistics.median(o["wall"] for o in every),
                "median_kernel_sum_ns": statistics.median(o["sum"] for o in every),
                "median_kernel_union_ns": statistics.median(o["union"] for o in every),
                "median_kernel_count": statistics.median(o["count"] for o in every),
                "kernel_sum_ns": kernel_sum, "kernel_share": share, "warmup_occurrences": warmup,
                "period_skip": max(skip.values()), "period_cv": cv,
                "period_ns": statistics.median(periods) if periods else None, "periods": len(periods),
                "named_warmup_occurrences": max(inside.values()), "after_warmup": after, "warmup_held_ns": held,
                "step_like": bool(min_depth == 0 and after >= MIN_REPEATS and not warm_named and share is not None
                                  and held <= WARMUP_HELD * kernel_sum
                                  and share >= MIN_SHARE and (cv is None or cv <= MAX_CV))}


def _close(got, want) -> bool:
    """Medians are cast to integers (a x.5 median rounds); shares, CVs and periods' spread are floats."""
    if isinstance(got, int) and isinstance(want, float):
        return abs(got - want) <= 0.5
    if isinstance(got, float) and isinstance(want, float):
        return abs(got - want) <= 1e-9 * abs(want)
    return got == want


@pytest.fixture(scope="module")
def inspected(real_trace):
    seen: dict[str, tuple[dict, Reference]] = {}

    def get(name: str) -> tuple[dict, Reference]:
        if name not in seen:
            path = real_trace(name)
            before = sha256(path)
            seen[name] = (inspect_trace(path), Reference(path))
            assert sha256(path) == before
        return seen[name]
    return get


@pytest.mark.parametrize("name", sweep(ALL_TRACES))
def test_counts_gpus_devices_processes_and_names(inspected, name):
    info, ref = inspected(name)
    assert {k: info["counts"][k] for k in ref.counts()} == ref.counts()
    assert info["gpus"] == (None if ref.gpus is None else ref.gpus)
    used = defaultdict(int)
    for k in ref.kernels:
        used[k["deviceId"]] += 1
    assert {d["device_id"]: d["kernels"] for d in info["devices_used"]} == used
    assert {p["global_pid"]: {k: p[k] for k in ("pid", "name", "kernels", "ranges")}
            for p in info["processes"]} == ref.processes()
    groups = ref.groups()
    assert info["nvtx_range_groups"] == len(groups)
    listed = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0], kv[0][1] is not None, kv[0][1] or ""))[:30]
    assert [(r["name_group"], r["domain"], r["ranges"], r["processes"], r["has_suffix"]) for r in info["nvtx_ranges"]] \
        == [(g, d, len(rows), len({tid & PROCESS for _, tid, _, _ in rows}), any(SUFFIX.search(n) for n, *_ in rows))
            for (g, d), rows in listed]
    medians = [statistics.median(e - s for *_, s, e in rows) for _, rows in listed]
    assert all(_close(r["median_ns"], m) for r, m in zip(info["nvtx_ranges"], medians))


@pytest.mark.parametrize("name", sweep(ALL_TRACES))
def test_region_discovery_figures(inspected, name):
    info, ref = inspected(name)
    want = ref.discovery()
    found = info["region_discovery"]
    for row in found["regions"]:
        expected = want[(row["name_group"], row["domain"])]
        wrong = {k: (row[k], v) for k, v in expected.items() if not _close(row[k], v)}
        assert wrong == {}, f"{row['name_group']}: (inspect, reference) {wrong}"
    ranked = sorted(want.items(), key=lambda kv: (not kv[1]["step_like"], -(kv[1]["kernel_share"] or -1),
                                                  -kv[1]["median_kernel_union_ns"], -kv[1]["occurrences"],
                                                  kv[0][0], kv[0][1] is not None, kv[0][1] or ""))
    assert [(r["name_group"], r["domain"]) for r in found["regions"]] == [key for key, _ in ranked[:10]]
    assert found["step_like"] == [key[0] for key, f in ranked[:10] if f["step_like"]]



@pytest.mark.parametrize("name", sweep(["nsysai__h100_2gpu_1s.sqlite", "nsysai__mfu_2gpu_before.sqlite",
                                        "NVIDIA__Fuser__a0498920_report1.sqlite"], quick=["nsysai__h100_2gpu_1s.sqlite"]))
def test_region_discovery_is_the_same_every_run(inspected, real_trace, name, every_core):
    """period_cv came from stddev_pop, whose floating-point partial sums meet in the order the threads finish:
    on these three traces its last digits changed from run to run, so `inspect --format json` was not
    reproducible (five runs, five outputs: every run differed, so two beside the first show it)."""
    first, _ = inspected(name)
    again = [inspect_trace(real_trace(name))["region_discovery"] for _ in range(2)]
    assert all(a == first["region_discovery"] for a in again)

def _text(capsys, path: Path) -> str:
    assert main(["inspect", str(path)]) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def inspect_text(real_trace):
    """`mfu inspect`'s text for each trace, run once per module: several tests read it, and the shared traces do
    not change (issue #35)."""
    seen: dict[str, str] = {}

    def get(name: str, capsys) -> str:
        if name not in seen:
            seen[name] = _text(capsys, real_trace(name))
        return seen[name]
    return get


@pytest.mark.parametrize("name", sweep(ALL_TRACES))
def test_devices_are_shown_with_their_cuda_number(inspected, inspect_text, capsys, name):
    """Kernels name their device by TARGET_INFO_GPU id; the program knew it as CUDA device cuDevice (cloverleaf:
    id 0 is CUDA device 3; balinski: id 0 is CUDA device 1). Each line says both, and a note says they differ."""
    _, ref = inspected(name)
    cuda = {g["id"]: g["cuDevice"] for g in ref.gpus or []}
    used = defaultdict(int)
    for k in ref.kernels:
        used[k["deviceId"]] += 1
    lines = inspect_text(name, capsys).splitlines()
    block = lines[lines.index("devices that ran kernels") + 1:lines.index("processes") - 1]
    assert block[:len(used) or 1] == [
        f"  device {d}{'' if cuda.get(d) is None else f' (CUDA device {cuda[d]})'}: {n:,} kernels"
        for d, n in sorted(used.items())] or ["  none"]
    differ = any(cuda.get(d) not in (None, d) for d in used)
    assert any("not by the CUDA device number" in line for line in block) == differ
    assert differ == (name in ("hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite",
                               "cestwc__balinski-and-gomory-cuda__report19.sqlite"))


@pytest.mark.parametrize("name", sweep(ALL_TRACES))
def test_a_trace_without_ranges_or_kernels_says_what_to_capture(inspected, inspect_text, capsys, name):
    """No NVTX range and no kernel: nothing is being guessed, the user must mark the step and capture NVTX and
    CUDA. No range but kernels: the GPU-active window is what can be measured, not a guess. No kernel: the share of
    a kernel time that does not exist is '—', not 0.0 %, and the user must capture CUDA."""
    info, ref = inspected(name)
    found, text = info["region_discovery"], inspect_text(name, capsys)
    if not ref.ranges:
        assert "guessing" not in found["message"] and not found["guessing"]
        assert "NVTX range names: none" in text and "NVTX regions by the GPU work they launch: none" in text
    if not ref.ranges and not ref.kernels:
        assert found["message"].startswith("this trace has no NVTX ranges") and found["proposal"] is None
        assert "range_push('train_step')" in found["message"] and "--trace=cuda,nvtx" in found["message"]
    elif not ref.ranges:
        assert found["message"].startswith("no NVTX range: the GPU-active window of each process (")
        assert found["proposal"]["kind"] == "gpu_active"
    elif not ref.kernels:
        assert found["message"].startswith("this trace holds no GPU kernels") and "--trace=cuda" in found["message"]
        assert all(r["kernel_share"] is None and "no GPU kernels in the trace" in r["reasons"]
                   for r in found["regions"])
        rows = text[text.index("  step  share"):text.index("  verdict:")].splitlines()[1:]
        assert len(rows) == len(found["regions"]) > 0 and all(row.split()[0] == "—" for row in rows)
    else:
        assert not found["message"].startswith("this trace"), found["message"]


def test_kernels_without_a_process_are_not_called_no_process(inspected, inspect_text, capsys):
    """healthy_1pct: 400 kernels, no globalPid column: the processes section must not say plainly 'none'."""
    _, ref = inspected("nsysai__healthy_1pct.sqlite")
    assert ref.kernels and all(k["globalPid"] is None for k in ref.kernels)
    lines = inspect_text("nsysai__healthy_1pct.sqlite", capsys).splitlines()
    assert lines[lines.index("processes") + 1] == f"  none identified: the {len(ref.kernels):,} kernels carry no globalPid"


# ---------------------------------------------------------------- `mfu run` on a trace that cannot give an MFU

@pytest.mark.parametrize("name", sweep(ALL_TRACES))
def test_run_refuses_a_trace_without_ranges_or_kernels_cleanly(real_trace, tmp_path, capsys, name):
    """The job a user writes after inspect: exit 4 (README, exit codes), one message naming the file, every
    missing table with what it prevents (a CPU-only capture lacks both) and the capture that fixes it; no
    traceback, no report folder, the trace unchanged and nothing beside it."""
    path = real_trace(name)
    con = read_only(path)
    try:
        have = tables(con)
    finally:
        con.close()
    missing = [t for t in ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL") if t not in have]
    if not missing:
        pytest.skip(f"{name} has NVTX ranges and kernels: a region can be measured")
    job = tmp_path / "job.yaml"
    job.write_text(f"name: j\ntrace: {json.dumps(str(path))}\nregion: {{name: train_step}}\n"
                   "hardware: {gpu: auto, num_gpus: 1, precision: fp16}\nmodel: {flops_per_step: 1.0e+12}\n"
                   "workload: {mode: training}\n")
    before, beside = sha256(path), sorted(path.parent.iterdir())
    code = main(["run", str(job), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 4 and "Traceback" not in err
    (line,) = [e for e in err.splitlines() if e.startswith("error: ")]
    assert line.startswith(f"error: {path}: the trace has ") and "`nsys profile --trace=cuda,nvtx`" in line
    assert all(f"no {t} table" in line for t in missing), line
    assert ("mark the step with an NVTX range" in line) == ("NVTX_EVENTS" in missing)
    assert not (tmp_path / "out" / "j").exists()
    assert {p.name for p in (tmp_path / "out").iterdir()} <= {".lock", ".status", "index.md", "index.html"}
    assert sha256(path) == before and sorted(path.parent.iterdir()) == beside
