"""attribute_launch.sql: process and thread attribution through the launch call (docs/figures.md §4)."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain, queries
from pipeline.job.config import Region
from tests.measuring import measure

A_MAIN, A_WORKER, B_MAIN = gtid(100, 100), gtid(100, 101), gtid(200, 200)
A, B = gpid(100), gpid(200)


def _export() -> Export:
    e = Export()
    e.range(1000, 2000, A_MAIN, "step")
    e.range(3000, 4000, A_MAIN, "step")
    e.range(1000, 2000, B_MAIN, "step")
    # process 100
    e.launch(1000, A_MAIN, 1)                                    # at the range start: inside
    e.launch(1002, A_MAIN, 1, name="cudaLaunchKernel_v7000")     # the same launch recorded twice
    e.kernel(1100, 1300, A, 1, name="k1")
    e.launch(1500, A_WORKER, 2)                                  # autograd thread
    e.kernel(1510, 1700, A, 2, name="k2")
    e.launch(2000, A_MAIN, 3)                                    # at the range end: inside
    e.kernel(2010, 2500, A, 3, name="k3")
    e.launch(2001, A_MAIN, 4)                                    # 1 ns after the end: outside
    e.kernel(2010, 2100, A, 4, name="k4")
    e.kernel(1200, 1250, A, 6, name="k6")                        # no launch row at all
    e.launch(3500, A_MAIN, 5)
    e.kernel(3600, 4200, A, 5, stream=13, name="k5")             # occurrence 2, ends after the range
    # process 200 reuses correlationIds 1 and 2
    e.launch(1500, B_MAIN, 1)
    e.kernel(1600, 1800, B, 1, device=1, name="b1")
    e.launch(2500, B_MAIN, 2)                                    # outside B's range; A's corr 2 is inside A's
    e.kernel(2600, 2700, B, 2, device=1, name="b2")
    e.launch(1100, B_MAIN, 7)
    e.kernel(1200, 1300, B, 7, device=1, name="b7")
    return e


def _attributed(trace, first: int, last: int, same_thread: bool) -> list[tuple]:
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    queries.run(trace.con, "select_occurrences", first=first, last=last)
    chain.run(trace.con, {"nccl_ranges", "attribute_launch"}, same_thread=same_thread)
    return trace.con.execute("SELECT occurrence, global_pid, device_id, start_ns, end_ns, s.value "
                             "FROM attributed JOIN raw_strings AS s ON s.id = name_id "
                             "ORDER BY occurrence, global_pid, start_ns, end_ns").fetchall()


def test_process_attribution(open_export) -> None:
    trace = open_export(_export())
    assert _attributed(trace, 1, 2, same_thread=False) == [
        (1, A, 0, 1100, 1300, "k1"),              # once, despite two launch rows
        (1, A, 0, 1510, 1700, "k2"),
        (1, A, 0, 2010, 2500, "k3"),
        (1, B, 1, 1200, 1300, "b7"),
        (1, B, 1, 1600, 1800, "b1"),              # not A's k1, not b2 through A's launch of corr 2
        (2, A, 0, 3600, 4200, "k5"),              # not clipped: the whole kernel belongs to the step
    ]


def test_thread_attribution_drops_the_other_thread(open_export) -> None:
    trace = open_export(_export())
    names = [r[-1] for r in _attributed(trace, 1, 2, same_thread=True)]
    assert names == ["k1", "k3", "b7", "b1", "k5"]


def test_occurrence_range_selects(open_export) -> None:
    trace = open_export(_export())
    assert [r[-1] for r in _attributed(trace, 2, 2, same_thread=False)] == ["k5"]
    assert [r[-1] for r in _attributed(trace, 1, 1, same_thread=False)] == ["k1", "k2", "k3", "b7", "b1"]


def test_synthetic_counts_match_ground_truth(synth_trace, open_views) -> None:
    """Duplicate launch rows, a second thread and repeating correlationIds, planted by the generator."""
    path, truth = synth_trace(ranks=3, steps=4, kernels_per_step=30)
    trace = open_views(path)
    queries.run(trace.con, "region_ranges", name="train_step", match="exact", domain=None)
    for same_thread, key in ((False, "kernel_count"), (True, "thread_kernel_count")):
        queries.run(trace.con, "select_occurrences", first=1, last=4)
        chain.run(trace.con, {"nccl_ranges", "attribute_launch"}, same_thread=same_thread)
        counts = dict(trace.con.execute("SELECT occurrence, count(*) FROM attributed GROUP BY ALL").fetchall())
        assert counts == {o["index"]: o[key] for o in truth["occurrences"]}, key


def test_measure_passes_thread_attribution_through(synth_trace, open_views) -> None:
    """No real trace launches a range's kernels from another thread; the synthetic one does."""
    path, truth = synth_trace(ranks=2, steps=3, kernels_per_step=25)
    trace = open_views(path)
    m = measure(trace, Region(name="train_step", match="exact", domain=None, first=1, last=None,
                              attribution="thread", covers=1))
    assert m.attribution == "thread"
    assert [(o["kernel_count"], o["kernel_union_ns"]) for o in m.occurrences] == [
        (o["thread_kernel_count"], o["thread_kernel_union_ns"]) for o in truth["occurrences"]]
    assert all(o["thread_kernel_count"] < o["kernel_count"] for o in truth["occurrences"])


def test_partly_overlapping_ranges_share_the_launches_in_their_overlap(open_export) -> None:
    """Ranges of one process that overlap without nesting (here on two threads): a launch inside
    both belongs to both; one inside either only to that one; touching ends count as inside."""
    e = Export()
    e.range(0, 100, A_MAIN, "step")
    e.range(50, 150, A_WORKER, "step")
    e.range(150, 300, A_MAIN, "step")                 # starts where the second ends
    for corr, launch in ((1, 40), (2, 60), (3, 100), (4, 120), (5, 150), (6, 200), (7, 310)):
        e.launch(launch, A_MAIN if corr != 4 else A_WORKER, corr)
        e.kernel(400 + corr, 401 + corr, A, corr, name=f"k{corr}")
    trace = open_export(e)
    got = sorted((o, n) for o, *_, n in _attributed(trace, 1, 3, same_thread=False))
    assert got == [(1, "k1"), (1, "k2"), (1, "k3"), (2, "k2"), (2, "k3"), (2, "k4"), (2, "k5"),
                   (3, "k5"), (3, "k6")]
    # thread attribution: the second range is the worker's, so only its own launch (k4) is in it
    got = sorted((o, n) for o, *_, n in _attributed(trace, 1, 3, same_thread=True))
    assert got == [(1, "k1"), (1, "k2"), (1, "k3"), (2, "k4"), (3, "k5"), (3, "k6")]


def test_a_launch_belongs_only_to_its_own_process_ranges(open_export) -> None:
    """A launch inside another process's range is not that range's work: B's launch after B's own range
    ended, while A's longer range is still open, and a process C with no range at all. A single launch
    row exactly at the first range's start (the envelope's edge) is inside."""
    c_main, c = gtid(300, 300), gpid(300)
    e = Export()
    e.range(1000, 3000, A_MAIN, "step")
    e.range(1000, 2000, B_MAIN, "step")
    e.launch(1000, A_MAIN, 1)
    e.kernel(1100, 1200, A, 1, name="a1")
    e.launch(2500, B_MAIN, 2)                                    # inside A's range only
    e.kernel(2600, 2700, B, 2, device=1, name="b2")
    e.launch(1500, c_main, 3)                                    # inside both, C has no range
    e.kernel(1600, 1700, c, 3, device=2, name="c3")
    trace = open_export(e)
    assert _attributed(trace, 1, 1, same_thread=False) == [(1, A, 0, 1100, 1200, "a1")]


def test_a_kernel_with_a_negative_process_id_is_kept_for_the_refusal(open_export) -> None:
    """A kernel row inside the envelope whose globalPid is negative (the sign bit set on B's 200 << 24) has no
    process: no launch matches it, so it fell out of `attributed` and `unlaunched` without a word. The query's
    row gives the first such row; a sound export gives NULLs and the count of unlaunched kernels as before
    (k6 of process 100: no launch row, inside its process's range; k4 runs after it)."""
    e = _export()
    sound = open_export(e)
    queries.run(sound.con, "region_ranges", name="step", match="exact", domain=None)
    queries.run(sound.con, "select_occurrences", first=1, last=2)
    (row,) = chain.run(sound.con, {"nccl_ranges", "attribute_launch"}, same_thread=False)["attribute_launch"]
    assert row == {"unlaunched": 1, "negative_start_ns": None, "negative_device_id": None,
                   "negative_correlation_id": None, "negative_global_pid": None, "negative_is_graph": False}
    negative = B - 2 ** 63
    assert negative == (200 << 24) - 9_223_372_036_854_775_808 < 0
    e.kernel(1900, 1950, negative, 9, device=1, name="lost")
    e.kernel(1400, 1450, negative, 8, device=1, name="lost")     # the earlier of the two is named
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    queries.run(trace.con, "select_occurrences", first=1, last=2)
    (row,) = chain.run(trace.con, {"nccl_ranges", "attribute_launch"}, same_thread=False)["attribute_launch"]
    assert row == {"unlaunched": 1, "negative_start_ns": 1400, "negative_device_id": 1,
                   "negative_correlation_id": 8, "negative_global_pid": negative, "negative_is_graph": False}


def test_a_kernel_gets_the_communicator_of_the_nccl_call_that_launched_it(open_export) -> None:
    """Process 100, thread 100, one step 0..10000; NCCL domain 1. Launch 1 (at 1050) inside ncclAllReduce 1000..1100
    with communicator 11; launch 2 (at 2050) inside ncclGroupEnd 2000..2100, which names none, after ncclSend
    1900..1950 with communicator 12 ended; launch 3 (at 1060) on the autograd thread, not the range's; launch 4
    (at 3200) after ncclBroadcast 3000..3100 (communicator 13) ended; launch 5 (at 4000) inside ncclAllReduce
    3950..4050 with a communicator above 2**63."""
    big = 2 ** 64 - 5
    e = Export()
    e.range(0, 10000, A_MAIN, "step")
    e.domain(A_MAIN, 1, "NCCL")
    e.nccl(1000, 1100, A_MAIN, "ncclAllReduce", 11)
    e.nccl(1900, 1950, A_MAIN, "ncclSend", 12)
    e.nccl(2000, 2100, A_MAIN, "ncclGroupEnd", None)
    e.nccl(3000, 3100, A_MAIN, "ncclBroadcast", 13)
    e.nccl(3950, 4050, A_MAIN, "ncclAllReduce", big)
    for corr, tid, launch in ((1, A_MAIN, 1050), (2, A_MAIN, 2050), (3, A_WORKER, 1060), (4, A_MAIN, 3200),
                              (5, A_MAIN, 4000)):
        e.launch(launch, tid, corr)
        e.kernel(launch + 100, launch + 200, A, corr, name=f"ncclKernel{corr}")
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    queries.run(trace.con, "select_occurrences", first=1, last=1)
    chain.run(trace.con, {"nccl_ranges", "attribute_launch"}, same_thread=False)
    assert trace.con.execute("SELECT correlation_id, comm_key FROM attributed ORDER BY correlation_id").fetchall() == [
        (1, 11), (2, None), (3, None), (4, None), (5, big)]
