"""`mfu` command line: a thin argparse layer that maps errors to exit codes.

parser.py holds every option and its help text, and the exit codes `--help` prints; commands.py
holds one function per command. A user's mistake is one message and a documented exit code,
never a traceback; anything else is a bug (exit 5) and shows everything needed to fix it.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import errno
import gc
import os
import sys
import traceback
from collections.abc import Iterator
from typing import Any, TextIO

# numpy's OpenBLAS reserves buffers per thread at import and, short of memory (`ulimit -v`), exits 1 or crashes
# instead of raising: mfu multiplies no matrices, one BLAS thread is all it needs. Set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


M_ARENA_MAX = -8                    # glibc's malloc.h


def _under_a_memory_limit() -> None:
    """Under `ulimit -v`, as `mfu` starts (issue 33); without a limit nothing:
    - one malloc arena for the process. glibc gives each thread that allocates an arena of its own, a 64 MB
      reservation of address space: DuckDB's threads and the hashing thread took 185 MB of a 400 MB limit before a
      row was read. Without a limit threads keep their own (no waiting on one lock); elsewhere than glibc, mallopt
      is absent or says no;
    - numpy imported first, before DuckDB's 90 MB library and before DuckDB holds the memory left: OpenBLAS
      reserves its buffers at import and, short of them, exits 1 (a threshold's code; `mfu inspect` under 250 MB)
      or crashes instead of raising. A warm run without a limit never needs numpy (0.04 s)."""
    import resource
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)
    with contextlib.suppress(ImportError):   # a library it cannot map: imported again where the failure is exit 2
        import numpy  # noqa: F401


_under_a_memory_limit()

from pipeline import interrupts, nopandas, progress  # noqa: E402
from pipeline.cli.parser import build_parser
from pipeline.errors import ExitCode, MfuError, environment_error, shown

__all__ = ["build_parser", "console", "main"]


def main(argv: list[str] | None = None) -> int:
    with nopandas.blocked(), _shown_streams():    # DuckDB's client would import pandas for nothing mfu reads
        return _command(argv)


def console() -> int:
    """`mfu` itself (the console script, `python -m pipeline.cli`): main, in a process that ends with it.

    Its objects are then frozen out of the garbage collector: Python's exit runs a full collection over every
    object still tracked, numpy's, DuckDB's and Jinja's 35 k after a run, 0.05-0.07 s of CPU on every command
    that imports them, a cold `mfu run` included (bench/RESULTS.md). Nothing the command made waits on that
    collection: it closed its connections and folders itself, and weakref.finalize callbacks run at exit anyway."""
    try:
        return main()
    finally:
        gc.freeze()


def _command(argv: list[str] | None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:                          # options between positionals: `mfu run a.yaml -j 2 b.yaml`
        args, unknown = _intermixed(args, sys.argv[1:] if argv is None else list(argv))
    if unknown:                          # the command's usage and --help, not the top level's
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    progress.configure(_progress_wanted(args))
    for stream in (sys.stdout, sys.stderr):  # names from a trace in an ASCII or Latin-1 locale: escaped, not a crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    return _guarded(args)


@contextlib.contextmanager
def _shown_streams() -> Iterator[None]:
    """Everything the command prints, on either stream, through errors.shown: the one choke point between names
    from traces, job files and file names and the terminal, whichever message carries them."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if s is None else ShownStream(s) for s in streams)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams


class ShownStream:
    """A text stream whose writes pass through errors.shown; everything else is the stream's own. `raw` is the
    stream itself, for the one writer of terminal controls of its own (a batch's progress line)."""

    def __init__(self, raw: TextIO):
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(shown(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def _guarded(args: argparse.Namespace) -> int:
    try:
        with interrupts.handled():
            code = int(args.func(args))
            if sys.stdout is not None:
                sys.stdout.flush()       # a full disk under `> file` is met here, not at exit
            return code
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except BrokenPipeError:              # `mfu inspect t | head`: the reader has what it wanted
        _stdout_to_devnull()
        return 0
    except Exception as exc:
        if interrupts.pending():         # DuckDB reports a signal during a query as its own error
            return _interrupted(exc)
        if isinstance(exc, MfuError):
            print(f"error: {exc}", file=sys.stderr)
            return int(exc.code)
        if (around := environment_error(exc)) is not None:
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):   # a full disk under stdout:
                # what is still buffered cannot be written
                _stdout_to_devnull()
            print(f"error: {around}", file=sys.stderr)
            return int(around.code)
        # a bug, not a user mistake: show everything needed to fix it
        traceback.print_exc()
        print("internal error: this is a bug in mfu-pipeline; please report it with the text above",
              file=sys.stderr)
        return int(ExitCode.INTERNAL)


def _progress_wanted(args: argparse.Namespace) -> bool:
    """--progress / --no-progress when given; else only for a person watching: stderr a terminal, no JSON for a
    tool on stdout, no CI (whose logs would keep every redrawn line)."""
    if getattr(args, "progress", None) is not None:
        return args.progress
    return (sys.stderr is not None and sys.stderr.isatty() and getattr(args, "format", "text") != "json"
            and not os.environ.get("CI"))


def _intermixed(args: argparse.Namespace, argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The command's arguments parsed again with options and positionals mixed: argparse gives a command's
    JOB... or INPUT... only the names before the first option, and called the later ones unrecognized."""
    own, unknown = args.parser.parse_known_intermixed_args(argv[argv.index(args.command) + 1:])
    return argparse.Namespace(**{**vars(args), **vars(own)}), unknown


def _stdout_to_devnull() -> None:
    """No second error when Python flushes stdout at exit."""
    if sys.stdout is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _interrupted(exc: BaseException) -> int:
    """Ctrl-C (exit 130) or SIGTERM (143): one line, no traceback; cleanup already ran on the way out,
    but for DuckDB's spill folder, which an interrupted query can leave behind."""
    from pipeline.trace.connection import remove_orphaned_spills
    remove_orphaned_spills(own=True)
    signal_exc = interrupts.pending() or (exc if isinstance(exc, interrupts.Interrupted) else None)
    code = signal_exc.exit_code if signal_exc else 130
    print("interrupted" if code == 130 else f"terminated (signal {code - 128})", file=sys.stderr)
    return code
