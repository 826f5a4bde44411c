"""Key coding for the union sweep (pipeline/trace/keycodes.py)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from pipeline.trace import keycodes


def test_wide_keys_coded_whether_or_not_the_sample_sees_every_value():
    """Keys spanning more than a lookup table (48-bit process ids) are coded by a search among a sample's
    distinct values; a value the sample missed falls back to a full sort. Either way each row's code
    stands for its own value, and codes keep the values' order."""
    step = 150_000 // 1024                                 # the sample takes every step-th row
    for rare_at in (0, step * 3, 1, 149_999, 70_001):
        values = np.full(150_000, 1 << 40, dtype=np.int64)
        values[rare_at] = -(1 << 45)
        values[step * 5] = 1 << 50
        distinct, code = keycodes.codes(values)
        assert list(distinct) == [-(1 << 45), 1 << 40, 1 << 50]
        assert np.array_equal(distinct[code], values), rare_at


def test_group_codes_follow_the_key_tuples_order_also_when_made_dense():
    """Rows with equal key tuples share a code and codes sort as the tuples do, both when the tuple space
    is small (codes combined arithmetically) and when it exceeds max(rows, 2**16) (made dense)."""
    rng = np.random.default_rng(7)
    for high in (3, 1 << 40):                        # a small span, and one coded through a sample search
        a = rng.integers(0, high, 5_000) if high > 3 else rng.integers(0, 3, 5_000)
        b = rng.integers(-(1 << 33), 1 << 33, 5_000)
        coded = {"a": keycodes.codes(a), "b": keycodes.codes(b)}
        group = keycodes.group(("a", "b"), coded, len(a))
        tuples = list(zip(a.tolist(), b.tolist()))
        for i, j in zip(rng.integers(0, 5_000, 2_000), rng.integers(0, 5_000, 2_000)):
            assert (group[i] < group[j]) == (tuples[i] < tuples[j])
            assert (group[i] == group[j]) == (tuples[i] == tuples[j])
        assert int(group.max()) < max(len(a), 1 << 16)


def test_wide_keys_are_coded_without_importing_numpy_ma():
    """np.unique without return_inverse imports numpy.ma to ask whether the array is masked: 10-15 ms of a cold
    run's CPU for a module nothing of mfu uses. A wide key's sample is made distinct without it."""
    code = ("import sys, numpy as np; from pipeline.trace import keycodes; "
            "values = np.arange(0, 1 << 45, 1 << 25, dtype=np.int64); distinct, code = keycodes.codes(values); "
            "assert np.array_equal(distinct[code], values); print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
