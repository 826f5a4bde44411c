"""window_unions.sql: every grouping of one sorted pass against sort-and-merge of the rows it should hold.

Kernel groupings (kernel = 1) must leave memory operations out; class groupings keep them.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from pipeline.trace.synth import union_ns
from tests.sqlfixtures import plant

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
