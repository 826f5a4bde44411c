"""Where per-trace extraction runs: in this process, or one task per trace file on Dask (issue #7).

Measuring a region in one trace file needs nothing but that file, so a batch of jobs
over hundreds of rank files is embarrassingly parallel. `extract_trace` is that unit:
it opens one file (once, shared by every job that reads it, through the cache when
given one) and returns small picklable results — the Measurement (per-occurrence
rows, never kernel rows), the GPU rows and the trace's identity. Everything after
(FLOPs, peak, result, reports) is reduced locally.

Executors:
  local             in this process, one trace after another (the default)
  dask-local        a dask.distributed LocalCluster on this machine
  dask://HOST:PORT  an existing Dask scheduler; workers must see the trace paths
                    (and the cache folder, if any) at the same absolute paths,
                    i.e. a shared filesystem.
Dask is an optional extra (`pip install 'mfu-pipeline[dask]'`), imported only here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import queries
from .breakdown import Rule, measure_all
from .cache import open_cached
from .config import Region
from .errors import MfuError, UsageError
from .measure import Measurement, measure, prepare
from .trace import open_trace


@dataclass(frozen=True)
class TraceInfo:
    """The trace's identity as result.json reports it (what result.build reads of a Trace)."""

    path: Path
    sha256: str
    nsys_version: str | None
    export_schema_version: str | None


@dataclass(frozen=True)
class Request:
    """What one job asks of a trace: the region, and the kernel classes and figures to break it into."""

    region: Region
    rules: list[Rule]
    figures: list[dict[str, Any]]


@dataclass
class Extract:
    """One request answered from one trace: small, picklable, enough to finish the job anywhere."""

    trace: TraceInfo
    measurement: Measurement | None
    gpu_rows: list[dict[str, Any]] | None
    breakdown: dict[str, Any] = field(default_factory=dict)
    error: MfuError | None = None          # a trace problem travels back instead of killing the batch


def extract_trace(path: Path, requests: list[Request], cache_dir: Path | None = None) -> list[Extract]:
    """Open `path` once and answer every request on that one connection (shared scans in a batch)."""
    trace = open_cached(path, cache_dir) if cache_dir is not None else open_trace(path)
    try:
        prepare(trace)
        gpu_rows = queries.run(trace.con, "gpu_rows") if trace.has("raw_gpu") else None
        info = TraceInfo(trace.path, trace.sha256, trace.nsys_version, trace.export_schema_version)
        out = []
        for req in requests:
            try:
                m = measure(trace, req.region)
                out.append(Extract(info, m, gpu_rows, measure_all(trace, m, req.rules, req.figures)))
            except MfuError as exc:
                out.append(Extract(info, None, gpu_rows, error=exc))
        return out
    finally:
        trace.con.close()


Mapper = Callable[[list[tuple[Path, list[Request]]], Path | None], list[list[Extract]]]


@contextmanager
def executor(spec: str = "local") -> Iterator[Mapper]:
    """A function mapping extract_trace over (trace, requests) pairs on the chosen engine."""
    if spec == "local":
        yield lambda work, cache_dir: [extract_trace(p, reqs, cache_dir) for p, reqs in work]
        return
    if spec != "dask-local" and not spec.startswith("dask://"):
        raise UsageError(f"unknown executor '{spec}': use local, dask-local or dask://HOST:PORT")
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise UsageError("the dask executor needs the optional extra: pip install 'mfu-pipeline[dask]'") from exc
    if spec == "dask-local":
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            yield _dask_mapper(client)
    else:
        with Client(f"tcp://{spec.removeprefix('dask://')}") as client:
            yield _dask_mapper(client)


def _dask_mapper(client: Any) -> Mapper:
    """One task per trace file; results are a few rows each, gathered in submission order."""
    def run(work: list[tuple[Path, list[Request]]], cache_dir: Path | None) -> list[list[Extract]]:
        futures = [client.submit(extract_trace, p, reqs, cache_dir, key=f"mfu-extract-{i}-{p.name}", pure=False)
                   for i, (p, reqs) in enumerate(work)]
        return client.gather(futures)
    return run
