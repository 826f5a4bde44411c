"""Which cases of a sweep over the shared real traces the quick tier (`python -m pytest`) keeps.

A test run on every real trace checks one behaviour many times over; the quick tier runs it on a few
traces that between them take each of its branches (no GPU tables; NVTX only; kernels without NVTX or
globalPid; PyTorch NVTX with kernels; device ids that are not CUDA numbers; MPI ranges and launches
recorded twice), and the slow tier (`python -m pytest -m slow`, run by .ci/run) on the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

QUICK_TRACES = frozenset({
    "StellaWava__benchmarking-n-profiling-__report1.sqlite",
    "YoonKyonghwan__EfficientCenterFormer__baseline.sqlite",
    "nsysai__healthy_1pct.sqlite",
    "MohanadOdema__DLProf__nsys_profile.sqlite",
    "cestwc__balinski-and-gomory-cuda__report19.sqlite",
    "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
})


def sweep(names: Iterable[str], quick: Iterable[str] = QUICK_TRACES) -> list[Any]:
    """The trace names as parameters: those in `quick` in both tiers' reach as usual, the others marked slow."""
    keep = set(quick)
    return [n if n in keep else pytest.param(n, marks=pytest.mark.slow) for n in names]
