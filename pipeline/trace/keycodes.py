"""Key columns as small integer codes, for the union sweep (trace/unions.py).

A grouping sorts and compares its rows by key many times; codes of 1 or 2 bytes, in the order of
the values they stand for, make those passes cheap and keep a window of millions of rows small.
Each key column is coded once and shared by every grouping that uses it.
"""

from __future__ import annotations

import numpy as np

SPAN_OFFSET = 1 << 16                      # keys spanning fewer values are coded by their offset (2 bytes)
SPAN_LOOKUP = 1 << 20                      # keys spanning fewer values are coded by a lookup table (1 MB)
CHUNK = 1 << 16                            # rows per slice where a pass would otherwise make 8-byte temporaries


def codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the values codes stand for, as int64 in ascending order; each row's code): computed once per key
    column, shared by groupings.

    Keys spanning few values (flags, classes, occurrences, devices) are coded by their offset from
    the smallest, in one pass into a 1- or 2-byte array (a value in the span that no row has is a
    code no group gets); a wider span by a table lookup, linear; others (process keys are 48-bit)
    by a binary search among the distinct values of a sample, checked, else by a sort.
    """
    if not len(values):
        return values.astype(np.int64), values.astype(np.uint8)
    values = values.view(np.uint8) if values.dtype == np.bool_ else values        # a flag selected as BOOLEAN
    low, high = int(values.min()), int(values.max())
    if high - low < SPAN_OFFSET:
        code: np.ndarray = np.empty(len(values), dtype=code_type(high - low + 1))
        np.subtract(values, values.dtype.type(low), out=code, casting="unsafe")    # fits: 0 .. high - low
        return np.arange(low, high + 1, dtype=np.int64), code
    if high - low < SPAN_LOOKUP:
        offset = values - values.dtype.type(low)          # in the column's own type: low is its minimum
        present = np.zeros(high - low + 1, dtype=bool)
        present[offset] = True
        distinct = np.flatnonzero(present) + low
        code = (np.cumsum(present) - 1).astype(code_type(len(distinct)))[offset]
        return distinct.astype(np.int64), code
    distinct = _distinct(values[:: max(1, len(values) // 1024)])
    code = np.empty(len(values), dtype=code_type(len(distinct)))
    for at in range(0, len(values), CHUNK):               # in slices: no 8-byte temporaries of every row
        part = values[at:at + CHUNK]
        found = np.minimum(np.searchsorted(distinct, part), len(distinct) - 1)
        if not np.array_equal(distinct[found], part):     # a value the sample missed
            distinct, code = np.unique(values, return_inverse=True)
            return distinct.astype(np.int64), code.reshape(-1).astype(code_type(len(distinct)))
        code[at:at + CHUNK] = found
    return distinct.astype(np.int64), code


def _distinct(values: np.ndarray) -> np.ndarray:
    """np.unique(values), which without return_inverse first asks np.ma whether the array is masked: that imports
    numpy.ma, 10-15 ms of CPU that a cold `mfu run` spent on it alone."""
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def code_type(distinct: int) -> type:
    """The smallest unsigned type holding codes 0 .. distinct - 1."""
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if distinct <= np.iinfo(t).max + 1)


def group(columns: tuple[str, ...], coded: dict[str, tuple[np.ndarray, np.ndarray]], n: int) -> np.ndarray:
    """Each row's group as a code of its key tuple (`columns`, as coded by `codes`) in key order, below
    max(n, 2**16) (else made dense)."""
    out: np.ndarray = np.zeros(n, dtype=np.uint8)       # widened as the tuples multiply
    size = 1
    for c in columns:
        distinct, code = coded[c]
        t = code_type(size * len(distinct))
        out = code.astype(t) if size == 1 else out.astype(t) * t(len(distinct)) + code
        size *= len(distinct)
        if size > max(n, 1 << 16):                        # present tuples only: at most n
            out = np.unique(out, return_inverse=True)[1].reshape(-1)
            size = int(out.max()) + 1
            out = out.astype(code_type(size))
    return out
