"""Where a batch's trace groups run: inline, in local worker processes, or as Dask tasks (issue #7).

A group is every job that reads the same trace files (batch.plan); measuring it needs
nothing but those files, so groups are independent and a batch over hundreds of rank
files is embarrassingly parallel. Each group returns a few summary rows; the reports
are written by the worker into the output folder. A lone job over several files, given
spare workers, sends one task per file instead (batch.run_batch, ranks.extract).

Engines:
  local             this machine: inline with one worker, else a process pool (--jobs N)
  dask-local        a dask.distributed LocalCluster on this machine (2 worker processes), started by the
                    first task: a run that submits none starts no cluster
  dask://HOST:PORT  an existing Dask scheduler. Workers must see the trace files, the output
                    folder and the cache folder (if any) at the same absolute paths: a shared
                    filesystem.
Dask is an optional extra (`pip install 'mfu-pipeline[dask]'`), imported only here.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:                  # imported where a pool starts: a one-worker run needs no process pool
    from concurrent.futures import ProcessPoolExecutor

from pipeline import interrupts, nopandas, progress
from pipeline.errors import UsageError
from pipeline.trace.connection import remove_orphaned_spills, set_worker_threads

Submit = Callable[..., Any]                       # submit(fn, *args) -> a future
Gather = Callable[[Iterable[Any]], Iterator[Any]]  # results in completion order


class _Done:
    """An already-computed result posing as a future, for inline runs."""

    def __init__(self, value: Any):
        self._value = value

    def result(self) -> Any:
        return self._value


def check_engine(spec: str) -> None:
    if spec not in ("local", "dask-local") and not spec.startswith("dask://"):
        raise UsageError(f"unknown executor '{spec}': use local, dask-local or dask://HOST:PORT")


@contextmanager
def pool(spec: str, workers: int) -> Iterator[tuple[Submit, Gather]]:
    """(submit, gather) for the chosen engine; gather yields each finished task's return value."""
    check_engine(spec)
    if spec == "local":
        if workers <= 1:
            yield (lambda fn, *a: _Done(fn(*a))), (lambda fs: (f.result() for f in fs))
            return
        from concurrent.futures import as_completed
        with _local_pool(workers) as ex:
            yield (lambda fn, *a: _submit(ex, fn, *a)), (lambda fs: (f.result() for f in as_completed(list(fs))))
        return
    if importlib.util.find_spec("distributed") is None:
        raise UsageError("the dask executor needs the optional extra: pip install 'mfu-pipeline[dask]'")
    if spec == "dask-local":
        with _lazy_cluster() as pair:
            yield pair
        return
    from distributed import Client, as_completed as dask_completed
    with _connect(Client, spec) as client:
        yield _dask(client, dask_completed, own_workers=False)


@contextmanager
def _lazy_cluster() -> Iterator[tuple[Submit, Gather]]:
    """dask-local's (submit, gather), its LocalCluster started by the first task submitted (issue 34): a run whose
    work all stays in this process (one job over small files, built as one: analysis/merged.py) imports no
    distributed (0.7 CPU s) and starts no cluster (about 1 CPU s more on 2 cores), as `-j 2` starts no pool."""
    from concurrent.futures import as_completed
    stack = ExitStack()
    made: list[tuple[Submit, Gather]] = []

    def submit(fn: Callable, *args: Any) -> Any:
        if not made:
            made.append(_start_cluster(stack))
        return made[0][0](fn, *args)

    def gather(fs: Iterable[Any]) -> Iterator[Any]:
        return made[0][1](fs) if made else (f.result() for f in as_completed(list(fs)))
    try:
        with stack:
            yield submit, gather
    finally:                                   # after the workers stopped: what a killed one spilled
        if made:
            remove_orphaned_spills()


DASK_LOCAL_WORKERS = 2       # dask-local's worker processes: the cluster's size and the share of cores each takes


def _start_cluster(stack: ExitStack) -> tuple[Submit, Gather]:
    """A LocalCluster of DASK_LOCAL_WORKERS forked worker processes and its client, closed with `stack`."""
    import logging
    import dask
    from distributed import Client, LocalCluster, as_completed as dask_completed
    with interrupts.children_ignore_sigint(), dask.config.set(DASK_LOCAL_CONFIG):   # we stop them on Ctrl-C
        set_worker_threads(_threads_each(DASK_LOCAL_WORKERS))   # inherited by the forked workers, not kept here
        try:
            cluster = LocalCluster(n_workers=DASK_LOCAL_WORKERS, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR, memory_limit=0)
        finally:
            set_worker_threads(None)
    stack.enter_context(cluster)
    client = stack.enter_context(Client(cluster))
    return _dask(client, dask_completed, own_workers=True)


# dask-local's workers are forked from this process, as the local pool's are (issue 34): spawned, each started a new
# interpreter and imported distributed, DuckDB and mfu again, 2-3 CPU s and 3-4 s before the first task on 2 cores,
# which made dask-local 1.8x the CPU of `-j 2` on 8 rank files (bench/RESULTS.md); forked, 0.4 s.
# Its housekeeping runs less often: the event loops' 20 ms tick (a watchdog that only logs a blocked loop), the
# system monitor's 0.5 s samples and the stack profiler (both for a dashboard mfu does not start), and no memory
# limit (the nanny's 0.1 s polls; DuckDB keeps its own, trace/connection.py). Idle, these took 0.13 CPU s per second
# over the parent and two workers, 0.03 after; a 64-file job runs long enough on a loaded machine that they were
# most of dask-local's extra CPU (bench/RESULTS.md).
DASK_LOCAL_CONFIG = {"distributed.worker.multiprocessing-method": "fork", "distributed.worker.profile.enabled": False,
                     "distributed.admin.tick.interval": "1s", "distributed.admin.system-monitor.interval": "10s"}


@contextmanager
def _local_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers die with this process and are stopped, not awaited, on an error.

    On Ctrl-C or SIGTERM the workers get SIGTERM: each removes its temp files and exits (interrupts.py),
    and is joined so nothing of theirs is left behind when this process exits. A worker that ends
    inside a DuckDB query that spilled (the signal, the OOM killer) leaves the spill folder DuckDB
    removes only when its connection closes: once the workers are stopped, the folders of processes
    no longer running are removed, as after a Dask cluster.
    """
    from concurrent.futures import ProcessPoolExecutor
    ex = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(_threads_each(workers),))
    try:
        yield ex
    except BaseException:
        procs = list((getattr(ex, "_processes", None) or {}).values())   # no public handle on the workers
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.join(timeout=10)
        ex.shutdown(wait=False, cancel_futures=True)
        # Python 3.11's exit hook wakes each pool's manager thread, unguarded: if that thread is closing its wake-up
        # pipe meanwhile, "Exception ignored ... Bad file descriptor" is printed after the run's last line. Once the
        # manager has ended (its workers are stopped, so at once) there is nothing left to wake.
        manager = getattr(ex, "_executor_manager_thread", None)           # no public handle either
        if manager is not None:
            manager.join(timeout=10)
        raise
    else:
        ex.shutdown(wait=True)
    finally:
        remove_orphaned_spills()


def _submit(ex: ProcessPoolExecutor, fn: Callable, *args: Any) -> Any:
    """One task on the pool; its first submit forks the workers, with SIGINT and SIGTERM held back
    (interrupts.held) until each worker has its own handlers."""
    with interrupts.held():
        return ex.submit(interrupts.guarded, fn, *args)


def _threads_each(workers: int) -> int:
    """DuckDB threads for each of `workers` processes on this machine: its cores shared out (at least one)."""
    return max(1, (os.cpu_count() or 1) // workers)


def _worker_init(threads: int | None = None) -> None:
    """A local worker stops cleanly on a signal (interrupts) and never imports pandas (nopandas), however it
    was started: a forked worker inherits the command's block, a spawned or forkserver one would not. It draws no
    progress over its parent's line, and its DuckDB takes `threads` (its share of the cores)."""
    interrupts.worker_init()
    nopandas.block()
    progress.configure(False)         # a forked worker inherits the command's choice; its parent counts its files
    set_worker_threads(threads)


SCHEDULER_TIMEOUT_S = 10


def _connect(client_class: Any, spec: str) -> Any:
    """A client of the scheduler, or a usage error naming it if it does not answer (checked before any job)."""
    address = spec.removeprefix("dask://")
    try:
        return client_class(f"tcp://{address}", timeout=SCHEDULER_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--executor {spec}: no Dask scheduler answered at {address} within "
                         f"{SCHEDULER_TIMEOUT_S} s ({type(exc).__name__}); start one with "
                         "`dask scheduler`, or check the host and port") from None


def _dask(client: Any, completed: Callable, own_workers: bool) -> tuple[Submit, Gather]:
    """Tasks on the workers of `client`. Only on workers of our own LocalCluster (one thread each, no one
    else's tasks) does a task block pandas' import: the block is process-wide, so on a scheduler given by
    address a worker thread running someone else's task could find `import pandas` failing meanwhile."""
    def submit(fn: Callable, *args: Any) -> Any:
        if own_workers:
            return client.submit(_without_pandas, fn, *args, pure=False)
        return client.submit(fn, *args, pure=False)
    return submit, (lambda fs: (f.result() for f in completed(list(fs))))


def _without_pandas(fn: Callable, *args: Any) -> Any:
    """A task on our LocalCluster: `fn` with pandas' import blocked (nopandas) while it runs. A Dask worker is
    started by its nanny, not by mfu's pool, so neither the command's block nor the pool's initializer
    reaches it."""
    with nopandas.blocked():
        return fn(*args)
