"""Interval unions for every grouping at once, from one sorted copy (docs/figures.md §5 union algorithm).

A SQL file that declares `-- unions: scope = col, col; other = col; all =` selects integer
key columns plus start_ns and end_ns; queries.run hands its rows here (DuckDB's
fetchnumpy, no Python loop over rows) and stores one row per scope and group in the table
the file `creates`: scope, k1..k3 (the group's key values, NULL past its columns),
union_ns, sum_ns, interval_count, last_end_ns.

Why numpy and not a SQL window: a window sorts all rows again for every grouping, and the
report needs about ten groupings of the same kernels (per occurrence, device, rank, class,
overlap part, and each over all occurrences). Here the rows are sorted by start once; a
grouping is then a stable sort of small integer codes (start order kept inside each group;
none when the rows are already in group order) and a running maximum: each interval adds
what it reaches beyond the running maximum end of the ones before it in its group,
max(0, end - max(start, covered_end)). Touching intervals merge, and the order among equal
starts does not change the sum.

The running maximum restarts per group: a few groups are swept one call each; more are lifted
(times are unsigned offsets from the window's earliest time, and each group's are lifted above
every earlier group's by its index x the window's span), so one cumulative maximum never
carries an end across groups; groups too many for the lift to fit in 64 bits come in chunks.
A grouping whose groups are whole groups of a finer one that do not overlap in time (per
device, the occurrences of a training job) is added up from it, not swept (`_coarsened`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.trace import keycodes

KEYS = ("k1", "k2", "k3")
MISSING = np.iinfo(np.int64).min           # no key in this position (stored as NULL)
_U64 = 1 << 64
FEW_GROUPS = 256                           # up to this many groups are swept one by one, not lifted


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


@dataclass
class _Window:
    """The rows in start order: times as offsets from `low` (uint64), each key column as codes."""

    low: int
    span: int                                             # latest time - low + 1 (up to 2**64)
    s: np.ndarray
    e: np.ndarray
    backwards: bool                                       # some row ends before it starts (adds nothing)
    codes: dict[str, tuple[np.ndarray, np.ndarray]]       # column -> (values the codes stand for, each row's code)
    scratch: np.ndarray | None = None                     # 3 x rows, reused by every sweep (`_buffers`)


def _buffers(w: _Window, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three arrays of m uint64 for a sweep, the same memory for every grouping: a fresh 25 MB array
    per step (3.2 M rows) costs more in page faults than the step itself. Dropped after a sort or cut."""
    if w.scratch is None or w.scratch.shape[1] < m:
        w.scratch = np.empty((3, max(m, len(w.s))), dtype=np.uint64)
    return w.scratch[0, :m], w.scratch[1, :m], w.scratch[2, :m]


@dataclass
class _Groups:
    """One grouping's groups, in key order."""

    union: np.ndarray
    total: np.ndarray
    count: np.ndarray
    last: np.ndarray
    first: np.ndarray                                     # start order index of each group's first row


def _empty() -> _Groups:
    return _Groups(*(np.zeros(0, dtype=np.int64) for _ in range(5)))


def compute(rows: dict[str, np.ndarray], groupings: list[Grouping]) -> dict[str, np.ndarray]:
    """Per grouping and group: union, summed durations, count and last end, as table columns.

    Key columns of a group past its grouping's columns hold MISSING (NULL in the stored table).
    `rows` is consumed: each column is popped, so its fetched copy is freed once sorted (the
    window of an 8 M-kernel trace is 3.2 M rows per column). Keys may be any integer type (a
    query selecting 1-byte flags fetches 1 byte per row); they are held as codes of the smallest
    unsigned type that fits (`keycodes.codes`), not as 8-byte values.
    """
    w = _by_start(rows, groupings)
    done = _all_groups(w, groupings)
    return _table([_rows(g, done[g][1], w.codes) for g in groupings])


def _all_groups(w: _Window, groupings: list[Grouping]) -> dict[Grouping, tuple[np.ndarray, _Groups]]:
    """Each grouping's (group code of each row, groups); the finest first, so that a coarser one can
    be added up from one already swept instead of swept (`_coarsened`)."""
    done: dict[Grouping, tuple[np.ndarray, _Groups]] = {}
    for g in sorted(groupings, key=lambda g: -len(g.columns)):
        code = keycodes.group(g.columns, w.codes, len(w.s))
        found = next((d for f, (fcode, fine) in done.items()
                      if (d := _coarsened(w, code, fcode, fine, set(g.columns) <= set(f.columns))) is not None), None)
        done[g] = code, found if found is not None else _sweep_groups(w, code, _order(code))
    return done


def _coarsened(w: _Window, code: np.ndarray, fcode: np.ndarray, fine: _Groups, nested: bool) -> _Groups | None:
    """The groups of `code` added up from the finer groups `fine` (group codes `fcode`), when that is exact
    (`_apart`): each group of `code` a set of whole fine groups (known when its key columns are a subset
    of theirs, `nested`; else checked row by row)."""
    gf = code[fine.first]                                 # each fine group's coarse group
    if not nested:
        table = np.zeros(int(fcode.max()) + 1 if len(fcode) else 0, dtype=code.dtype)
        table[fcode[fine.first]] = gf
        if not all(np.array_equal(table[fcode[::step]], code[::step]) for step in (997, 1)):   # a sample first
            return None
    order = _apart(w, gf, fine)
    return None if order is None else _added(gf, fine, order)


def _apart(w: _Window, gf: np.ndarray, fine: _Groups) -> np.ndarray | None:
    """The fine groups by coarse group `gf` and first start, when the fine groups of each coarse group
    do not overlap in time: ordered by first start, each ends (its latest end) no later than the next
    starts. Then no interval of one changes what another's add to the union (docs/figures.md §5: the union
    is the sum of the gains), and union, sum and count of any of them add up. Steps of a training job
    are such: per device, per occurrence."""
    starts = w.s[fine.first]
    order = np.lexsort((starts, gf))
    same = gf[order][1:] == gf[order][:-1]
    return None if np.any(same & (fine.last[order][:-1] > _ns(starts[order][1:], w.low))) else order


def _added(gf: np.ndarray, fine: _Groups, order: np.ndarray) -> _Groups:
    """The fine groups `order` (by coarse group gf) added up per coarse group."""
    if not len(order):
        return _empty()
    g = gf[order]
    heads = np.flatnonzero(np.append(True, g[1:] != g[:-1]))
    return _Groups(np.add.reduceat(fine.union[order], heads), np.add.reduceat(fine.total[order], heads),
                   np.add.reduceat(fine.count[order], heads), np.maximum.reduceat(fine.last[order], heads),
                   np.minimum.reduceat(fine.first[order], heads))


def islands(rows: dict[str, np.ndarray], groupings: list[Grouping]) -> dict[str, np.ndarray]:
    """Per grouping and group, the union as its separate stretches (islands): scope, keys, start_ns, end_ns.

    The same sweep as the union: a row starts an island when it starts after every earlier row
    of its group has ended (touching rows join), and the island ends at the latest end of its
    rows. Islands come by group, then by start. `rows` is consumed as by `compute`.
    """
    w = _by_start(rows, groupings)
    parts = []
    for g in groupings:
        code = keycodes.group(g.columns, w.codes, len(w.s))
        perm = _order(code)
        S, E, acc, lift, heads, restarts = _lifted(w, code, perm)
        new = np.empty(len(S), dtype=bool)
        new[:1] = True
        np.greater(S[1:], acc[:-1], out=new[1:])
        new[heads] = True
        starts = np.flatnonzero(new)
        own = lift[np.searchsorted(heads, starts, side="right") - 1]          # each island's group's lift
        at = starts if perm is None else perm[starts]
        ends = np.maximum.reduceat(E, starts) if len(starts) else E[:0]     # its own rows' latest end
        part = {"scope": np.full(len(starts), g.scope), "start_ns": _ns(S[starts] - own, w.low),
                "end_ns": _ns(ends - own, w.low)}
        parts.append({**part, **_keys(g, at, w.codes)})
    return _table(parts, ("scope", *KEYS, "start_ns", "end_ns"))


@dataclass
class Sorted:
    """A window's intervals sorted once, for the unions of any run of its occurrences (`cut`).

    A batch's jobs share one window (analysis/sharing.py) and each needs the unions of its own
    occurrences. A grouping keyed by the occurrence (each group inside one occurrence) is computed
    once, whole, and cut by that key. Any other is computed per occurrence too and, when its
    occurrences do not overlap in time within each group (`_apart`), a cut adds up the cut's
    occurrences (`added`). Else it keeps its rows in group-then-start order (`perm`, start order
    indices) with each row's occurrence code in that order: the rows of some occurrences, taken in
    that order, are already in the order `compute` would sort them into, so a cut needs no sort.
    """

    groupings: list[Grouping]
    by: str
    window: _Window
    whole: dict[int, tuple[int, dict[str, np.ndarray]]]                 # grouping -> (key position, its unions)
    added: dict[int, tuple[np.ndarray, np.ndarray, _Groups]]             # grouping -> (group, occurrence, per both)
    ordered: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]        # grouping -> (group code, perm, occurrence)


def sort(rows: dict[str, np.ndarray], groupings: list[Grouping], by: str) -> Sorted:
    """Sort once for `cut`; `by` is the occurrence column (its values are what a cut keeps)."""
    w = _by_start(rows, groupings, also=by)
    occurrence = w.codes[by][1]
    per = [g if by in g.columns else Grouping(g.scope, (*g.columns, by)) for g in groupings]
    groups = _all_groups(w, per)
    done = Sorted(groupings, by, w, {}, {}, {})
    for i, g in enumerate(groupings):
        if by in g.columns:
            done.whole[i] = (g.columns.index(by), _rows(g, groups[g][1], w.codes))
            continue
        fine = groups[per[i]][1]
        code = keycodes.group(g.columns, w.codes, len(w.s))
        if _apart(w, code[fine.first], fine) is not None:
            done.added[i] = (code[fine.first], occurrence[fine.first], fine)
            continue
        perm = _order(code)
        perm = np.arange(len(code)) if perm is None else perm
        done.ordered[i] = (code, _compact(perm), occurrence[perm])
    w.scratch = None
    return done


def cut(done: Sorted, first: int, last: int) -> dict[str, np.ndarray]:
    """What `compute` gives for the rows of occurrences first..last, without sorting them again."""
    distinct = done.window.codes[done.by][0]
    low, high = int(np.searchsorted(distinct, first)), int(np.searchsorted(distinct, last, side="right"))
    parts = []
    for i, g in enumerate(done.groupings):
        if i in done.whole:
            position, table = done.whole[i]
            keys = table[KEYS[position]]
            keep = (keys >= first) & (keys <= last)
            parts.append({name: column[keep] for name, column in table.items()})
        elif i in done.added:                             # groups by group, then occurrence
            group, occurrence, fine = done.added[i]
            kept = np.flatnonzero((occurrence >= low) & (occurrence < high))
            parts.append(_rows(g, _added(group, fine, kept), done.window.codes))
        else:
            code, perm, occurrence = done.ordered[i]
            keep = (occurrence >= low) & (occurrence < high)      # codes of first..last
            parts.append(_rows(g, _sweep_groups(done.window, code, perm[keep]), done.window.codes))
    done.window.scratch = None
    return _table(parts)


def occurrence_rows(done: Sorted, occurrence: int, columns: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The rows of one occurrence as the sorted query returned them (start_ns, end_ns and the key `columns`),
    in start order: a job of a shared window takes them here rather than scanning the window's rows again
    (analysis/timeline.py: its median step's 80 k rows of a 2 M-row window, about 3 ms against 40)."""
    w = done.window
    distinct, code = w.codes[done.by]
    at = int(np.searchsorted(distinct, occurrence))
    rows = np.flatnonzero(code == at) if at < len(distinct) and distinct[at] == occurrence else np.zeros(0, np.int64)
    out = {"start_ns": _ns(w.s[rows], w.low), "end_ns": _ns(w.e[rows], w.low)}
    for c in columns:
        values, codes = w.codes[c]
        out[c] = values[codes[rows]]
    return out


def _by_start(rows: dict[str, np.ndarray], groupings: list[Grouping], also: str | None = None) -> _Window:
    """The rows in start order as a _Window, with codes of the key columns (and of `also`); each
    column is popped. Any order among equal starts: no figure depends on it.

    The sort is numpy's stable one (timsort for 8-byte words), not its default: the rows come in
    runs (a trace's kernel table is in start order per export, and a join keeps its input's order
    in stretches), which timsort merges in linear time. On an export's window (a few descents in
    thousands of rows) and on bench/run_bench.py's 2 M-kernel window (800 k rows in short runs) it
    takes 0.012-0.02 s where the default took 0.04-0.05; on rows in random order about 15 % longer."""
    start = np.asarray(rows.pop("start_ns"), dtype=np.int64)
    end = np.asarray(rows.pop("end_ns"), dtype=np.int64)
    n = len(start)
    low = int(min(start.min(), end.min())) if n else 0
    span = int(max(start.max(), end.max())) - low + 1 if n else 1
    base = np.uint64(low % _U64)
    s = start.view(np.uint64) - base                      # wrapping subtraction: exact offsets in 0 .. span - 1
    index = max(1, (n - 1).bit_length())
    if span <= 1 << (64 - index):                         # offset and row index in one word: a plain sort,
        s <<= np.uint64(index)                            # twice as fast as an argsort
        s |= np.arange(n, dtype=np.uint64)
        s.sort(kind="stable")
        order = (s & np.uint64((1 << index) - 1)).view(np.int64)
        s >>= np.uint64(index)
    else:
        order = np.argsort(s)
        s = s[order]
    e = end.view(np.uint64)[order]
    e -= base
    codes = {}
    for c in dict.fromkeys([c for g in groupings for c in g.columns] + ([also] if also else [])):
        distinct, code = keycodes.codes(np.asarray(rows.pop(c)))
        codes[c] = distinct, code[order]
    return _Window(low, span, s, e, bool(np.any(e < s)), codes)


UNION_COLUMNS = ("scope", *KEYS, "union_ns", "sum_ns", "interval_count", "last_end_ns")


def _table(parts: list[dict[str, np.ndarray]], names: tuple[str, ...] = UNION_COLUMNS) -> dict[str, np.ndarray]:
    if not parts:
        return {n: np.array([], dtype=str if n == "scope" else np.int64) for n in names}
    return {n: np.concatenate([p[n] for p in parts]) for n in names}


def _compact(values: np.ndarray) -> np.ndarray:
    """int32 when the values fit: a shared window keeps such an array per grouping."""
    if values.dtype.itemsize <= 4:
        return values
    fits = not len(values) or (values.min() >= np.iinfo(np.int32).min and values.max() <= np.iinfo(np.int32).max)
    return values.astype(np.int32) if fits else values


def _order(code: np.ndarray) -> np.ndarray | None:
    """The rows by group, start order kept (a stable sort: radix for 8/16-bit codes); None when already so."""
    if np.all(code[1:] >= code[:-1]):
        return None
    return np.argsort(code, kind="stable")


def _lifted(w: _Window, code: np.ndarray, rows: np.ndarray | None) -> tuple:
    """Starts and ends of the rows (in the order of `rows`; all rows when None) lifted by their
    group's lift, each group's lift and first row, the rows where the running maximum restarts, and
    their running maximum (all in `_buffers`).

    A few groups are swept one by one (no lift: one call each); more are lifted, each above
    the earlier ones of its chunk (as many groups as fit in 64 bits; one chunk in practice).
    """
    c = code if rows is None else code[rows]
    heads = np.flatnonzero(c[1:] != c[:-1])
    heads += 1
    heads = np.append(0, heads) if len(c) else heads
    S, E, acc = _buffers(w, len(c))
    for into, values in ((S, w.s), (E, w.e)):
        np.copyto(into, values) if rows is None else np.take(values, rows, out=into, mode="clip")  # clip: unbuffered
    if len(heads) <= FEW_GROUPS:
        lift, restarts = np.zeros(len(heads), dtype=np.uint64), heads
    else:
        per = max(1, (_U64 - 1) // w.span)               # groups per chunk whose lift fits in 64 bits
        lift = np.arange(len(heads), dtype=np.uint64) % np.uint64(per)
        if per > 1:
            lift *= np.uint64(w.span)
        table = np.zeros(int(c.max()) + 1, dtype=np.uint64)
        table[c[heads]] = lift
        np.take(table, c, out=acc, mode="clip")
        S += acc
        E += acc
        restarts = heads[lift == 0]
    if len(restarts) <= 1:
        np.maximum.accumulate(E, out=acc)
    else:
        for a, b in zip(restarts, _last_rows(restarts, len(E)) + 1):
            np.maximum.accumulate(E[a:b], out=acc[a:b])
    return S, E, acc, lift, heads, restarts


def _sweep_groups(w: _Window, code: np.ndarray, rows: np.ndarray | None) -> _Groups:
    """One grouping's unions from its rows in group-then-start order (`rows`: start order indices, or
    None when start order is already group order)."""
    S, E, acc, lift, heads, restarts = _lifted(w, code, rows)
    if not len(heads):
        return _empty()
    total = (np.add.reduceat(E, heads) - np.add.reduceat(S, heads)).view(np.int64)   # lifts cancel
    own = S[restarts]
    np.maximum(S[1:], acc[:-1], out=S[1:])                # covered before each row (a group's first row:
    S[restarts] = own                                     # its own start, lifted above earlier groups' ends)
    if w.backwards:                                       # gain max(0, end - covered), as acc - covered
        np.maximum(acc, S, out=E)                         # only where no row ends before it starts
        np.subtract(E, S, out=S)
    else:
        np.subtract(acc, S, out=S)
    union = np.add.reduceat(S, heads).view(np.int64)
    last = _ns(acc[_last_rows(heads, len(S))] - lift, w.low)
    count = np.diff(np.append(heads, len(S)))
    return _Groups(union, total, count, last, heads if rows is None else rows[heads])


def _last_rows(heads: np.ndarray, n: int) -> np.ndarray:
    """The last row of each run that starts at `heads` (runs cover 0 .. n - 1)."""
    out = np.empty_like(heads)
    out[:-1] = heads[1:] - 1
    out[-1:] = n - 1
    return out


def _rows(g: Grouping, groups: _Groups, codes: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """A grouping's groups as output columns."""
    out = {"scope": np.full(len(groups.union), g.scope), "union_ns": groups.union, "sum_ns": groups.total,
           "interval_count": groups.count, "last_end_ns": groups.last}
    return {**out, **_keys(g, groups.first, codes)}


def _ns(offsets: np.ndarray, low: int) -> np.ndarray:
    """uint64 offsets from low back to int64 nanoseconds."""
    return (offsets + np.uint64(low % _U64)).view(np.int64)


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
