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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

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


@dataclass
class Extract:
    """One region measured in one trace: small, picklable, enough to finish the job anywhere."""

    trace: TraceInfo
    measurement: Measurement | None
    gpu_rows: list[dict[str, Any]] | None
    error: MfuError | None = None          # a trace problem travels back instead of killing the batch


def extract_trace(path: Path, regions: list[Region], cache_dir: Path | None = None) -> list[Extract]:
    """Open `path` once and measure every region on that one connection (shared scans in a batch)."""
    from . import queries
    trace = open_cached(path, cache_dir) if cache_dir is not None else open_trace(path)
    try:
        prepare(trace)
        gpu_rows = queries.run(trace.con, "gpu_rows") if trace.has("raw_gpu") else None
        info = TraceInfo(trace.path, trace.sha256, trace.nsys_version, trace.export_schema_version)
        out = []
        for region in regions:
            try:
                out.append(Extract(info, measure(trace, region), gpu_rows))
            except MfuError as exc:
                out.append(Extract(info, None, gpu_rows, exc))
        return out
    finally:
        trace.con.close()


Mapper = Callable[[list[tuple[Path, list[Region]]], Path | None], list[list[Extract]]]


@contextmanager
def executor(spec: str = "local") -> Iterator[Mapper]:
    """A function mapping extract_trace over (trace, regions) pairs on the chosen engine."""
    if spec == "local":
        yield lambda work, cache_dir: [extract_trace(p, regions, cache_dir) for p, regions in work]
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
    def run(work: list[tuple[Path, list[Region]]], cache_dir: Path | None) -> list[list[Extract]]:
        futures = [client.submit(extract_trace, p, regions, cache_dir, key=f"mfu-extract-{i}-{p.name}", pure=False)
                   for i, (p, regions) in enumerate(work)]
        return client.gather(futures)
    return run
