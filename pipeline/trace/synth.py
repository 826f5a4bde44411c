"""Synthetic Nsight Systems exports with a ground truth written at generation time (docs/figures.md §10).

No public trace has per-step NVTX ranges over several ranks with NCCL overlap and
millions of kernels, so we make them: real table and column names, and the quirks
real exports have (correlationIds repeating across processes, launches from a second
thread, kernels finishing after the range closes, duplicate launch rows, kernels
without a launch row, setup kernels outside any range). The ground truth is
computed here from the intervals as they are planted, by a plain sort-and-merge
that shares no code with the SQL under test.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

HOST = 1 << 48
LAUNCH_NS = 3_000            # CPU duration of one launch call
LAUNCH_LATENCY_NS = 4_000    # launch start -> earliest kernel start
# (name, relative duration): GEMMs and attention dominate a transformer step, as in real traces.
COMPUTE_KERNELS = [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 3.0),
    ("nvjet_tst_192x192_64x4_2x1_v_bz_coopA_TNT", 3.0),
    ("flash_fwd_kernel", 1.5),
    ("flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", 2.0),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>", 0.7),
    ("void at::native::(anonymous namespace)::RMSNormForward<c10::BFloat16>", 0.5),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>", 0.25),
    ("cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>", 2.0),
]
COMPUTE_NAMES = [name for name, _ in COMPUTE_KERNELS]
NCCL_WEIGHT = 2.5
_MEAN_WEIGHT = sum(w for _, w in COMPUTE_KERNELS) / len(COMPUTE_KERNELS)
NCCL_NAME = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
COVERED_KERNELS = (0, 1, 2, 3, 7)  # indexes of COMPUTE_KERNELS in the gemm and attention classes
# Shapes the operator ranges record, Llama-3-8B-like at 8192 tokens: (m, k, n) of a matrix product (the MLP's
# up projection), (b, m, k, n) of a batched one (per-head scores), (b, h, s, d) of attention
MM, BMM, ATTENTION = (8192, 4096, 14336), (32, 8192, 128, 8192), (1, 32, 8192, 128)


def mm_flops(m: int, k: int, n: int, batch: int = 1) -> int:
    """[batch,] m x k times k x n: one multiply and one add per term (docs/figures.md §7: 2·m·k·n)."""
    return 2 * batch * m * k * n


def attention_flops(b: int, h: int, sq: int, sk: int, d: int, dv: int, backward: bool = False) -> int:
    """QKᵀ and ×V over every query-key pair; backward 5 products with QKᵀ recomputed (FlashAttention-2 §3.1.2)."""
    pairs = b * h * sq * sk
    return 2 * pairs * (3 * d + 2 * dv) if backward else 2 * pairs * (d + dv)


@dataclass
class SynthSpec:
    """What to plant. Times in ns; `straggler_*` delays one rank's steps (issue: straggler cost)."""

    ranks: int = 2
    steps: int = 5
    kernels_per_step: int = 40
    step_ns: int = 50_000_000
    step_gap_ns: int = 2_000_000
    busy_fraction: float = 0.8
    tail_ns: int = 1_500_000           # GPU work still running after the CPU range closes
    lead_ns: int = 0                   # CPU-only time at the start of each step (data loading)
    nccl_every: int = 8                # every n-th launch is an NCCL kernel on its own stream
    second_thread_every: int = 5       # every n-th launch comes from the autograd thread
    duplicate_every: int = 10          # every n-th launch is recorded twice (…_v7000)
    drop_launch_every: int = 0         # every n-th kernel loses its launch row (0: never)
    setup_kernels: int = 3             # kernels launched before the first step, outside any range
    rank_skew_ns: int = 20_000
    straggler_rank: int | None = None
    straggler_ns: int = 0
    region: str | None = "train_step"  # with "{}", each step's name carries its number: "ProfilerStep#{}"; None:
                                       # no step range, PyTorch op ranges around each launch instead (op-level only)
    loop_region: str | None = None     # one range around every step (a benchmark loop), when set
    warmup_region: str | None = None   # the warm-up steps' name instead ("Warm-up Step {}"), when set
    layers: int = 0                    # nested ranges per step (depth 1), named `layer_region`, splitting it
    layer_region: str = "decoder_layer"
    warmup_steps: int = 0              # the first steps last warmup_factor x step_ns (warm-up outliers)
    warmup_factor: float = 2.0
    gpu_name: str = "NVIDIA H100 80GB HBM3"
    gpu_memory: int = 85_520_809_984
    gpu_bandwidth: int = 3_352_320_000_000
    gpu_sms: int = 132
    gpu_clock: int = 1_980_000_000
    seed: int = 0
    first_pid: int = 4000
    # CUDA graphs (docs/figures.md §4): each step's compute kernels run as one graph launch, recorded
    # as "node" (kernel rows sharing the cudaGraphLaunch correlationId) or "graph" (one
    # CUPTI_ACTIVITY_KIND_GRAPH_TRACE row per launch, no kernel rows). No NCCL nodes, no dropped launches.
    cuda_graph: str | None = None
    graph_gap_ns: int = 20_000         # idle time between consecutive graph nodes (0: back to back)
    # emit_nvtx(record_shapes=True) operator ranges around the GEMM and attention launches (issue #31):
    # wrappers, backward nodes on the autograd thread, some without shapes, some launches in no operator
    operator_shapes: bool = False
    operator_gaps: bool = True         # with operator_shapes: some operators without shapes, some launches in none
    nvtx: bool = True                  # False: no NVTX rows at all (HPC benchmarks, torch.compile captures)
    memcpy_ns: int = 0                 # each step starts with a host-to-device copy this long (stream 9); 0: none


@dataclass
class Tables:
    """The export's rows, collected before write_export writes them (synth_scaled writes the strings only)."""

    strings: dict[str, int] = field(default_factory=dict)
    nvtx: list[tuple] = field(default_factory=list)
    runtime: list[tuple] = field(default_factory=list)
    kernels: list[tuple] = field(default_factory=list)
    graphs: list[tuple] = field(default_factory=list)
    memcpys: list[tuple] = field(default_factory=list)

    def sid(self, text: str) -> int:
        return self.strings.setdefault(text, len(self.strings) + 1)


def union_ns(intervals: list[tuple[int, int]]) -> int:
    """Length of a union of [start, end) intervals: sort, then merge touching or overlapping ones."""
    total, merged = 0, None
    for s, e in sorted(intervals):
        if merged is None or s > merged[1]:
            if merged is not None:
                total += merged[1] - merged[0]
            merged = (s, e)
        else:
            merged = (merged[0], max(merged[1], e))
    return total + (merged[1] - merged[0] if merged is not None else 0)


def generate(spec: SynthSpec, out: Path) -> dict:
    """Write `out` (SQLite) and `out` + '.truth.json'; return the ground truth."""
    rng = random.Random(spec.seed)
    t = Tables()
    truth_steps: dict[int, list[dict]] = {}
    for rank in range(spec.ranks):
        for step, planted in _rank(spec, rank, t, rng):
            truth_steps.setdefault(step, []).append(planted)
    dropped: dict[int, list[tuple[int, int]]] = {}
    for planted in (p for v in truth_steps.values() for p in v):
        dropped.setdefault(planted["rank"], []).extend(planted["dropped"])
    truth = {"spec": asdict(spec),
             # what region discovery and `mfu init` must find, as planted
             "discovery": {"step_region": spec.region, "nested_region": spec.layer_region if spec.layers else None,
                           "warmup_occurrences": spec.warmup_steps, "devices": spec.ranks, "processes": spec.ranks,
                           "gpu_name": spec.gpu_name},
             "occurrences": [_truth(k, v, dropped) for k, v in sorted(truth_steps.items())],
             "active": _active_truth(t)}
    write_export(spec, t, out)
    Path(str(out) + ".truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    return truth


def _rank(spec: SynthSpec, rank: int, t: Tables, rng: random.Random) -> Iterator[tuple[int, dict]]:
    pid = spec.first_pid + rank
    gpid = HOST | (pid << 24)
    main_tid, grad_tid = gpid | pid, gpid | (pid + 1)
    corr = iter(range(1, 1 << 62))     # per process: repeats across ranks, as in real exports
    names = {"launch": t.sid("cudaLaunchKernel"),
             "dup": t.sid("cudaLaunchKernel_v7000")}
    base = 1_000_000_000 + rank * spec.rank_skew_ns
    for i in range(spec.setup_kernels):      # before the first step: never attributed
        launch = base - 5_000_000 + i * 100_000
        c = next(corr)
        t.runtime.append((launch, launch + LAUNCH_NS, main_tid, c, names["launch"]))
        t.kernels.append((launch + LAUNCH_LATENCY_NS, launch + 50_000, rank, 7, c, gpid, t.sid(COMPUTE_NAMES[4]),
                          None, None))
    stream_free = {7: 0, 13: 0}
    offset, ops, cpu_end = 0, random.Random(spec.seed + rank), base
    for step in range(spec.steps):
        step_ns = int(spec.step_ns * spec.warmup_factor) if step < spec.warmup_steps else spec.step_ns
        start = base + offset
        offset += step_ns + spec.step_gap_ns
        if rank == spec.straggler_rank:
            start += spec.straggler_ns
        cpu_end = start + step_ns - spec.tail_ns
        if spec.region is not None and spec.nvtx:     # nvtx False: a capture without NVTX ranges
            t.nvtx.append((start, cpu_end, 59, None, t.sid(step_name(spec, step)), main_tid, 0))
        launched = len(t.runtime)
        if spec.nvtx:
            t.nvtx.append((start + 100, start + 1_000, 59, f"aten::mm, seq = {step}, op_id = {rank}", None, main_tid, 0))
        layer_ns = (cpu_end - start - spec.lead_ns) // max(spec.layers, 1)
        for i in range(spec.layers if spec.nvtx else 0):     # nested inside the step: depth 1, repeating, not a step
            lo = start + spec.lead_ns + i * layer_ns
            t.nvtx.append((lo, lo + layer_ns, 59, None, t.sid(spec.layer_region), main_tid, 0))
        if spec.memcpy_ns:                # launched with the step's first call: attributed like its kernels
            c = next(corr)
            t.runtime.append((start + 500, start + 500 + LAUNCH_NS, main_tid, c, t.sid("cudaMemcpyAsync")))
            t.memcpys.append((start + 1_000, start + 1_000 + spec.memcpy_ns, rank, 9, c, gpid))
        if spec.cuda_graph:
            planted = _graph_step(spec, t, rng, rank, gpid, main_tid, next(corr), (start, cpu_end), stream_free,
                                  step_ns)
        else:
            planted = _step_kernels(spec, t, rng, rank, gpid, (main_tid, grad_tid), corr, names,
                                    (start, cpu_end), stream_free, step_ns)
        if spec.region is None:          # op-level only: each launch inside an op range, named at random
            for launch, end, tid, c, _ in t.runtime[launched:]:
                op = ops.choice(("aten::mm", "aten::add", "aten::mul", "aten::copy_"))
                t.nvtx.append((launch - 100, end + 100, 59, f"{op}, seq = {c}, op_id = {c}", None, tid, 0))
        yield step + 1, planted
    if spec.loop_region:
        t.nvtx.append((base - 1_000, cpu_end + 1_000, 59, None, t.sid(spec.loop_region), main_tid, 0))


def step_name(spec: SynthSpec, step: int) -> str:
    """Step `step`'s (0-based) range name: the warm-up's while warming up if it has one, numbered from 1 by "{}"."""
    name = spec.warmup_region if spec.warmup_region and step < spec.warmup_steps else spec.region
    assert name is not None, "steps get named ranges only when spec.region is set (_rank checks it)"
    return name.replace("{}", str(step + 1))


def _step_kernels(spec: SynthSpec, t: Tables, rng: random.Random, rank: int, gpid: int, tids: tuple[int, int],
                  corr: Iterator[int], names: dict[str, int], window: tuple[int, int], stream_free: dict[int, int],
                  step_ns: int) -> dict:
    start, cpu_end = window
    n = spec.kernels_per_step
    start += spec.lead_ns
    spacing = (cpu_end - start - 2 * LAUNCH_NS) // n
    busy = int((step_ns - spec.lead_ns - LAUNCH_LATENCY_NS) * spec.busy_fraction)
    mean = busy // n
    kept, main_only, dropped, comm = [], [], [], []
    counted: dict[str, int] = {}
    covered_ns = class_ns = 0
    for i in range(n):
        launch = start + LAUNCH_NS + i * spacing
        tid = tids[1] if spec.second_thread_every and i % spec.second_thread_every == 1 else tids[0]
        c = next(corr)
        nccl = spec.nccl_every and i % spec.nccl_every == spec.nccl_every - 1
        stream = 13 if nccl else 7
        weight = NCCL_WEIGHT if nccl else COMPUTE_KERNELS[i % len(COMPUTE_KERNELS)][1]
        dur = max(1_000, int(mean * weight / _MEAN_WEIGHT * rng.uniform(0.5, 1.5)))
        if i == n - 1:     # the last kernel runs past the range end: asynchronous tail
            dur = max(dur, cpu_end - launch + spec.tail_ns - LAUNCH_LATENCY_NS)
        k_start = max(launch + LAUNCH_LATENCY_NS, stream_free[stream] + rng.randint(0, 2_000))
        k_end = k_start + dur
        stream_free[stream] = k_end
        name = NCCL_NAME if nccl else COMPUTE_NAMES[i % len(COMPUTE_NAMES)]
        t.kernels.append((k_start, k_end, rank, stream, c, gpid, t.sid(name), None, None))
        kind, flops = (_operator_ranges(t, i, launch, tid, tid == tids[1], spec.operator_gaps)
                       if spec.operator_shapes and not nccl else (None, 0))
        if kind:
            counted[kind] = counted.get(kind, 0) + flops
        if spec.drop_launch_every and i % spec.drop_launch_every == spec.drop_launch_every - 1:
            dropped.append((k_start, k_end))
            continue
        t.runtime.append((launch, launch + LAUNCH_NS, tid, c, names["launch"]))
        if spec.duplicate_every and i % spec.duplicate_every == 0:
            t.runtime.append((launch + 200, launch + LAUNCH_NS - 200, tid, c, names["dup"]))
        kept.append((k_start, k_end))
        if spec.operator_shapes and not nccl and i % len(COMPUTE_KERNELS) in COVERED_KERNELS:
            class_ns += k_end - k_start
            covered_ns += (k_end - k_start) if kind else 0
        if nccl:
            comm.append((k_start, k_end))
        if tid == tids[0]:
            main_only.append((k_start, k_end))
    return {"rank": rank, "device": rank, "start_ns": window[0], "end_ns": cpu_end, "kernels": kept,
            "main_thread_kernels": main_only, "dropped": dropped, "comm_kernels": comm,
            "counted_flops": counted, "covered_ns": covered_ns, "class_ns": class_ns}


def _operator_ranges(t: Tables, i: int, launch: int, tid: int, backward: bool, gaps: bool) -> tuple[str | None, int]:
    """PyTorch's emit_nvtx ranges around launch i on its thread: (kind, FLOPs) of a counted leaf, else (None, 0).

    By kernel type (i mod 8): matrix products under wrappers (linear > matmul > mm, addmm, matmul > bmm),
    attention under scaled_dot_product_attention, the backward ones under an autograd node on the autograd
    thread; with `gaps`, every fifth round of types records no shapes, and the round after launches outside any
    operator.
    """
    kernel, round_ = i % len(COMPUTE_KERNELS), (i // len(COMPUTE_KERNELS)) % 5 if gaps else 0
    if kernel == 4:         # an elementwise operator with shapes: never a GEMM-class range
        _nest(t, tid, launch, [f"aten::add, seq = {i}, op_id = {i}, sizes = [[2048, 768], [2048, 768], []]"])
    if kernel not in COVERED_KERNELS or round_ == 4:
        return None, 0
    m, k, n = MM
    b, h, s, d = ATTENTION
    qkv = ", ".join([f"[{b}, {h}, {s}, {d}]"] * 3)
    kind, flops, chain = {
        0: ("mm", mm_flops(m, k, n), ["aten::linear", "aten::matmul", "aten::mm", f"[[{m}, {k}], [{k}, {n}]]"]),
        1: ("mm", mm_flops(m, k, n), ["aten::addmm", f"[[{n}], [{m}, {k}], [{k}, {n}], [], []]"]),
        2: ("attention", attention_flops(b, h, s, s, d, d),
            ["aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
             f"[{qkv}, [], [], [], []]"]),
        3: ("attention_backward", attention_flops(b, h, s, s, d, d, backward=True),
            ["aten::_scaled_dot_product_flash_attention_backward", f"[[{b}, {h}, {s}, {d}], {qkv}, "
             f"[{b}, {h}, {s}, {d}], [{b}, {h}, {s}], [], []]"]),
        7: ("bmm", mm_flops(*BMM[1:], batch=BMM[0]), ["aten::matmul", "aten::bmm", f"[[{BMM[0]}, {BMM[1]}, "
            f"{BMM[2]}], [{BMM[0]}, {BMM[2]}, {BMM[3]}]]"]),
    }[kernel]
    *ops, sizes = chain
    names = [f"{op}, seq = {i}, op_id = {i * 10 + j}" for j, op in enumerate(ops)]
    if backward:
        names = [f"{kind.title().replace('_', '')}Backward0, seq = {i}, op_id = {i * 10 + 9}", names[-1]]
    counted = round_ != 3                     # a round of types records no shapes: not covered
    shaped = [name + (f", sizes = {sizes}" if counted and "Backward0" not in name else "") for name in names]
    _nest(t, tid, launch, shaped)
    return (kind, flops) if counted else (None, 0)


def _nest(t: Tables, tid: int, launch: int, names: list[str]) -> None:
    """Ranges nested around a launch call, the first outermost (100 ns more on each side per level)."""
    for depth, name in enumerate(names):
        margin = 100 * (len(names) - depth)
        t.nvtx.append((launch - margin, launch + LAUNCH_NS + margin, 59, name, None, tid, 0))


def _graph_step(spec: SynthSpec, t: Tables, rng: random.Random, rank: int, gpid: int, tid: int, c: int,
                window: tuple[int, int], stream_free: dict[int, int], step_ns: int) -> dict:
    """The step's compute kernels as one CUDA graph launch (one cudaGraphLaunch row, correlationId c).

    Nodes run in order on stream 7, graph_gap_ns apart. Node mode writes them as kernel rows
    (graphId 1, graphNodeId 1..n); graph mode writes one GRAPH_TRACE row from the first node's
    start to the last one's end instead, and that interval is the step's only GPU work.
    """
    start, cpu_end = window
    launch = start + spec.lead_ns + LAUNCH_NS
    mean = int((step_ns - spec.lead_ns - LAUNCH_LATENCY_NS) * spec.busy_fraction) // spec.kernels_per_step
    t.runtime.append((launch, launch + LAUNCH_NS, tid, c, t.sid("cudaGraphLaunch")))
    if spec.duplicate_every:
        t.runtime.append((launch + 200, launch + LAUNCH_NS - 200, tid, c, t.sid("cudaGraphLaunch_v10000")))
    nodes, free = [], max(launch + LAUNCH_LATENCY_NS, stream_free[7])
    for i in range(spec.kernels_per_step):
        name, weight = COMPUTE_KERNELS[i % len(COMPUTE_KERNELS)]
        dur = max(1_000, int(mean * weight / _MEAN_WEIGHT * rng.uniform(0.5, 1.5)))
        nodes.append((free, free + dur))
        if spec.cuda_graph == "node":
            t.kernels.append((free, free + dur, rank, 7, c, gpid, t.sid(name), i + 1, 1))
        free += dur + spec.graph_gap_ns
    stream_free[7] = nodes[-1][1]
    gpu = nodes if spec.cuda_graph == "node" else [(nodes[0][0], nodes[-1][1])]
    if spec.cuda_graph == "graph":
        t.graphs.append((*gpu[0], rank, 7, c, gpid, 1, 1))
    return {"rank": rank, "device": rank, "start_ns": start, "end_ns": cpu_end, "kernels": gpu,
            "main_thread_kernels": gpu, "dropped": [], "comm_kernels": []}


def _truth(index: int, ranks: list[dict], dropped: dict[int, list[tuple[int, int]]]) -> dict:
    allk = [k for r in ranks for k in r["kernels"]]
    start = min(r["start_ns"] for r in ranks)
    end = max([r["end_ns"] for r in ranks] + [e for _, e in allk])
    return {
        "index": index,
        "processes": len(ranks),
        "start_ns": start,
        "cpu_range_ns": max(r["end_ns"] - r["start_ns"] for r in ranks),
        "wall_ns": end - start,
        "kernel_sum_ns": sum(e - s for s, e in allk),
        "kernel_union_ns": union_ns(allk),
        "kernel_count": len(allk),
        "device_union_ns": {str(r["device"]): union_ns(r["kernels"]) for r in ranks},
        "rank_wall_ns": {str(r["rank"]): max([r["end_ns"]] + [e for _, e in r["kernels"]]) - r["start_ns"]
                         for r in ranks},
        "thread_kernel_count": sum(len(r["main_thread_kernels"]) for r in ranks),
        "thread_kernel_union_ns": union_ns([k for r in ranks for k in r["main_thread_kernels"]]),
        "device_comm_ns": {str(r["device"]): _comm_truth(r, end - start) for r in ranks},
        "unattributed_kernel_count": sum(1 for r in ranks for s, e in dropped.get(r["rank"], [])
                                         if s < r["end_ns"] and e > r["start_ns"]),
        # counted FLOPs (issue #31), with operator_shapes: by kind, and the gemm/attention time they cover
        "counted_flops": {kind: sum(r.get("counted_flops", {}).get(kind, 0) for r in ranks)
                          for kind in sorted({k for r in ranks for k in r.get("counted_flops", {})})},
        "covered_ns": sum(r.get("covered_ns", 0) for r in ranks),
        "class_ns": sum(r.get("class_ns", 0) for r in ranks),
    }


def _active_truth(t: Tables) -> dict:
    """The GPU-active window (region kind gpu_active) as planted, over every rank: the first GPU row's start, the
    last one's end (memory copies included), and the kernel rows between (setup kernels included: the window
    holds everything)."""
    rows = [(row[0], row[1]) for row in t.kernels + t.graphs]
    bounds = rows + [(row[0], row[1]) for row in t.memcpys]
    start = min(s for s, _ in bounds)
    return {"start_ns": start, "wall_ns": max(e for _, e in bounds) - start,
            "kernel_sum_ns": sum(e - s for s, e in rows),
            "kernel_union_ns": union_ns(rows), "kernel_count": len(rows)}


def merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint islands of a set of intervals (touching ones merge)."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def overlap_ns(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Length of the intersection of two interval sets: a two-pointer walk over their islands."""
    a, b = merge(a), merge(b)
    i = j = total = 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _comm_truth(planted: dict, wall_ns: int) -> dict[str, int]:
    """NCCL time under no compute kernel (exposed), under some (hidden), and no kernel at all (idle)."""
    comm = planted["comm_kernels"]
    comm_set = set(comm)
    compute = [k for k in planted["kernels"] if k not in comm_set]
    hidden = overlap_ns(comm, compute)
    return {"exposed_ns": union_ns(comm) - hidden, "hidden_ns": hidden,
            "idle_ns": wall_ns - union_ns(planted["kernels"])}


_SCHEMA = {
    "StringIds": "id INTEGER PRIMARY KEY, value TEXT NOT NULL",
    "NVTX_EVENTS": "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
                   "category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, "
                   "textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, "
                   "doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, "
                   "jsonTextId INTEGER, jsonText TEXT",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
                                   "globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, "
                                   "returnValue INTEGER NOT NULL, callchainId INTEGER",
    "CUPTI_ACTIVITY_KIND_KERNEL": "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
                                  "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, "
                                  "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
                                  "shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, "
                                  "gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, "
                                  "blockY INTEGER, blockZ INTEGER, graphNodeId INTEGER, graphId INTEGER",
    "TARGET_INFO_GPU": "vmId INTEGER, id INTEGER NOT NULL, name TEXT, chipName TEXT, totalMemory INTEGER, "
                       "memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, cuDevice INTEGER",
    "PROCESSES": "globalPid INTEGER, pid INTEGER, name TEXT",
    "META_DATA_EXPORT": "name TEXT, value TEXT",
}
# Created only when they have rows, as Nsight Systems does (NSYS_SCHEMA.md).
_MEMCPY = ("start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
           "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, "
           "copyKind INTEGER NOT NULL")
_GRAPH_TRACE = ("start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
                "greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
                "graphId INTEGER NOT NULL, graphExecId INTEGER NOT NULL")


def write_export(spec: SynthSpec, t: Tables, out: Path) -> None:
    """Create the export in one transaction, rows in the column order of _SCHEMA."""
    out.unlink(missing_ok=True)
    con = sqlite3.connect(out)
    try:
        for table, cols in _SCHEMA.items():
            con.execute(f"CREATE TABLE {table} ({cols})")
        con.executemany("INSERT INTO StringIds VALUES (?, ?)", ((i, s) for s, i in t.strings.items()))
        con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid, domainId) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", t.nvtx)
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
                        "correlationId, nameId, returnValue) VALUES (?, ?, 1, ?, ?, ?, 0)", t.runtime)
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
                        "correlationId, globalPid, demangledName, shortName, gridX, gridY, gridZ, blockX, "
                        "blockY, blockZ, graphNodeId, graphId) "
                        "VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?7, 128, 1, 1, 256, 1, 1, ?8, ?9)", t.kernels)
        if t.memcpys:
            con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY ({_MEMCPY})")
            con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                            "correlationId, globalPid, bytes, copyKind) VALUES (?, ?, ?, 1, ?, ?, ?, 4096, 1)",
                            t.memcpys)
        if t.graphs:
            con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE ({_GRAPH_TRACE})")
            con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start, end, deviceId, contextId, streamId, "
                            "correlationId, globalPid, graphId, graphExecId) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
                            t.graphs)
        con.executemany("INSERT INTO TARGET_INFO_GPU VALUES (0, ?, ?, ?, ?, ?, ?, ?, ?)", [
            (r, spec.gpu_name, "GH100", spec.gpu_memory, spec.gpu_bandwidth, spec.gpu_clock, spec.gpu_sms, r)
            for r in range(spec.ranks)])
        con.executemany("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", [
            (HOST | ((spec.first_pid + r) << 24), spec.first_pid + r) for r in range(spec.ranks)])
        con.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", [
            ("EXPORT_PRODUCT_VERSION", "synthetic (mfu-pipeline synth)"), ("EXPORT_SCHEMA_VERSION", "3.25.0")])
        con.commit()
    finally:
        con.close()
