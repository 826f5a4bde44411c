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
    """Per grouping and group: union, summed durations, count and last end, as table columns."""
    start = np.asarray(rows["start_ns"], dtype=np.int64)
    end = np.asarray(rows["end_ns"], dtype=np.int64)
    order = np.argsort(start, kind="stable")
    start, end = start[order], end[order]
    ends, end_rank = np.unique(end, return_inverse=True)         # running maxima are taken on ranks
    keys = {c: np.asarray(rows[c], dtype=np.int64)[order] for g in groupings for c in g.columns}
    parts = [_grouping(g, start, end, ends, end_rank, keys) for g in groupings]
    return {name: np.concatenate([p[name] for p in parts]) if parts else np.array([], dtype=np.int64)
            for name in ("scope", *KEYS, "union_ns", "sum_ns", "interval_count", "last_end_ns")}


def _grouping(g: Grouping, start: np.ndarray, end: np.ndarray, ends: np.ndarray, end_rank: np.ndarray,
              keys: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    group, size = np.zeros(len(start), dtype=np.int64), 1
    for c in g.columns:                                   # dense code of the key tuple, in key order
        _, code = np.unique(keys[c], return_inverse=True)
        card = int(code.max()) + 1 if len(code) else 1
        if size * card >= 1 << 62:                        # keep the combined code within int64
            _, group = np.unique(group, return_inverse=True)
            size = int(group.max()) + 1
        group, size = group * card + code, size * card
    perm = np.argsort(group, kind="stable")               # stable: start order kept within a group
    grp, s, e, rank = group[perm], start[perm], end[perm], end_rank[perm]
    first = np.ones(len(grp), dtype=bool)
    first[1:] = grp[1:] != grp[:-1]
    heads = np.flatnonzero(first)
    index = np.cumsum(first) - 1                          # 0, 0, 1, 1, 1, 2, ... per row
    # running max of end within each group: groups' (index, rank) pairs never interleave
    scale = len(ends)
    covered = ends[np.maximum.accumulate(index * scale + rank) - index * scale]
    before = np.empty_like(covered)
    before[1:] = covered[:-1]
    before[heads] = s[heads]
    gain = np.maximum(0, e - np.maximum(s, before))
    n = len(heads)
    out = {"scope": np.full(n, g.scope, dtype=object),
           "union_ns": np.add.reduceat(gain, heads) if n else gain[:0],
           "sum_ns": np.add.reduceat(e - s, heads) if n else gain[:0],
           "interval_count": np.diff(np.append(heads, len(grp))).astype(np.int64),
           "last_end_ns": np.maximum.reduceat(e, heads) if n else gain[:0]}
    for i, name in enumerate(KEYS):
        col = g.columns[i] if i < len(g.columns) else None
        out[name] = keys[col][perm][heads] if col else np.full(n, None, dtype=object)
    return out
