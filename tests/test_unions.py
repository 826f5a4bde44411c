"""trace/unions.py: the union algorithm every union query uses, by hand and against sort-and-merge."""

from __future__ import annotations

import random

import duckdb
import numpy as np

from pipeline.trace import unions
from pipeline.trace.synth import merge, union_ns


def per_group(rows: list[tuple[int, int, int]], spec: str = "g = g") -> list[tuple]:
    """(group, start, end) rows -> (group, union, sum, count, last end) per group, by group."""
    cols = {"g": np.array([g for g, _, _ in rows], dtype=np.int64),
            "start_ns": np.array([s for _, s, _ in rows], dtype=np.int64),
            "end_ns": np.array([e for _, _, e in rows], dtype=np.int64)}
    out = unions.compute(cols, unions.parse(spec))
    keys = [None if k == unions.MISSING else int(k) for k in out["k1"]]
    return sorted(zip(keys, out["union_ns"], out["sum_ns"], out["interval_count"], out["last_end_ns"]),
                  key=lambda r: (r[0] is None, r[0] or 0))


def test_overlap_touch_gap_and_groups_by_hand():
    # 1: [0,10) and [5,20) overlap -> 0-20 (sum 10+15); [20,25) touches -> merges: 25;
    #    [30,31) after a gap -> +1.  2: its own group, same times, no merging with 1.
    rows = [(1, 0, 10), (1, 5, 20), (1, 20, 25), (1, 30, 31), (2, 0, 3)]
    assert per_group(rows) == [(1, 26, 31, 4, 31), (2, 3, 3, 1, 3)]


def test_running_maximum_not_just_the_previous_interval():
    # [0,100) covers [10,20); [50,60) starts before 100, so it adds nothing.
    assert per_group([(1, 0, 100), (1, 10, 20), (1, 50, 60)]) == [(1, 100, 120, 3, 100)]


def test_equal_starts_in_any_order():
    assert per_group([(1, 5, 6), (1, 5, 30), (1, 5, 10), (1, 30, 31)]) == [(1, 26, 32, 4, 31)]


def test_several_groupings_and_a_total_from_one_input():
    rows = [(1, 0, 10), (2, 5, 20), (1, 30, 40)]
    assert per_group(rows, "g = g; all =") == [(1, 20, 20, 2, 40), (2, 15, 15, 1, 20), (None, 30, 35, 3, 40)]


def test_composite_keys_do_not_collide():
    cols = {"a": np.array([1, 1, 2, 2]), "b": np.array([2, 1, 1, 2]),
            "start_ns": np.array([0, 0, 0, 0]), "end_ns": np.array([1, 2, 3, 4])}
    out = unions.compute(cols, unions.parse("ab = a, b"))
    assert sorted(zip(out["k1"], out["k2"], out["union_ns"])) == [(1, 1, 2), (1, 2, 1), (2, 1, 3), (2, 2, 4)]


def test_spans_too_wide_to_lift_fall_back_to_ranks():
    # 2**61 ns apart: group index x span no longer fits in int64, so running maxima use ranks
    big = 1 << 61
    assert per_group([(1, 0, 10), (1, 5, 20), (2, big, big + 4), (2, big + 2, big + 3)]) == [
        (1, 20, 25, 2, 20), (2, 4, 5, 2, big + 4)]


def test_empty_input():
    assert per_group([]) == []


def test_random_against_sort_and_merge():
    rng = random.Random(7)
    rows = [(rng.randint(1, 4), s, s + rng.choice([0, 1, 50, 400])) for s in
            (rng.randint(0, 20_000) for _ in range(3000))]
    got = per_group(rows)
    assert [g for g, *_ in got] == [1, 2, 3, 4]
    for g, union, total, count, last in got:
        mine = sorted((s, e) for k, s, e in rows if k == g)
        assert (union, total, count, last) == (union_ns(mine), sum(e - s for s, e in mine),
                                              len(mine), max(e for _, e in mine))


def _random_window(rng: random.Random, n: int, apart: bool = False, classes: int = 3) -> dict[str, np.ndarray]:
    """Occurrences 1..6 whose intervals overlap each other's (or, `apart`, each in its own time block),
    many equal starts, two devices, `classes` classes."""
    occ = [rng.randint(1, 6) for _ in range(n)]
    start = [1000 * o + rng.choice([0, 0, 100, rng.randint(0, 900) if apart else rng.randint(-1500, 1500)])
             for o in occ]
    return {"occurrence": np.array(occ, dtype=np.int64), "start_ns": np.array(start, dtype=np.int64),
            "end_ns": np.array([s + rng.choice([0, 1, 50, 100 if apart else 700]) for s in start], dtype=np.int64),
            "device_id": np.array([rng.randint(0, 1) for _ in range(n)], dtype=np.int64),
            "class_id": np.array([rng.randint(1, classes) for _ in range(n)], dtype=np.int64)}


def test_a_cut_of_one_sort_equals_computing_the_cut_rows():
    """What a job of a shared window gets (sort once, cut per job) is what its own rows give: groupings
    without the occurrence added up per occurrence (occurrences apart) or cut from their sorted rows
    (overlapping), with few groups and with many (lifted)."""
    spec = unions.parse("occurrence = occurrence; device = occurrence, device_id; total = ; "
                        "total_device = device_id; class_device = class_id, device_id")
    for apart, classes in ((False, 3), (True, 3), (False, 300), (True, 300)):
        rows = _random_window(random.Random(11), 4000, apart, classes)
        done = unions.sort({k: v.copy() for k, v in rows.items()}, spec, by="occurrence")
        assert (set(done.added), set(done.ordered)) == (({2, 3, 4}, set()) if apart else (set(), {2, 3, 4}))
        for first, last in ((1, 6), (2, 4), (5, 5), (6, 6), (7, 9), (-3, 0)):
            keep = (rows["occurrence"] >= first) & (rows["occurrence"] <= last)
            alone = unions.compute({k: v[keep] for k, v in rows.items()}, spec)
            got = unions.cut(done, first, last)
            assert got.keys() == alone.keys()
            for name in alone:
                assert np.array_equal(got[name], alone[name]), (apart, classes, first, last, name)
            assert (first, last) in ((7, 9), (-3, 0)) or len(alone["scope"]) > 0


def test_islands_against_sort_and_merge():
    rng = random.Random(5)
    rows = [(rng.randint(1, 3), s, s + rng.choice([0, 1, 50, 400])) for s in
            (rng.randint(0, 20_000) for _ in range(2000))]
    cols = {"g": np.array([g for g, _, _ in rows], dtype=np.int64),
            "start_ns": np.array([s for _, s, _ in rows], dtype=np.int64),
            "end_ns": np.array([e for _, _, e in rows], dtype=np.int64)}
    out = unions.islands(cols, unions.parse("g = g; all ="))
    got: dict[tuple, list] = {}
    for scope, k1, s, e in zip(out["scope"], out["k1"], out["start_ns"], out["end_ns"]):
        got.setdefault((str(scope), None if k1 == unions.MISSING else int(k1)), []).append((int(s), int(e)))
    for (scope, g), islands in got.items():
        assert islands == merge([(s, e) for k, s, e in rows if g is None or k == g]), (scope, g)
    assert set(got) == {("g", 1), ("g", 2), ("g", 3), ("all", None)}


def _brute(cols: dict[str, np.ndarray], spec: str) -> dict[str, list]:
    """Every grouping's groups by sort-and-merge in Python, in the order `compute` gives them (scopes as
    listed, groups by key): a row ending before it starts adds nothing to a union but counts in the rest."""
    n = len(cols["start_ns"])
    out: dict[str, list] = {n_: [] for n_ in ("scope", *unions.KEYS, "union_ns", "sum_ns", "interval_count",
                                              "last_end_ns")}
    for g in unions.parse(spec):
        groups: dict[tuple, list[tuple[int, int]]] = {}
        for i in range(n):
            key = tuple(int(cols[c][i]) for c in g.columns)
            groups.setdefault(key, []).append((int(cols["start_ns"][i]), int(cols["end_ns"][i])))
        for key in sorted(groups):
            iv = groups[key]
            row = [g.scope, *key, *[unions.MISSING] * (3 - len(key)), union_ns([(s, e) for s, e in iv if e >= s]),
                   sum(e - s for s, e in iv), len(iv), max(e for _, e in iv)]
            for name, value in zip(out, row):
                out[name].append(value)
    return out


def _same(got: dict[str, np.ndarray], want: dict[str, list]) -> None:
    assert list(got) == list(want)
    for name in want:
        assert [str(v) if name == "scope" else int(v) for v in got[name]] == want[name], name


def _random_rows(rng: random.Random, n: int, span: int, keys: dict[str, int], base: int = 0) -> dict[str, np.ndarray]:
    """n rows, each key column drawn from as many values as `keys` says (spread far apart, some
    negative), starts in base .. base + span with ties, lengths zero, touching, long, or negative."""
    start = [base + rng.choice([0, span, rng.randint(0, span), rng.randint(0, span)]) for _ in range(n)]
    cols = {c: np.array([rng.randrange(k) * 7_919_000_003 - 5 for _ in range(n)], dtype=np.int64)
            for c, k in keys.items()}
    length = [rng.choice([0, 1, 5, rng.randint(0, min(span // 50, 1 << 40) + 1), -3]) for _ in range(n)]
    cols["start_ns"] = np.array(start, dtype=np.int64)
    cols["end_ns"] = np.array([s + d for s, d in zip(start, length)], dtype=np.int64)
    return cols


def test_random_groupings_against_brute_force():
    """Few groups (swept one by one), many (lifted), spans so wide that the lifts come in chunks (each
    group its own beyond 2**63), one row: each against sort-and-merge."""
    spec = "a = a; ab = a, b; abc = a, b, c; all ="
    cases = [(300, 10_000, {"a": 3, "b": 2, "c": 2}, 0), (3000, 50_000, {"a": 5, "b": 9, "c": 4}, 0),
             (800, 1 << 58, {"a": 4, "b": 40, "c": 3}, 0),
             (1500, (1 << 63) + (1 << 61), {"a": 3, "b": 60, "c": 2}, -(3 << 61)),
             (1, 5, {"a": 1, "b": 1, "c": 1}, 7)]
    for seed, (n, span, keys, base) in enumerate(cases):
        rows = _random_rows(random.Random(seed), n, span, keys, base)
        _same(unions.compute({k: v.copy() for k, v in rows.items()}, unions.parse(spec)), _brute(rows, spec))


def test_keys_of_any_integer_type_or_boolean():
    rng = random.Random(4)
    rows = _random_rows(rng, 500, 5_000, {}, 0)
    rows |= {"a": np.array([rng.randint(0, 2) for _ in range(500)]), "b": np.array([rng.randint(0, 1) for _ in range(500)])}
    spec = "ab = a, b; b = b"
    want = _brute(rows, spec)
    for a_type in (np.int8, np.uint16, np.int32, np.int64):
        typed = {**rows, "a": rows["a"].astype(a_type), "b": rows["b"].astype(bool)}
        _same(unions.compute(typed, unions.parse(spec)), want)


def test_the_whole_int64_range_in_one_grouping():
    low, high = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    rows = {"g": np.array([1, 1, 2, 2, 3]), "start_ns": np.array([low, low + 5, high - 9, 0, high - 1]),
            "end_ns": np.array([low + 10, low + 20, high, 3, high])}
    spec = "g = g; all ="
    _same(unions.compute({k: v.copy() for k, v in rows.items()}, unions.parse(spec)), _brute(rows, spec))


def _steps(rng: random.Random, n: int, apart: bool) -> dict[str, np.ndarray]:
    """Occurrences 1..5 on devices 0..3 (process 100 + device); each occurrence in its own time block
    when `apart`, else the blocks overlap by a little."""
    occ = np.array([rng.randint(1, 5) for _ in range(n)], dtype=np.int64)
    dev = np.array([rng.randint(0, 3) for _ in range(n)], dtype=np.int64)
    start = occ * 10_000 - (0 if apart else 600) + np.array([rng.randint(0, 9_000) for _ in range(n)])
    end = np.minimum(start + np.array([rng.choice([0, 1, 40, 900]) for _ in range(n)]), occ * 10_000 + 9_000)
    return {"occurrence": occ, "device_id": dev, "pid": dev + 100, "start_ns": start,
            "end_ns": end if apart else start + 2_000}


def test_groupings_added_up_from_finer_ones_when_exact(monkeypatch):
    """A grouping whose groups are whole finer groups that do not overlap in time (occurrences apart on
    each device) is added up, not swept; a process that is a device's twin reuses the device's groups;
    overlapping occurrences are swept. Either way: the figures of sort-and-merge."""
    spec = ("device = occurrence, device_id; rank = occurrence, pid; total_device = device_id; "
            "occurrence = occurrence; total = ; other = pid")
    swept = []
    real = unions._sweep_groups
    monkeypatch.setattr(unions, "_sweep_groups", lambda *a: swept.append(1) or real(*a))
    for apart, sweeps in ((True, 2), (False, 4)):                # rank and other: twins of device, total_device
        swept.clear()
        rows = _steps(random.Random(3), 3000, apart)
        _same(unions.compute({k: v.copy() for k, v in rows.items()}, unions.parse(spec)), _brute(rows, spec))
        assert len(swept) == sweeps, apart


def test_islands_against_sort_and_merge_with_many_groups():
    rows = _random_rows(random.Random(9), 3000, 1 << 59, {"a": 400}, 0)
    forward = rows["end_ns"] >= rows["start_ns"]             # islands of rows ending before they start: undefined
    rows = {k: v[forward] for k, v in rows.items()}
    out = unions.islands({k: v.copy() for k, v in rows.items()}, unions.parse("a = a"))
    got: dict[int, list] = {}
    for k1, s, e in zip(out["k1"], out["start_ns"], out["end_ns"]):
        got.setdefault(int(k1), []).append((int(s), int(e)))
    for a in set(rows["a"].tolist()):
        mine = [(int(s), int(e)) for k, s, e in zip(rows["a"], rows["start_ns"], rows["end_ns"]) if k == a]
        assert got[a] == merge(mine), a
