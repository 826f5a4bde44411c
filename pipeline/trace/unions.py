"""Interval unions for every grouping at once, from one sorted copy (SEMANTICS §5 union algorithm).

A SQL file that declares `-- unions: scope = col, col; other = col; all =` selects integer
key columns plus start_ns and end_ns; queries.run hands its rows here (DuckDB's
fetchnumpy, no Python loop over rows) and stores one row per scope and group in the table
the file `creates`: scope, k1..k3 (the group's key values, NULL past its columns),
union_ns, sum_ns, interval_count, last_end_ns.

Why numpy and not a SQL window: a window sorts all rows again for every grouping, and the
report needs about ten groupings of the same kernels (per occurrence, device, rank, class,
overlap part, and each over all occurrences). Here the rows are sorted by start once; a
grouping is then a stable sort of integer keys (start order kept inside each group) and a
running maximum: each interval adds what it reaches beyond the running maximum end of the
ones before it in its group, max(0, end - max(start, covered_end)). Touching intervals merge,
and the order among equal starts does not change the sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KEYS = ("k1", "k2", "k3")
MISSING = np.iinfo(np.int64).min           # no key in this position (stored as NULL)
SPAN_LOOKUP = 1 << 20                      # keys spanning fewer values are coded by a lookup table (1 MB)


@dataclass(frozen=True)
class Grouping:
    scope: str
    columns: tuple[str, ...]


def parse(spec: str) -> list[Grouping]:
    """'a = x, y; b =' -> [Grouping('a', ('x', 'y')), Grouping('b', ())]."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        scope, _, cols = part.partition("=")
        columns = tuple(c.strip() for c in cols.split(",") if c.strip())
        if len(columns) > len(KEYS):
            raise ValueError(f"unions: scope {scope.strip()!r} has more than {len(KEYS)} key columns")
        out.append(Grouping(scope.strip(), columns))
    return out


def compute(rows: dict[str, np.ndarray], groupings: list[Grouping]) -> dict[str, np.ndarray]:
    """Per grouping and group: union, summed durations, count and last end, as table columns.

    Key columns of a group past its grouping's columns hold MISSING (NULL in the stored table).
    `rows` is consumed: each column is popped, so its fetched copy is freed once sorted (the
    window of an 8 M-kernel trace is 3.2 M rows per column). Keys may be any integer type (a
    query selecting 1-byte flags fetches 1 byte per row); they are held as codes of the smallest
    unsigned type their distinct count allows, not as 8-byte values.
    """
    start, end, codes, order = _by_start(rows, groupings)
    del order
    parts = []
    for g in groupings:
        group, perm = _order(g, codes, len(start))
        group = group[perm]                               # rebound: the unsorted codes are freed
        parts.append(_reduce(g, group, start[perm], end[perm], perm, codes))
    return _table(parts)


def islands(rows: dict[str, np.ndarray], groupings: list[Grouping]) -> dict[str, np.ndarray]:
    """Per grouping and group, the union as its separate stretches (islands): scope, keys, start_ns, end_ns.

    The same sweep as the union: a row starts an island when it starts after every earlier row
    of its group has ended (touching rows join), and the island ends at the latest end of its
    rows. Islands come by group, then by start. `rows` is consumed as by `compute`.
    """
    start, end, codes, _ = _by_start(rows, groupings)
    parts = []
    for g in groupings:
        group, perm = _order(g, codes, len(start))
        grp, s, e = group[perm], start[perm], end[perm]
        heads, before = _sweep(grp, s, e)
        new = np.zeros(len(grp), dtype=bool)
        new[heads] = True
        new |= s > before
        starts = np.flatnonzero(new)
        n = len(starts)
        part = {"scope": np.full(n, g.scope), "start_ns": s[starts],
                "end_ns": np.maximum.reduceat(e, starts) if n else e[:0]}
        parts.append({**part, **_keys(g, perm[starts], codes)})
    return _table(parts, ("scope", *KEYS, "start_ns", "end_ns"))


@dataclass
class Sorted:
    """A window's intervals sorted once, for the unions of any run of its occurrences (`cut`).

    A batch's jobs share one window (analysis/sharing.py) and each needs the unions of its own
    occurrences. A grouping keyed by the occurrence (each group inside one occurrence) is computed
    once, whole, and cut by that key. Any other keeps its rows in group-then-start order (`perm`),
    with each row's group and occurrence in that order: the rows of some occurrences, taken in
    that order, are already in the order `compute` would sort them into, so a cut needs no sort.
    """

    groupings: list[Grouping]
    start: np.ndarray
    end: np.ndarray
    codes: dict[str, tuple[np.ndarray, np.ndarray]]
    whole: dict[int, tuple[int, dict[str, np.ndarray]]]                 # grouping -> (key position, its unions)
    ordered: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]        # grouping -> (group, perm, occurrence)


def sort(rows: dict[str, np.ndarray], groupings: list[Grouping], by: str) -> Sorted:
    """Sort once for `cut`; `by` is the occurrence column (its values are what a cut keeps)."""
    start, end, codes, order = _by_start(rows, groupings, keep=by)
    occurrence = _compact(np.asarray(rows.pop(by), dtype=np.int64)[order])
    done = Sorted(groupings, start, end, codes, {}, {})
    for i, g in enumerate(groupings):
        group, perm = _order(g, codes, len(start))
        if by in g.columns:
            done.whole[i] = (g.columns.index(by), _reduce(g, group[perm], start[perm], end[perm], perm, codes))
        else:
            done.ordered[i] = (_compact(group[perm]), _compact(perm), occurrence[perm])
    return done


def cut(done: Sorted, first: int, last: int) -> dict[str, np.ndarray]:
    """What `compute` gives for the rows of occurrences first..last, without sorting them again."""
    parts = []
    for i, g in enumerate(done.groupings):
        if i in done.whole:
            position, table = done.whole[i]
            keys = table[KEYS[position]]
            keep = (keys >= first) & (keys <= last)
            parts.append({name: column[keep] for name, column in table.items()})
            continue
        group, perm, occurrence = done.ordered[i]
        keep = (occurrence >= first) & (occurrence <= last)
        rows = perm[keep].astype(np.int64)
        parts.append(_reduce(g, group[keep], done.start[rows], done.end[rows], rows, done.codes))
    return _table(parts)


def _by_start(rows: dict[str, np.ndarray], groupings: list[Grouping], keep: str | None = None) -> tuple:
    """start, end and each key column's codes in start order (stable), and that order."""
    start = np.asarray(rows.pop("start_ns"), dtype=np.int64)
    order = np.argsort(start, kind="stable")
    start = start[order]
    end = np.asarray(rows.pop("end_ns"), dtype=np.int64)[order]
    columns = dict.fromkeys(c for g in groupings for c in g.columns)
    codes = {c: _codes(np.asarray(rows[c] if c == keep else rows.pop(c))[order]) for c in columns}
    return start, end, codes, order


UNION_COLUMNS = ("scope", *KEYS, "union_ns", "sum_ns", "interval_count", "last_end_ns")


def _table(parts: list[dict[str, np.ndarray]], names: tuple[str, ...] = UNION_COLUMNS) -> dict[str, np.ndarray]:
    if not parts:
        return {n: np.array([], dtype=str if n == "scope" else np.int64) for n in names}
    return {n: np.concatenate([p[n] for p in parts]) for n in names}


def _compact(values: np.ndarray) -> np.ndarray:
    """int32 when the values fit: a shared window keeps three such arrays per grouping."""
    if values.dtype.itemsize <= 4:
        return values
    fits = not len(values) or (values.min() >= np.iinfo(np.int32).min and values.max() <= np.iinfo(np.int32).max)
    return values.astype(np.int32) if fits else values


def _codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values as int64, dense code of each row): computed once per key column, shared by groupings.

    Keys spanning few values (flags, classes, occurrences, devices) are coded by a table lookup,
    linear; others (process keys are 48-bit) by a sort.
    """
    if len(values) and int(values.max()) - int(values.min()) < SPAN_LOOKUP:
        low = int(values.min())
        offset = values.astype(np.int64) - low
        present = np.zeros(int(offset.max()) + 1, dtype=bool)
        present[offset] = True
        distinct = np.flatnonzero(present) + low
        code = (np.cumsum(present) - 1).astype(_code_type(len(distinct)))[offset]
    else:
        distinct, code = np.unique(values, return_inverse=True)
    return distinct.astype(np.int64), code.reshape(-1).astype(_code_type(len(distinct)), copy=False)


def _code_type(distinct: int) -> type:
    """The smallest unsigned type holding codes 0 .. distinct - 1."""
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if distinct <= np.iinfo(t).max + 1)


def _order(g: Grouping, codes: dict[str, tuple[np.ndarray, np.ndarray]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group (a dense code of its key tuple, in key order) and the rows by group, start order kept."""
    group, size = np.zeros(n, dtype=np.int64), 1
    for c in g.columns:
        distinct, code = codes[c]
        if size * len(distinct) >= 1 << 62:               # keep the combined code within int64
            _, group = np.unique(group, return_inverse=True)
            size = int(group.max()) + 1
        group *= len(distinct)
        group += code
        size *= len(distinct)
    if size <= 1 << 16:                                   # 16-bit keys get numpy's radix sort (linear)
        group = group.astype(np.uint16)
    return group, np.argsort(group, kind="stable")        # stable: start order kept within a group


def _reduce(g: Grouping, grp: np.ndarray, s: np.ndarray, e: np.ndarray, rows: np.ndarray,
            codes: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """One grouping's unions from its rows in group-then-start order; `rows` says where each row's keys are.

    `s` is the caller's own copy and is overwritten (the window's arrays are 25 MB each at 8 M kernels).
    """
    heads, gain = _sweep(grp, s, e)                       # covered before each row, turned into its gain
    np.maximum(gain, s, out=gain)
    np.subtract(e, gain, out=gain)
    np.maximum(gain, 0, out=gain)
    np.subtract(e, s, out=s)                              # durations
    n = len(heads)
    out = {"scope": np.full(n, g.scope),
           "union_ns": np.add.reduceat(gain, heads) if n else gain[:0],
           "sum_ns": np.add.reduceat(s, heads) if n else gain[:0],
           "interval_count": np.diff(np.append(heads, len(grp))).astype(np.int64),
           "last_end_ns": np.maximum.reduceat(e, heads) if n else gain[:0]}
    return {**out, **_keys(g, rows[heads], codes)}


def _sweep(grp: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row of each group, the latest end of the group's rows before each row: its own start for a first)."""
    first = np.ones(len(grp), dtype=bool)
    first[1:] = grp[1:] != grp[:-1]
    heads = np.flatnonzero(first)
    index = np.cumsum(first)
    index -= 1
    before = _running_max_per_group(e, index)             # covered so far, then shifted by one row
    del index
    before[1:] = before[:-1].copy()
    before[heads] = s[heads]
    return heads, before


def _keys(g: Grouping, rows: np.ndarray, codes: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """The key columns of output rows whose keys are those of `rows` (MISSING past the grouping's columns)."""
    out = {}
    for i, name in enumerate(KEYS):
        if i < len(g.columns):
            distinct, code = codes[g.columns[i]]
            out[name] = distinct[code[rows]]
        else:
            out[name] = np.full(len(rows), MISSING, dtype=np.int64)
    return out


def _running_max_per_group(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Running maximum restarting at each group (index: 0, 0, 1, 1, 1, 2, ... nondecreasing); a new array.

    Each group's values are lifted above all earlier groups' (index x width), so one running
    maximum over the whole array never carries a value across groups. The width is the span of
    the values when that fits in int64, else their rank (one more sort). `index` is overwritten.
    """
    if not len(values):
        return values.copy()
    low, span = int(values.min()), int(values.max()) - int(values.min()) + 1
    if (int(index[-1]) + 1) * span < 1 << 62:
        index *= span                                     # each row's lift
        lifted = values - low
        lifted += index
        np.maximum.accumulate(lifted, out=lifted)
        lifted -= index
        lifted += low
        return lifted
    distinct, rank = np.unique(values, return_inverse=True)
    lifted = index * len(distinct) + rank
    return distinct[np.maximum.accumulate(lifted) - index * len(distinct)]
