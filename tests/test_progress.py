"""Progress on stderr (pipeline/progress.py): drawn on a terminal, silent otherwise; tested on a pseudo-terminal.

A phase draws once it has run progress.DELAY_S; the tests set it to 0 so every phase draws, and assert what
is drawn, never how long anything took.
"""

from __future__ import annotations

import io
import os
import pty
import select
import sys
import threading

import pytest

from pipeline import cli, progress


def _read_all(fd: int) -> str:
    out = b""
    while select.select([fd], [], [], 0.2)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    return out.decode(errors="replace")


@pytest.fixture
def terminal(monkeypatch):
    """A function putting stderr on the slave side of a pseudo-terminal (a TTY), returning a function that reads
    what was drawn there. Called in the test itself: pytest's own capture resets sys.stderr after fixtures."""
    opened: list[int] = []

    def attach():
        master, slave = pty.openpty()
        stream = os.fdopen(slave, "w", buffering=1)
        opened.append(master)
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.setattr(progress, "DELAY_S", 0.0)
        monkeypatch.delenv("CI", raising=False)
        return lambda: (stream.flush(), _read_all(master))[1]
    yield attach
    for fd in opened:
        os.close(fd)
    progress.configure(False)


def _inspect(trace, *options: str) -> int:
    return cli.main(["inspect", str(trace), *options])


def test_inspect_on_a_terminal_shows_its_phases_then_erases_them(synth_trace, capsys, terminal) -> None:
    path, _ = synth_trace(ranks=2, steps=3, kernels_per_step=8)
    drawn = terminal()
    assert _inspect(path) == 0
    drawn = drawn()
    assert "\r\x1b[Kreading the trace: " in drawn
    assert "\r\x1b[Kranking NVTX regions and kernel classes: " in drawn
    assert drawn.endswith("\r\x1b[K")                     # the last line erased: what follows starts clean
    assert "train_step" in capsys.readouterr().out        # stdout holds the report, no progress


@pytest.mark.parametrize("options, ci", [(("--format", "json"), None), (("--no-progress",), None), ((), "true")])
def test_silent_under_json_no_progress_and_ci(synth_trace, terminal, monkeypatch, options, ci) -> None:
    path, _ = synth_trace(ranks=2, steps=3, kernels_per_step=8)
    drawn = terminal()
    if ci:
        monkeypatch.setenv("CI", ci)
    assert _inspect(path, *options) == 0
    assert drawn() == ""


def test_silent_when_stderr_is_no_terminal_unless_asked(synth_trace, monkeypatch, capsys) -> None:
    path, _ = synth_trace(ranks=2, steps=3, kernels_per_step=8)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.delenv("CI", raising=False)
    for options, shown in (((), False), (("--progress",), True)):
        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        assert _inspect(path, *options) == 0
        assert ("reading the trace: " in err.getvalue()) is shown
    progress.configure(False)


def test_a_phase_counts_what_is_done_inside_the_phase_around_it(terminal) -> None:
    drawn = terminal()
    progress.configure(True)
    with progress.phase("trace files", total=8, unit="files") as files:
        files.advance(3)
        with progress.phase("attributing kernels to occurrences"):
            pass
    drawn = drawn()
    assert "\r\x1b[Ktrace files: 3/8 files done, " in drawn
    assert "; attributing kernels to occurrences: " in drawn       # drawn after the phase it runs inside


def test_nothing_is_drawn_when_off(terminal) -> None:
    drawn = terminal()
    progress.configure(False)
    with progress.phase("trace files", total=2, unit="files") as files:
        files.advance(2)
    assert drawn() == ""


def test_a_phase_outside_the_main_thread_draws_nothing(terminal) -> None:
    """A dask-local worker is forked from the command, progress on, and runs each task on a thread of its own: a
    long file's phases there drew over the command's line. Only the main thread draws."""
    drawn = terminal()
    progress.configure(True)

    def task() -> None:
        with progress.phase("attributing kernels to occurrences"):
            pass
    thread = threading.Thread(target=task)
    thread.start()
    thread.join()
    assert drawn() == ""
