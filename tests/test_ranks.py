"""Per-rank traces: several files (one per rank), ranks keyed by (file, pid), straggler cost.

Expected values come from the generator's planted parameters and ground truth
(pipeline/trace/synth.py), never from our own output: identical files (same seed, same
rank index) plant identical kernels, so one file shifted by D makes the step's
slowest rank finish exactly D after the median rank.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pipeline.analysis.measure import MissingOccurrences, occurrence_range_of
from pipeline.job.config import Region, load_job
from pipeline.job.documents import validator
from pipeline.errors import TraceError
from pipeline.report.render import render_all
from pipeline.run import run_job
from pipeline.trace.synth import SynthSpec, generate

NS = 1e9
D = 3_000_000          # planted straggler delay, ns
STEPS = 5


def rank_files(folder: Path, specs: list[dict]) -> list[dict]:
    """One single-rank trace per spec as r<i>.sqlite; returns each file's ground truth."""
    return [generate(SynthSpec(**{"ranks": 1, "steps": STEPS, "rank_skew_ns": 0, **s}), folder / f"r{i}.sqlite")
            for i, s in enumerate(specs)]


def job(folder: Path, trace, num_gpus: int = 4, **region) -> Path:
    body = {"name": "multi", "trace": trace,
            "region": {"name": "train_step", **region},
            "hardware": {"num_gpus": num_gpus, "precision": "bf16"},
            "model": {"flops_per_step": 4.0e+14},
            "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}
    path = folder / "job.yaml"
    path.write_text(json.dumps(body))
    return path


@pytest.fixture(scope="module")
def four_ranks(tmp_path_factory):
    """Four files, equal pids in files 0 and 1 (another host), file 3 lagging by D; built and run once for the
    module's tests, which only read the result."""
    tmp_path = tmp_path_factory.mktemp("four_ranks")
    truths = rank_files(tmp_path, [{"first_pid": 4000}, {"first_pid": 4000}, {"first_pid": 4002},
                                   {"first_pid": 4003, "straggler_rank": 0, "straggler_ns": D}])
    return run_job(load_job(job(tmp_path, "r*.sqlite"))), truths


def test_straggler_cost_equals_the_plant(four_ranks):
    res, _ = four_ranks
    st = res["straggler"]
    assert st["total_s"] == pytest.approx(STEPS * D / NS, abs=1e-12)
    assert [o["cost_s"] for o in st["occurrences"]] == pytest.approx([D / NS] * STEPS, abs=1e-12)
    assert st["slowest_rank"] == "r3.sqlite:4003" and st["slowest_count"] == STEPS
    assert st["pct_of_wall"] == pytest.approx(100 * st["total_s"] / res["totals"]["wall_time_s"])


def test_ranks_are_keyed_by_file_and_pid(four_ranks):
    res, _ = four_ranks
    assert [r["rank"] for r in res["rank_summary"]] == [
        "r0.sqlite:4000", "r1.sqlite:4000", "r2.sqlite:4002", "r3.sqlite:4003"]
    assert [d["label"] for d in res["devices"]] == ["r0.sqlite:0", "r1.sqlite:0", "r2.sqlite:0", "r3.sqlite:0"]
    assert [f["label"] for f in res["trace"]["files"]] == ["r0.sqlite", "r1.sqlite", "r2.sqlite", "r3.sqlite"]


def test_combined_times_match_the_files_ground_truth(four_ranks):
    res, truths = four_ranks
    for k, got in enumerate(res["occurrences"]):
        per = [t["occurrences"][k] for t in truths]
        start = min(o["start_ns"] for o in per)
        end = max(o["start_ns"] + o["wall_ns"] for o in per)
        assert got["start_ns"] == start
        assert round(got["wall_time_s"] * NS) == end - start
        assert got["kernel_count"] == sum(o["kernel_count"] for o in per)
        assert round(got["gpu_kernel_sum_s"] * NS) == sum(o["kernel_sum_ns"] for o in per)
        # files 0-2 plant identical intervals, so the union is at least theirs, at most theirs plus file 3's
        assert per[0]["kernel_union_ns"] <= round(got["gpu_kernel_union_s"] * NS) <= \
            per[0]["kernel_union_ns"] + per[3]["kernel_union_ns"]
        assert got["processes"] == [4000, 4000, 4002, 4003]
    walls = [t["occurrences"][0]["rank_wall_ns"]["0"] / NS for t in truths]
    assert res["rank_spread"]["wall_median_s"]["median"] == pytest.approx(statistics.median(
        statistics.median(t["occurrences"][k]["rank_wall_ns"]["0"] / NS for k in range(STEPS)) for t in truths))
    assert walls[0] == walls[1] == walls[2]


def test_identical_files_union_once(tmp_path):
    truths = rank_files(tmp_path, [{}, {"first_pid": 5000}])
    res = run_job(load_job(job(tmp_path, ["r0.sqlite", "r1.sqlite"], num_gpus=2)))
    for got, want in zip(res["occurrences"], truths[0]["occurrences"]):
        assert round(got["gpu_kernel_union_s"] * NS) == want["kernel_union_ns"]
        assert round(got["gpu_kernel_sum_s"] * NS) == 2 * want["kernel_sum_ns"]
    assert res["straggler"]["total_s"] == 0


def test_single_file_straggler_by_hand(synth_trace, tmp_path):
    spec = {"ranks": 4, "straggler_rank": 2, "straggler_ns": D, "rank_skew_ns": 10_000}
    trace, truth = synth_trace(**spec)
    res = run_job(load_job(job(tmp_path, str(trace))))
    expected = 0
    for occ in truth["occurrences"]:
        k = occ["index"] - 1
        period = truth["spec"]["step_ns"] + truth["spec"]["step_gap_ns"]
        ends = [1_000_000_000 + r * 10_000 + k * period + (D if r == 2 else 0) + occ["rank_wall_ns"][str(r)]
                for r in range(4)]
        expected += max(ends) - statistics.median(ends)
    assert res["straggler"]["total_s"] == pytest.approx(expected / NS, abs=1e-12)
    assert res["straggler"]["slowest_rank"] == "4002"


def test_missing_and_misaligned_ranks_are_reported(tmp_path):
    period = 52_000_000
    rank_files(tmp_path, [{}, {"first_pid": 4001}, {"first_pid": 4002, "steps": 3},
                          {"first_pid": 4003, "straggler_rank": 0, "straggler_ns": period}])
    res = run_job(load_job(job(tmp_path, "r*.sqlite")))
    codes = {w["code"]: w["message"] for w in res["warnings"]}
    assert "r2.sqlite:4002" in codes["rank_missing_occurrences"] and "4, 5" in codes["rank_missing_occurrences"]
    assert "r3.sqlite:4003" in codes["rank_misaligned"]
    assert "occurrence_missing_ranks" in codes
    assert [r["occurrences"] for r in res["rank_summary"]] == [5, 5, 3, 5]


def test_glob_matching_nothing_is_a_trace_error(tmp_path):
    with pytest.raises(TraceError, match="matches no file"):
        run_job(load_job(job(tmp_path, "nothing*.sqlite")))


def test_multi_file_result_matches_schema(four_ranks):
    res, _ = four_ranks
    errors = [e.message for e in validator("result.schema.json").iter_errors(json.loads(json.dumps(res)))]
    assert errors == []


def test_rank_above_100_is_warned_while_the_total_is_plausible(synth_trace, tmp_path):
    """A rank's MFU uses its own wall, shorter than the job's (which spans a 20 ms straggler delay): with the
    FLOPs scaled so that the job's figures are plausible (union diagnostic 99 %), the ranks whose own MFU
    then exceeds 100 % are named and the verdict stays ok. Every utilization is linear in the FLOPs."""
    trace, _ = synth_trace(ranks=4, straggler_rank=2, straggler_ns=20_000_000, rank_skew_ns=10_000)
    first = run_job(load_job(job(tmp_path, str(trace))))
    flops = round(4.0e14 * 99.0 / first["metrics"]["active_ratio_pct_union"])
    scale = flops / 4.0e14
    body = json.loads((tmp_path / "job.yaml").read_text())
    body["model"]["flops_per_step"] = flops
    (tmp_path / "job.yaml").write_text(json.dumps(body))
    res = run_job(load_job(tmp_path / "job.yaml"))
    assert res["status"] == "ok" and res["metrics"]["active_ratio_pct_union"] == pytest.approx(99.0, rel=1e-9)
    above = [r["rank"] for r in first["rank_summary"] if r["mfu_pct_wall"] * scale > 100]
    assert above, "the planted delay must put some rank above 100 %"
    (w,) = [w for w in res["warnings"] if w["code"] == "rank_above_100"]
    assert w["message"].startswith(f"rank(s) {', '.join(above)} over the selected occurrences")
    md = render_all(res)["report.md"]
    marked = sorted(line.split("|")[1].strip() for line in md.split("## Ranks", 1)[1].splitlines()
                    if line.startswith("| ") and "\u00a0⚠ |" in line and "MFU" not in line)
    assert marked == sorted(above) and "(warning `rank_above_100`)" in md


def test_a_file_with_fewer_occurrences_is_a_rank_missing_them_not_an_error(tmp_path):
    """Occurrences are counted per process and asking for more than *any* process has is the error
    (docs/figures.md §3): a rank file with 4 steps beside files with 5 is a rank missing occurrence 5, as the
    same ranks in one file are (occurrence_missing_ranks), not a trace error for the whole job."""
    truths = rank_files(tmp_path, [{"first_pid": 4000}, {"first_pid": 4001}, {"first_pid": 4002, "steps": 4}])
    res = run_job(load_job(job(tmp_path, "r*.sqlite", num_gpus=3, occurrences={"first": 2, "last": 5})))
    assert [o["index"] for o in res["occurrences"]] == [2, 3, 4, 5]
    assert [o["processes"] for o in res["occurrences"]] == [[4000, 4001, 4002]] * 3 + [[4000, 4001]]
    for got in res["occurrences"]:
        per = [t["occurrences"][got["index"] - 1] for t in truths if len(t["occurrences"]) >= got["index"]]
        assert got["kernel_count"] == sum(o["kernel_count"] for o in per)
        assert round(got["gpu_kernel_sum_s"] * NS) == sum(o["kernel_sum_ns"] for o in per)
        start = min(o["start_ns"] for o in per)
        assert round(got["wall_time_s"] * NS) == max(o["start_ns"] + o["wall_ns"] for o in per) - start
    assert res["totals"]["kernel_count"] == 3 * 3 * 40 + 2 * 40
    codes = {w["code"]: w["message"] for w in res["warnings"]}
    assert "occurrence_missing_ranks" in codes and "r2.sqlite:4002" in codes["rank_missing_occurrences"]
    with ThreadPoolExecutor(2) as pool:         # each file's window built by a task (ranks.build_files)
        assert run_job(load_job(tmp_path / "job.yaml"), submit=pool.submit) == res
    only = run_job(load_job(job(tmp_path, "r*.sqlite", num_gpus=3, occurrences={"first": 5, "last": 5})))
    assert [o["processes"] for o in only["occurrences"]] == [[4000, 4001]]
    assert only["totals"]["kernel_count"] == 2 * 40
    with pytest.raises(TraceError, match="fewer occurrences than asked") as err:
        run_job(load_job(job(tmp_path, "r*.sqlite", num_gpus=3, occurrences={"first": 2, "last": 6})))
    assert "r2.sqlite:4002: 4" in str(err.value) and "r0.sqlite:4000: 5" in str(err.value)


def _two_hosts_one_pid(tmp_path, one_device: bool = False) -> tuple[dict, dict]:
    """Two ranks of one file whose pid 4001 on host 1 becomes pid 4000 on host 2 (rank 0 is pid 4000 on
    host 1); with `one_device`, every kernel ran on device 0, as each host's first GPU would be numbered."""
    truth = generate(SynthSpec(ranks=2, steps=STEPS, rank_skew_ns=300_000, straggler_rank=1, straggler_ns=D),
                     tmp_path / "t.sqlite")
    con = sqlite3.connect(tmp_path / "t.sqlite")
    moved, low = (1 << 48) | (4001 << 24), (1 << 24) - 1
    for table, col in (("NVTX_EVENTS", "globalTid"), ("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"),
                       ("CUPTI_ACTIVITY_KIND_KERNEL", "globalPid")):
        con.execute(f"UPDATE {table} SET {col} = ? | ({col} & ?) WHERE {col} & ~? = ?",
                    ((2 << 48) | (4000 << 24), low, low, moved))
    con.execute("UPDATE PROCESSES SET globalPid = ?, pid = 4000 WHERE pid = 4001", ((2 << 48) | (4000 << 24),))
    if one_device:
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 0")
    con.commit()
    con.close()
    return truth, run_job(load_job(job(tmp_path, "t.sqlite", num_gpus=2)))


def test_two_hosts_sharing_a_pid_in_one_file_are_two_ranks(tmp_path):
    """A process is globalTid & ~0xFFFFFF, host bits included (docs/figures.md §2): two hosts' processes with one
    pid in one file are two ranks, named pid@host as the occurrence counts name them, each over its own 5
    occurrences; merging them would count 10 occurrences of FLOPs over one rank's time (twice its MFU)."""
    truth, res = _two_hosts_one_pid(tmp_path)
    assert "devices_of_several_hosts" not in {w["code"] for w in res["warnings"]}     # devices 0 and 1
    summary = {r["rank"]: r for r in res["rank_summary"]}
    assert sorted(summary) == ["4000@1", "4000@2"]
    peak, flops = 989.4e12, 4.0e14
    for rank, name in ((0, "4000@1"), (1, "4000@2")):
        walls = [o["rank_wall_ns"][str(rank)] for o in truth["occurrences"]]   # disjoint: their union is the sum
        assert summary[name]["occurrences"] == STEPS
        assert summary[name]["kernel_count"] == STEPS * 40
        assert summary[name]["mfu_pct_wall"] == pytest.approx(100 * STEPS * flops / (sum(walls) / NS * 2 * peak))
    assert res["straggler"]["slowest_rank"] == "4000@2"
    assert [sorted(r["rank"] for r in res["ranks"] if r["occurrence"] == k) for k in (1, STEPS)] == \
        [["4000@1", "4000@2"]] * 2


def test_a_device_id_of_two_hosts_is_said_to_add_them_up(tmp_path):
    """Device ids are per host: in one file, device 0 of host 1 and of host 2 share one id, so the per-device
    figures of that id add both GPUs up. The report says so, naming the id; the ranks stay apart."""
    _, res = _two_hosts_one_pid(tmp_path, one_device=True)
    (w,) = [w for w in res["warnings"] if w["code"] == "devices_of_several_hosts"]
    assert w["message"].startswith("device(s) 0 ran kernels of processes on 2 hosts of one file")
    assert sorted(r["rank"] for r in res["rank_summary"]) == ["4000@1", "4000@2"]


def test_a_warm_run_still_names_a_device_id_of_two_hosts(tmp_path):
    """The warning is worded by the analysis (over the occurrences analysed), from the hosts the kept window's
    record holds: a warm run over the kept window warns as the cold run did."""
    _two_hosts_one_pid(tmp_path, one_device=True)
    job_file = load_job(tmp_path / "job.yaml")
    cold = run_job(job_file, cache_dir=tmp_path / "cache")
    warm = run_job(job_file, cache_dir=tmp_path / "cache")
    assert [w["message"].split(";")[0] for w in warm["warnings"] if w["code"] == "devices_of_several_hosts"] == \
        ["device(s) 0 ran kernels of processes on 2 hosts of one file"]
    assert warm["warnings"] == cold["warnings"]


def _hand_two_ranks(tmp_path: Path, e) -> dict:
    """Run region `step` of the hand-made export `e` on 2 GPUs at 1 TFLOP/s, 1e3 FLOPs per step."""
    from test_run_synth import write_job
    trace = e.write(tmp_path / "t.sqlite")
    return run_job(load_job(write_job(tmp_path, trace, region={"name": "step"},
                                      hardware={"num_gpus": 2, "peak_tflops": 1.0},
                                      model={"flops_per_step": 1.0e3},
                                      workload={"seq_len": 4, "global_batch": 1})))


def test_a_rank_without_kernels_in_an_occurrence_has_no_rank_mfu(tmp_path):
    """docs/figures.md §5: an occurrence with no attributed kernel shows no MFU ("—"); the same holds for one rank's
    row of an occurrence. pid 100 steps 1000..2000 and 11000..12000, each launching a kernel (1100 -> 1200..1500,
    11100 -> 11200..11500); pid 200 steps 1000..2000 (launch 1100 -> kernel 1200..1600) and 11000..12000 with
    no kernel. By hand, at 1e3 FLOPs, 2 GPUs, 1e12 FLOP/s: every rank wall is 1000 ns, MFU 1e3 / (1e-6 x 2e12)
    = 0.05 % where the rank launched a kernel; pid 200 in occurrence 2 only measured its CPU range: null."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    a, b = gtid(100, 100), gtid(200, 200)
    for k, (t, key, corr, end) in enumerate(((a, gpid(100), 1, 1500), (b, gpid(200), 1, 1600))):
        e.range(1000, 2000, t, "step")
        e.range(11000, 12000, t, "step")
        e.launch(1100, t, corr)
        e.kernel(1200, end, key, corr, device=k)
    e.launch(11100, a, 2)
    e.kernel(11200, 11500, gpid(100), 2, device=0)
    res = _hand_two_ranks(tmp_path, e)
    rows = {(r["pid"], r["occurrence"]): r for r in res["ranks"]}
    assert {k: r["kernel_count"] for k, r in rows.items()} == {(100, 1): 1, (200, 1): 1, (100, 2): 1, (200, 2): 0}
    assert [round(r["wall_time_s"] * NS) for r in rows.values()] == [1000] * 4
    for key in ((100, 1), (200, 1), (100, 2)):
        assert rows[key]["mfu_pct_wall"] == pytest.approx(0.05)
    assert rows[(200, 2)]["mfu_pct_wall"] is None
    assert [o["mfu_pct_wall"] for o in res["occurrences"]] == pytest.approx([0.05, 0.05])



def _two_ranks_apart(offset: int):
    """pids 100 and 200, 4 steps each every 10000 ns (1000 long), pid 200's `offset` later; each step launches
    one kernel at start + 100 that runs 200..600 after the start, on device 0 (pid 100) or 1 (pid 200)."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    corr = 0
    for pid, shift in ((100, 0), (200, offset)):
        t = gtid(pid, pid)
        for k in range(4):
            s = shift + k * 10000
            corr += 1
            e.range(s, s + 1000, t, "step")
            e.launch(s + 100, t, corr)
            e.kernel(s + 200, s + 600, gpid(pid), corr, device=pid // 100 - 1)
    return e


def test_two_ranks_more_than_half_a_period_apart_are_misaligned(tmp_path):
    """The warning's own words: a rank whose k-th range starts more than half a step period from the other
    ranks' k-th. pid 100 steps start at 0, 10000, 20000, 30000 (period 10000); pid 200's start 6000 later
    (0.6 periods: its k-th step is nearer pid 100's (k+1)-th than its k-th). Each step launches one kernel at
    start + 100 running 200..600 after the start. |6000| > 10000 / 2 for every occurrence: both ranks are
    named (with two ranks neither can be told to be the odd one), all 4 occurrences."""
    res = _hand_two_ranks(tmp_path, _two_ranks_apart(6000))
    assert [r["period_s"] for r in res["ranks"] if r["occurrence"] < 4] == pytest.approx([10000 / NS] * 6)
    mis = sorted(w["message"] for w in res["warnings"] if w["code"] == "rank_misaligned")
    assert len(mis) == 2
    assert mis[0].startswith("rank 100: occurrence(s) 1, 2, 3, 4 start")
    assert mis[1].startswith("rank 200: occurrence(s) 1, 2, 3, 4 start")


def test_two_ranks_under_half_a_period_apart_are_aligned(tmp_path):
    """The same two ranks 4000 ns apart (0.4 periods): no rank_misaligned."""
    res = _hand_two_ranks(tmp_path, _two_ranks_apart(4000))
    assert "rank_misaligned" not in {w["code"] for w in res["warnings"]}


def test_gpu_tail_warning_says_its_percentages_are_each_occurrences_latest_rank(tmp_path):
    """gpu_outlasts_range is per rank; its percent span is each occurrence's largest tail. Both ranks' steps
    1000..2000 (CPU range 1000); pid 100's kernel ends 100 after its range (10 %), pid 200's 400 after (40 %):
    both are over 5 %, but the span printed is 40.0 % to 40.0 % — the message must say whose tail that is,
    not read as 'every flagged rank overran by 40 %'."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    for k, (pid, end) in enumerate(((100, 2100), (200, 2400))):
        t = gtid(pid, pid)
        e.range(1000, 2000, t, "step")
        e.launch(1500, t, 1)
        e.kernel(1600, end, gpid(pid), 1, device=k)
    res = _hand_two_ranks(tmp_path, e)
    (msg,) = [w["message"] for w in res["warnings"] if w["code"] == "gpu_outlasts_range"]
    assert "in 1 of 1 occurrences (1)" in msg
    assert "latest rank's tail per occurrence: 40.0 % to 40.0 % of the CPU range" in msg


def test_median_without_is_the_median_of_the_others():
    """rank_misaligned compares each rank with the median of the other ranks' starts; taken from one sorted
    list, it must equal statistics.median of the list with that one start removed (ties included)."""
    import random
    import statistics
    from pipeline.analysis.rankstats import median_without
    rng = random.Random(7)
    for n in range(2, 14):
        for _ in range(200):
            starts = sorted(rng.randint(0, 6 if n % 2 else 10_000) for _ in range(n))
            value = rng.choice(starts)
            others = list(starts)
            others.remove(value)
            assert median_without(starts, value) == statistics.median(others), (starts, value)
    assert median_without([0, 6000], 0) == 6000 and median_without([0, 10, 20], 10) == 10


def _rank(occurrence: int, rank: str, start: int, wall: int, kernels: int = 1, period: int | None = None) -> dict:
    """One (occurrence, rank) row as measure/ranks produce it, in integer ns."""
    return {"occurrence": occurrence, "rank": rank, "file": "t.sqlite", "pid": 1, "start_ns": start,
            "cpu_range_ns": wall, "wall_ns": wall, "union_ns": wall // 2, "period_ns": period,
            "kernel_count": kernels}


def test_straggler_and_spread_by_hand():
    """Three ranks, ends per occurrence (start + wall):
    1: a 1000, c 1100, b 1300 -> median 1100: cost 200, spread (latest - earliest) 300, slowest b
    2: a 6000, c 6000, b 6200 -> median 6000: cost 200, spread 200, slowest b
    3: c 11000, a 11500, b 11500 -> median 11500: cost 0, spread 500, a and b share the latest end: no slowest
    Total 400 ns, 2 % of a 20000 ns wall; b was slowest most often (twice)."""
    from pipeline.analysis import rankstats
    rows = [_rank(1, "a", 0, 1000), _rank(1, "b", 0, 1300), _rank(1, "c", 0, 1100),
            _rank(2, "a", 5000, 1000), _rank(2, "b", 5000, 1200), _rank(2, "c", 5000, 1000),
            _rank(3, "a", 10000, 1500), _rank(3, "b", 10000, 1500), _rank(3, "c", 10000, 1000)]
    st = rankstats.straggler(rows, 20000)
    assert [(o["occurrence"], o["slowest_rank"], round(o["cost_s"] * NS), round(o["spread_s"] * NS))
            for o in st["occurrences"]] == [(1, "b", 200, 300), (2, "b", 200, 200), (3, None, 0, 500)]
    assert round(st["total_s"] * NS) == 400 and st["pct_of_wall"] == pytest.approx(2.0)
    assert (st["slowest_rank"], st["slowest_count"]) == ("b", 2)
    spreads = rankstats.occurrence_spreads(rows)                     # slowest minus fastest rank wall
    assert {k: round(v * NS) for k, v in spreads.items()} == {1: 300, 2: 200, 3: 500}
    # ranks that all finish together: no rank is named slowest, and none counts an occurrence as its own
    together = [_rank(k, name, 0, 1000) for k in (1, 2) for name in ("a", "b")]
    tied = rankstats.straggler(together, 2000)
    assert [o["slowest_rank"] for o in tied["occurrences"]] == [None, None]
    assert (tied["slowest_rank"], tied["slowest_count"], tied["total_s"]) == (None, 0, 0)
    # one rank: nobody waits for anybody, no straggler figures at all
    alone = rankstats.straggler([_rank(1, "a", 0, 1000)], 1000)
    assert (alone["occurrences"], alone["total_s"], alone["pct_of_wall"], alone["slowest_rank"]) == ([], 0, None, None)


def test_rank_summary_mfu_over_the_union_of_its_envelopes():
    """Rank a: occurrence 1 over 0..1000 with a kernel, occurrence 2 over 500..1500 without one. Its MFU
    over both is 2 x 1000 FLOPs over the union 0..1500 (1500 ns, not the 2000 ns sum), 1 GPU at 1 TFLOP/s:
    100 x 2000 / (1.5e-6 x 1e12) = 0.1333 %; one occurrence with kernels is enough to have a figure."""
    from pipeline.analysis import rankstats
    (row,) = rankstats.summary([_rank(1, "a", 0, 1000), _rank(2, "a", 500, 1000, kernels=0)], 1000, 1, 1.0, {})
    assert row["mfu_pct_wall"] == pytest.approx(100 * 2000 / (1500e-9 * 1e12))
    (none,) = rankstats.summary([_rank(1, "a", 0, 1000, kernels=0)], 1000, 1, 1.0, {})
    assert none["mfu_pct_wall"] is None


def test_rank_spread_over_occurrences_by_hand():
    """docs/figures.md §5 asks for the per-rank spread, slowest minus fastest rank. Walls per occurrence: 1: a 1000,
    b 1300, c 1100 (300); 2: a 1000, b 1200 (200); 3: a 1500, b 1000, c 1400 (500); 4: a alone (no spread, not
    counted). Over occurrences 1-3: min 200, median 300, max 500 ns. With no occurrence two ranks had: null."""
    from pipeline.analysis import rankstats
    rows = [_rank(1, "a", 0, 1000), _rank(1, "b", 0, 1300), _rank(1, "c", 0, 1100),
            _rank(2, "a", 5000, 1000), _rank(2, "b", 5000, 1200),
            _rank(3, "a", 10000, 1500), _rank(3, "b", 10000, 1000), _rank(3, "c", 10000, 1400),
            _rank(4, "a", 15000, 9000)]
    got = rankstats.spread(rankstats.summary(rows, 1000, 3, 1.0, {}), rows)["wall_spread_s"]
    assert {k: round(v * NS) for k, v in got.items()} == {"min": 200, "median": 300, "max": 500}
    alone = [_rank(1, "a", 0, 1000), _rank(2, "b", 5000, 1000)]
    assert rankstats.spread(rankstats.summary(alone, 1000, 2, 1.0, {}), alone)["wall_spread_s"] == {
        "min": None, "median": None, "max": None}


def test_report_shows_the_rank_spread_over_occurrences(four_ranks):
    """The ranks section prints the spread's min, median and max (result.json's rank_spread.wall_spread_s, the
    per-occurrence rank_spread_s summarised), in both formats."""
    from pipeline.report.fmt import Column
    from pipeline.report.render import render_all
    res, _ = four_ranks
    spreads = sorted(o["rank_spread_s"] for o in res["occurrences"])
    assert res["rank_spread"]["wall_spread_s"] == {"min": spreads[0], "median": statistics.median(spreads),
                                                  "max": spreads[-1]}
    col = Column([statistics.median(spreads)], "s")
    cells = [col(v) for v in (spreads[0], statistics.median(spreads), spreads[-1])]
    files = render_all(res)
    label = col.head("slowest − fastest rank wall, over occurrences")
    assert f"| {label} | {cells[0]} | {cells[1]} | {cells[2]} |" in files["report.md"]
    assert (f'<tr><td>{label}</td><td class="n">{cells[0]}</td><td class="n">{cells[1]}</td>'
            f'<td class="n">{cells[2]}</td></tr>') in files["report.html"]


@pytest.mark.parametrize("offset, misaligned", [(5000, False), (5001, True)])
def test_misaligned_is_more_than_half_a_period(offset, misaligned):
    """Period 10000 ns: a rank exactly half a period (5000 ns) from the other's start is not flagged."""
    from pipeline.analysis import rankstats
    rows = [_rank(1, "a", 0, 1000, period=10000), _rank(2, "a", 10000, 1000),
            _rank(1, "b", offset, 1000, period=10000), _rank(2, "b", 10000 + offset, 1000)]
    codes = [w["code"] for w in rankstats.alignment_warnings(rows, 1, 2)]
    assert codes == (["rank_misaligned", "rank_misaligned"] if misaligned else [])


def test_missing_occurrences_say_what_was_asked():
    """`occurrences: {first: 200}` on a region with 34 occurrences was reported as asking for '(200..34)', a
    range the user never wrote and that runs backwards; without `last`, the message quotes `first` alone."""
    def asked(first: int, last: int | None) -> str:
        region = Region("step", "exact", None, first, last, "process", "step")
        with pytest.raises(MissingOccurrences) as err:
            occurrence_range_of("t.sqlite", region, {"144": 33, "145": 34}, "pid ")
        return str(err.value)

    assert asked(200, None) == ("t.sqlite: region 'step' has fewer occurrences than asked (first: 200); per process: "
                                "pid 144: 33, pid 145: 34. Fix region.occurrences in the job")
    assert "than asked (30..40);" in asked(30, 40)


def test_small_rank_files_are_built_on_one_duckdb_thread(tmp_path, monkeypatch, every_core):
    """Issue 34: each of several small files builds its window on one DuckDB thread (statements of a few thousand
    rows pay for a second thread in CPU, not in time); the connection has its threads back for the analysis. So
    does their window built as one (analysis/merged.py), and each file's when they are built one by one."""
    from pipeline.analysis import merged, ranks
    rank_files(tmp_path, [{"first_pid": 4000}, {"first_pid": 4001}])
    seen: list[int] = []
    real = ranks.build_window

    def spy(trace, *args, **kwargs):
        seen.append(int(trace.con.execute("SELECT current_setting('threads')").fetchone()[0]))
        return real(trace, *args, **kwargs)
    monkeypatch.setattr(ranks, "build_window", spy)
    monkeypatch.setattr(merged, "build_window", spy)
    for as_one, threads in ((True, [1]), (False, [1, 1])):
        monkeypatch.setattr(merged, "SMALL_BYTES", merged.SMALL_BYTES if as_one else 0)
        seen.clear()
        ts = ranks.open_set(sorted(tmp_path.glob("r*.sqlite")))
        try:
            before = ts.con.execute("SELECT current_setting('threads')").fetchone()[0]
            ranks.build_set(ts, load_job(job(tmp_path, "r*.sqlite", num_gpus=2, occurrences={"first": 1})), [])
            assert seen == threads
            assert ts.con.execute("SELECT current_setting('threads')").fetchone()[0] == before
        finally:
            ts.close()


def test_small_rank_files_without_a_cache_are_read_into_one_table_per_raw_view(tmp_path):
    """Issue 34: several small files' rows go into raw_*__all with their index in `file` (open.attach pool), not
    nine temp tables per file, which made every listing of the catalog slower with each file read; each file's
    raw views read its rows there as they read the file opened alone, and a table a file lacks adds no rows."""
    from pipeline.analysis import ranks
    from pipeline.trace.open import RAW_TABLES, open_trace
    rank_files(tmp_path, [{"first_pid": 4000}, {"first_pid": 4001, "seed": 3}])
    paths = sorted(tmp_path.glob("r*.sqlite"))
    ts = ranks.open_set(paths)
    try:
        temp = {name for (name,) in ts.con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}
        assert temp == {f"{raw}__all" for raw in RAW_TABLES}
        for i, path in enumerate(paths):
            ts.use(i)
            alone = open_trace(path)
            try:
                for raw in RAW_TABLES:
                    assert ts.con.execute(f"SELECT * FROM {raw}").fetchall() == \
                        alone.con.execute(f"SELECT * FROM {raw}").fetchall(), (i, raw)
            finally:
                alone.con.close()
        assert ts.con.execute("SELECT count(*) FROM raw_memcpy__all").fetchone()[0] == 0
    finally:
        ts.close()
