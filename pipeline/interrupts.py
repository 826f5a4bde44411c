"""Ctrl-C and SIGTERM end a run cleanly: temp files removed, workers gone, one line, exit 128 + signal.

Both signals become an `Interrupted` exception in the process that receives them, so every
`finally` (temp folders, staging folders, connections) runs on the way out. DuckDB turns a
signal during a query into its own "Query interrupted" error, which broad `except Exception`
handlers would report as a failed job; `pending()` tells them it was the user instead.

Worker processes (the local pool) die with their parent (Linux: PR_SET_PDEATHSIG) and, when
signalled, clean up the same way and exit without a traceback: an idle worker has nothing to
clean and exits at once. They are forked with both signals blocked (`held`), so one that comes
before a worker's own handlers are in waits for them instead of running the command's handler,
inherited with the fork, inside the worker (a 'Process ForkProcess-N:' traceback on Ctrl-C).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
from collections.abc import Iterator
from typing import Any, Callable

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_received: list[int] = []           # signals seen by this process
_deferring: list[int] = [0]         # depth of `deferred` blocks being run
_owed: list[bool] = [False]         # a signal came inside one: Interrupted is raised when the last is left
_busy: list[bool] = [False]         # a worker is inside a task (else a signal just ends it)
_PR_SET_PDEATHSIG = 1


class Interrupted(KeyboardInterrupt):
    """The user (Ctrl-C) or the system (SIGTERM) asked this process to stop."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _raise(signum: int, frame: Any) -> None:
    if _received:                   # a second Ctrl-C must not cut the cleanup of the first short
        return
    _received.append(signum)
    if _deferring[0]:
        _owed[0] = True
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A signal that comes inside the block raises Interrupted only once the block is left, so that what it makes
    and removes again (trace/connection.py's temp folder for the scanner) is never left half done: an exception inside
    mkdtemp or rmtree left the folder behind. Blocking the signal would not do: a process-directed signal then
    reaches another thread (DuckDB's), and Python runs the handler in the main thread all the same."""
    _deferring[0] += 1
    try:
        yield
    finally:
        _deferring[0] -= 1
    if not _deferring[0] and _owed[0]:
        _owed[0] = False
        raise Interrupted(_received[0])


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """While a command runs in this process, SIGINT and SIGTERM raise Interrupted (handlers restored after)."""
    _received.clear()
    _owed[0] = False
    before = {sig: signal.signal(sig, _raise) for sig in _SIGNALS}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def children_ignore_sigint() -> Iterator[None]:
    """Start child processes that ignore Ctrl-C (a Dask cluster's nanny and worker processes).

    A terminal sends Ctrl-C to every process of the group, and Dask's processes answer it with
    KeyboardInterrupt tracebacks; an ignored signal stays ignored in a started Python, so while
    they are created SIGINT is ignored here and they inherit that. This process stops them when
    it is interrupted. (A Ctrl-C during those one or two seconds of start-up is dropped.)
    SIGTERM is back at its default meanwhile: a forked child (executor.DASK_LOCAL_CONFIG) keeps the handlers it
    is forked with, and this process's would have a Dask worker raise Interrupted instead of ending when its
    nanny stops it.
    """
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    term = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
        signal.signal(signal.SIGTERM, term)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM held back in this thread while worker processes are started (forked) inside.

    A forked child starts with its parent's handlers and signal mask: with the signals blocked it cannot
    run the command's handler before `worker_init` installs its own, which unblocks them (a signal that
    came meanwhile is then delivered). Here a held signal is delivered on the way out, not lost. It is also
    deferred: a signal that reaches another thread of this process still has its handler run in this one, and
    raised between two forks it left the second worker unregistered, never stopped (1 run in ~50).
    """
    with deferred():
        before = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


def pending() -> Interrupted | None:
    """The interruption this process received, if any (for handlers that caught a generic error)."""
    return Interrupted(_received[0]) if _received else None


def reraise_if_pending() -> None:
    """Inside `except Exception`: an error caused by the user's Ctrl-C is not a failed job."""
    if _received:
        raise Interrupted(_received[0]) from None


def worker_init() -> None:
    """Pool worker start: die with the parent; on SIGINT/SIGTERM clean up (if busy) and exit quietly. The
    signals, blocked since the fork (`held`), are let through once the handlers are in."""
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (AttributeError, OSError, TypeError):      # not Linux: the parent terminates its workers itself
        pass
    if os.getppid() != parent:                         # the parent died before prctl took effect
        os._exit(128 + signal.SIGTERM)
    _deferring[0], _owed[0] = 0, False                 # forked inside the parent's `held`: not this process's
    _received.clear()
    for sig in _SIGNALS:
        signal.signal(sig, _worker_signal)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)


def _worker_signal(signum: int, frame: Any) -> None:
    if not _busy[0]:
        os._exit(128 + signum)
    _raise(signum, frame)


def guarded(fn: Callable[..., Any], *args: Any) -> Any:
    """Run one task in a worker; an interruption ends the worker after the task's `finally` blocks
    ran and what it held was released (finalizers remove e.g. private trace copies)."""
    _busy[0] = True
    try:
        return fn(*args)
    except BaseException:
        if not _received:
            raise
    finally:
        _busy[0] = False
    gc.collect()
    os._exit(128 + _received[0])
