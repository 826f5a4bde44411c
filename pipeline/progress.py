"""Progress on stderr for long work: the phase, what is done of how much, and the time so far (issue 34).

A big trace kept `mfu inspect`, `mfu run` and `mfu synth` silent for half a minute or more, which reads as a
hang. A phase that has run DELAY_S shows one line on stderr, redrawn in place every TICK_S by a thread and
erased when the phase ends, so the output that follows is the same as without it:

    reading the trace: 41 % of the current query, 12 s
    files: 3/8 done, 25 s

Shown only when `configure(True)` was called: the command line does that when stderr is a terminal, not
under `--format json` and not in CI (the CI variable set), unless --progress / --no-progress says otherwise
(cli/__init__.py). Worker processes never draw (executor.py), nor does a thread other than the main one: the
command's own process counts their files.

Why DuckDB's own progress and no library: the long phases are single DuckDB statements, and only DuckDB
knows how far one is (`query_progress()`, which it keeps current when its progress bar is enabled, with the
bar's own printing off; read from this thread while the statement runs). tqdm or rich would draw the same
line but know nothing more, and would be one more dependency for every install.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

DELAY_S = 2.0          # a phase shorter than this shows nothing
TICK_S = 0.5           # how often the line is redrawn

_on = [False]
_lock = threading.Lock()
_shown: list[Phase] = []                   # the phases open now, innermost last (only it is drawn)


def configure(on: bool) -> None:
    """Whether this process draws progress (the command decides once, before any work)."""
    _on[0] = on


def enabled() -> bool:
    return _on[0]


class Phase:
    """One piece of long work: `advance` counts what is done of `total` (files, jobs, steps)."""

    def __init__(self, name: str, total: int | None, unit: str, con: Any):
        self.name, self.total, self.unit, self.con = name, total, unit, con
        self.done = 0
        self.start = time.monotonic()

    def advance(self, n: int = 1) -> None:
        self.done += n

    def line(self) -> str:
        parts = [f"{self.done:,}/{self.total:,} {self.unit} done" if self.total is not None else None,
                 _query_share(self.con), f"{time.monotonic() - self.start:.0f} s"]
        return f"{self.name}: " + ", ".join(p for p in parts if p)


def _query_share(con: Any) -> str | None:
    if con is None:
        return None
    with contextlib.suppress(Exception):          # a closed connection, a DuckDB without the call: no figure
        share = con.query_progress()
        if share >= 0:
            return f"{share:.0f} % of the current query"
    return None


@contextlib.contextmanager
def phase(name: str, total: int | None = None, unit: str = "", con: Any = None) -> Iterator[Phase]:
    """A phase of long work; `con`, a DuckDB connection whose statements make up the phase (their progress
    is shown). Does nothing visible unless progress is on, and nothing outside the main thread: a task on another
    thread draws no line over the command's (a dask-local worker runs its tasks on a thread, in a process forked
    from the command with its setting; a long file's phases drew over the command's line)."""
    p = Phase(name, total, unit, con)
    if not _on[0] or threading.current_thread() is not threading.main_thread():
        yield p
        return
    if con is not None:
        con.execute("SET enable_progress_bar = true")
        con.execute("SET enable_progress_bar_print = false")
    with _lock:
        _shown.append(p)
    stop = threading.Event()
    ticker = threading.Thread(target=_tick, args=(p, stop), daemon=True, name="mfu-progress")
    ticker.start()
    try:
        yield p
    finally:
        stop.set()
        ticker.join()
        with _lock:
            _shown.remove(p)


def _tick(p: Phase, stop: threading.Event) -> None:
    """Redraw `p`'s line while it is the innermost phase, once it has run DELAY_S; erase it at the end. A phase
    that ends past DELAY_S before its first draw still shows its last state once (then erased)."""
    drawn = False
    while not stop.wait(TICK_S if drawn else DELAY_S):
        drawn = _draw_innermost(p) or drawn
    if not drawn and time.monotonic() - p.start >= DELAY_S:
        drawn = _draw_innermost(p)
    if drawn:
        with _lock:
            _draw("")


def _draw_innermost(p: Phase) -> bool:
    with _lock:
        if _shown and _shown[-1] is p:                 # with the phases it runs inside: files 3/8, attributing
            _draw("; ".join(q.line() for q in _shown))
            return True
    return False


def _draw(text: str) -> None:
    # The erase-line controls are ours and go past the CLI's sanitising stream (its `raw`): the text holds only
    # phase names written here and numbers, nothing from a trace or a job file.
    stream = getattr(sys.stderr, "raw", sys.stderr)
    with contextlib.suppress(OSError, ValueError):     # stderr closed or gone: progress is never worth an error
        stream.write("\r\x1b[K" + text)
        stream.flush()
