"""window_unions.sql: every grouping of one sorted pass against sort-and-merge of the rows it should hold.

Kernel groupings (kernel = 1) must leave memory operations out; class groupings keep them.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from pipeline.trace import queries
from pipeline.trace.synth import union_ns
from tests.sqlfixtures import classified, plant

CLASSES = ("gemm", "communication", "memory", "other")


@pytest.mark.slow  # a random oracle: 2,000 rows, every grouping
def test_every_grouping_against_sort_andmerge():
    rng = random.Random(20261130)
    rows = []
    for _ in range(2000):
        s = rng.randrange(0, 100_000)
        cls = rng.choice(CLASSES)
        rows.append((rng.randint(1, 3), rng.choice([10, 20, None]), rng.choice([0, 1, None]),
                     "[CUDA memcpy]" if cls == "memory" else f"k_{cls}", cls, s, s + rng.choice([0, 1, 40, 900])))
    con = plant(rows)
    ids = dict(con.execute("SELECT class, class_id FROM class_ids").fetchall())
    got = {(scope, k1, k2, k3): (u, total, n, last) for scope, k1, k2, k3, u, total, n, last in con.execute(
        "SELECT scope, k1, k2, k3, union_ns, sum_ns, interval_count, last_end_ns FROM window_unions").fetchall()}
    keys = {  # scope -> the key of a row, as window_unions.sql states them (missing device / process: -1)
        "occurrence": lambda r: (r["kernel"], r["occ"], None),
        "device": lambda r: (r["kernel"], r["occ"], r["dev"]),
        "rank": lambda r: (r["kernel"], r["occ"], r["pid"]),
        "total": lambda r: (r["kernel"], None, None),
        "total_device": lambda r: (r["kernel"], r["dev"], None),
        "part": lambda r: (r["kernel"], r["comm"], r["dev"]),
        "class": lambda r: (ids[r["class"]], None, None),
        "class_device": lambda r: (ids[r["class"]], r["dev"], None),
        "stream": lambda r: (r["kernel"], r["dev"], -1),           # plant() gives no stream: -1
    }
    want: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for o, pid, dev, _, cls, s, e in rows:
        r = {"kernel": int(cls != "memory"), "occ": o, "dev": -1 if dev is None else dev,
             "pid": -1 if pid is None else pid, "comm": int(cls == "communication"), "class": cls}
        for scope, key in keys.items():
            want[(scope, *key(r))].append((s, e))
    assert set(got) == set(want)
    for key, intervals in want.items():
        assert got[key] == (union_ns(intervals), sum(e - s for s, e in intervals), len(intervals),
                            max(e for _, e in intervals)), key
    # kernel groupings hold the kernels only; class groupings the copies too
    kernels = [(s, e) for *_, cls, s, e in rows if cls != "memory"]
    assert got[("total", 1, None, None)][2] == len(kernels) < len(rows)
    assert sum(n for (scope, *_), (_, _, n, _) in got.items() if scope == "class") == len(rows)


STREAMS = "SELECT scope, k2, k3, union_ns, sum_ns, interval_count FROM window_unions WHERE scope = 'stream' AND k1 = 1"


def test_kernels_per_device_and_stream_by_hand():
    con = classified([(1, 0, "gemm", "gemm", 0, 10), (1, 0, "add", "elementwise", 5, 20),
                      (1, 0, "nccl", "communication", 0, 30), (2, 0, "gemm", "gemm", 100, 110),
                      (1, 1, "gemm", "gemm", 0, 7), (1, 0, "[CUDA memcpy]", "memory", 0, 50),
                      (1, 0, "nostream", "gemm", 40, 44)],
                     streams=[7, 7, 13, 7, 7, 7, None])      # classified() runs window_unions.sql
    got = con.execute(STREAMS + " ORDER BY k2, k3").fetchall()
    # device 0 stream 7: 0..10, 5..20 (occurrence 1) and 100..110 (occurrence 2) -> 20 + 10 = 30, sum 10 + 15 + 10;
    # the memcpy on stream 7 is no kernel. Stream 13: 30. No stream: -1. Device 1 stream 7: 7.
    assert got == [("stream", 0, -1, 4, 4, 1), ("stream", 0, 7, 30, 35, 3), ("stream", 0, 13, 30, 30, 1),
                   ("stream", 1, 7, 7, 7, 1)]
    memory = con.execute("SELECT k2, k3, union_ns FROM window_unions WHERE scope = 'stream' AND k1 = 0").fetchall()
    assert memory == [(0, 7, 50)]                           # the memcpy's own group, which stream_times.sql leaves out


def test_a_shared_window_cut_gives_each_job_its_own_stream_unions():
    """A window of occurrences 1..3 sorted once (analysis/sharing.py), cut to a job's occurrences: the job's own
    window's unions. Stream 7 of device 0: [100 k, 100 k + 30) and [100 k + 20, 100 k + 50) in occurrence k, and
    occurrence 2's kernel runs on to [250, 320), into occurrence 3's (so the occurrences of a stream overlap)."""
    rows = [(k, 0, "gemm", "gemm", 100 * k + a, 100 * k + b) for k in (1, 2, 3) for a, b in ((0, 30), (20, 50))]
    rows += [(2, 0, "add", "elementwise", 250, 320), (3, 1, "gemm", "gemm", 300, 310)]
    streams = [7] * 6 + [7, 9]
    read = STREAMS + " ORDER BY ALL"
    whole = classified(rows, streams=streams)
    done = queries.sort_unions(whole, "window_unions", "occurrence", comm_class="communication")
    for first, last in ((1, 3), (2, 2), (2, 3), (3, 3)):
        queries.store_cut(whole, "window_unions", done, first, last)
        kept = [(r, s) for r, s in zip(rows, streams) if first <= r[0] <= last]
        own = classified([r for r, _ in kept], streams=[s for _, s in kept])
        assert whole.execute(read).fetchall() == own.execute(read).fetchall(), (first, last)
    # the last cut, occurrence 3, by hand: device 0 stream 7: [300, 330) and [320, 350), union 50, sum 60
    assert whole.execute(read).fetchall()[0] == ("stream", 0, 7, 50, 60, 2)
