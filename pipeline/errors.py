"""Exit codes and the user-facing errors that map to them.

Every error a user can cause is one of these classes; the CLI turns them into
a message and an exit code, never a traceback. Anything else is a bug (exit 5).
"""

from __future__ import annotations

import enum
import errno
import os
from dataclasses import dataclass
from typing import TypedDict


class ExitCode(enum.IntEnum):
    """Documented exit codes (README and `mfu --help` list the same)."""

    OK = 0
    THRESHOLD = 1
    USAGE = 2
    CONFIG = 3
    TRACE = 4
    INTERNAL = 5


class ResultWarning(TypedDict):
    """One of result.json's warnings: what a run measured but the reader should doubt. Not an error: the run
    goes on and says it (a Problem stops it)."""

    code: str                   # stable, for scripts to filter on (schemas/result.schema.json lists them)
    message: str                # the words the reports print


@dataclass
class Problem:
    """One thing wrong in a config file, located precisely enough to fix."""

    message: str
    pointer: str = ""          # JSON pointer, e.g. /workload/global_batch
    file: str = ""
    line: int | None = None    # 1-based
    col: int | None = None     # 1-based
    hint: str = ""             # what to write instead

    def __str__(self) -> str:
        where = self.file or "<job>"
        if self.line is not None:
            where += f":{self.line}:{self.col or 1}"
        if self.pointer or self.line is not None:
            where += f": {self.pointer or '/'}"
        text = f"{where}: {self.message}"
        if self.hint:
            text += f" (fix: {self.hint})"
        return text


class MfuError(Exception):
    """Base of user-facing errors; `code` is the process exit code."""

    code: ExitCode = ExitCode.INTERNAL

    def __reduce__(self) -> tuple:
        """Errors cross processes (a worker's task fails): rebuilt from message and attributes, not
        by calling __init__ again, whose arguments differ per class (ConfigError takes problems)."""
        return _rebuild, (type(self), self.args, self.__dict__)


def _rebuild(cls: type[MfuError], args: tuple, state: dict) -> MfuError:
    exc = cls.__new__(cls)
    Exception.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


class UsageError(MfuError):
    code = ExitCode.USAGE


class ConfigError(MfuError):
    """A job (or catalog) file is wrong; carries every problem found, not just the first.

    `job_name` and `config_sha256`: the name the job file gives itself (when no problem is about it) and
    the hash a loaded job would carry (Job.sha256), when the file was read that far: a history records the
    failed job under its name, beside its config hash, rather than not at all."""

    code = ExitCode.CONFIG

    def __init__(self, problems: list[Problem], job_name: str | None = None, config_sha256: str | None = None):
        self.problems = in_file_order(problems)
        self.job_name, self.config_sha256 = job_name, config_sha256
        lines = [str(p) for p in self.problems[:SHOWN_PROBLEMS]]
        if len(self.problems) > SHOWN_PROBLEMS:
            lines.append(f"and {len(self.problems) - SHOWN_PROBLEMS:,} more problems (`mfu validate --format json` "
                         "lists every one)")
        super().__init__("\n".join(lines))


# A ConfigError's message lists this many problems, then says how many more there are (`problems` holds them all):
# a job file with 40,000 unknown keys printed 40,000 lines (issue #33).
SHOWN_PROBLEMS = 50


def in_file_order(problems: list[Problem]) -> list[Problem]:
    """Problems as a user fixes them, top to bottom: by file, line, column; in a file, those without a line
    after those with one; ties in the order found. The checks that find them (parser, schema, scope rules,
    model) run one after another, and listing them in that order sent the user up and down the file."""
    return sorted(problems, key=lambda p: (p.file, p.line is None, p.line or 0, p.col or 0))


class TraceError(MfuError):
    """The trace cannot answer the question: unreadable, not an export, region missing."""

    code = ExitCode.TRACE


class HardwareError(MfuError):
    """No trustworthy peak: unknown GPU, mixed GPUs, no GPU table and no override.

    Raised as a config problem (exit 3) because the fix is always in the job file; `pointer` names
    the key the fix changes, so a run can locate the error in the job file (run.run_job).
    """

    code = ExitCode.CONFIG

    def __init__(self, message: str, pointer: str = "/hardware/gpu"):
        self.pointer = pointer
        super().__init__(message)


def shown(text: str) -> str:
    """`text` as a terminal may print it: every control or invisible character (ESC, CR, an OSC-8 link's bytes,
    a zero-width space, a bidi override; what str.isprintable refuses) written out as its escape (`\\x1b`,
    `\\r`, `\\u200b`), line breaks and tabs kept. Names from a trace, a job file or a file name reach messages
    as they are: raw, an ESC could rewrite the screen and 'train\\u200b_step' read as 'train_step'. The CLI
    writes everything it prints through this one function (cli.main's streams)."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else _escape(c) for c in text)


def _escape(char: str) -> str:
    named = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\b": "\\b", "\x07": "\\a"}
    code = ord(char)
    return named.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                                else f"\\U{code:08x}")


def from_current_folder() -> str:
    """Where a relative path on the command line was looked for, said after it on the terminal; a report, a
    history or `mfu run --format json` leaves it out (`without_current_folder`): it names this machine's folders."""
    return f" (relative to the current folder, {os.getcwd()})"


def without_current_folder(text: str) -> str:
    """`text` as a file or a tool gets it: 'nosuch.yaml: no such job file', the path as the user typed it, without
    the absolute folder the terminal's message adds (from_current_folder)."""
    return text.replace(from_current_folder(), "")


def io_reason(exc: BaseException) -> str:
    """Why a write failed, in the system's words: the OSError's text, or the end of DuckDB's IO error
    ('Could not write file "…": No space left on device')."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).strip().splitlines()[0].rsplit(": ", 1)[-1]


# What a memory limit (`ulimit -v`) looks like when it is met outside an allocation Python or DuckDB reports as
# such: a shared library that cannot be mapped (numpy's import, DuckDB's LOAD), a thread without a stack.
_MEMORY_WORDS = ("failed to map segment from shared object", "cannot allocate memory", "can't start new thread",
                 "bad_alloc", "bad allocation", "out of memory")


def _short_of_memory(exc: BaseException) -> bool:
    """Any of DuckDB's exceptions, by module: besides IOException (a LOAD) and InternalException, a query in a
    batch worker under `ulimit -v` raised its base class, duckdb.Error('out of memory'), an internal error (exit 5)."""
    kinds = isinstance(exc, (ImportError, RuntimeError, OSError)) or type(exc).__module__ in ("_duckdb", "duckdb")
    return kinds and any(word in str(exc).lower() for word in _MEMORY_WORDS)


def environment_error(exc: BaseException) -> UsageError | None:
    """A failure of the machine around the run, not of mfu or its inputs: a full disk, memory exhausted,
    the current folder removed, a path longer than the file system takes. A usage error (exit 2) saying what
    to do; None for anything else."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f" {exc.filename}" if exc.filename else " (standard output or a file)"
        return UsageError(f"cannot write{where}: {exc.strerror}; free space there and run again")
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryException" or _short_of_memory(exc):
        said = str(exc).strip().splitlines()[-1 if isinstance(exc, ImportError) else 0] if str(exc).strip() \
            else "MemoryError"      # DuckDB's by name: no duckdb import here; numpy's ImportError says why last
        return UsageError(f"out of memory ({said.strip()}); free memory, raise the limit (`ulimit -v`, a "
                          "container's), or run fewer jobs at once (--jobs)")
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:   # any path given: a trace, --out, a job
        name = str(exc.filename or "")
        shown = name if len(name) <= 80 else f"{name[:40]}…{name[-30:]} ({len(name):,} characters)"
        return UsageError(f"{shown}: {exc.strerror} for this file system; use a shorter path")
    if isinstance(exc, OSError):
        try:
            os.getcwd()
        except FileNotFoundError:
            return UsageError("the current folder no longer exists (removed while in use); cd into an existing "
                              "folder and run again")
    return None
