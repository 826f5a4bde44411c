"""DuckDB connections as mfu opens them: offline, capped in memory, spilling into a folder of their own.

Every connection is made here (duckdb_connect): extension autoloading and autoinstalling are off, and a trace's
connection (connect) loads DuckDB's SQLite scanner from the pinned `duckdb-extension-sqlite` wheel, never from
the network. Its working memory is capped so a big trace spills instead of growing past what the machine has,
and its spill folder is cleared after a worker that was killed (remove_orphaned_spills).
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from pipeline import interrupts
from pipeline.errors import TraceError
from pipeline.trace import queries

# DuckDB's working memory; beyond it, sorts, joins and temp tables spill to disk. Without a limit
# an 8 M-kernel trace peaked at 1.9 GB RSS; with it, under 1 GB (bench/RESULTS.md).
MEMORY_LIMIT = "512MB"
SMALLEST_LIMIT_MB = 16
# Beyond the scanner's file, what a connection, loading the scanner and the first queries map: under `ulimit -v`
# it loaded with 34 MB left and the process crashed (SIGSEGV) at once, from 44 MB left it ran; a connection
# opened with less than that crashed as it was closed (issue 33).
SCANNER_MARGIN = 32 << 20
# After a query whose allocations peaked above this, DuckDB hands freed memory back to the system
# (its default, 128 MB, kept the 300 MB of tables a finished window build drops until the union
# pass had allocated its arrays on top: 8 M kernels peaked at 0.89 GB RSS, with 32 MB at 0.82 GB).
ALLOCATOR_FLUSH = "32MB"
SPILL_PREFIX = "mfu-duckdb-spill-"


# No extension is ever fetched or loaded by itself: a `--history` file holding SQLite made DuckDB download its
# scanner and create ~/.duckdb. Only _load_scanner loads one, from the installed wheel.
QUIET = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def duckdb_connect(database: str = ":memory:", read_only: bool = False,
                   config: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """THE way mfu opens a DuckDB connection (a trace's, a history file, RE2 checks): extension autoloading and
    autoinstalling off (QUIET), whatever else `config` sets, so nothing tries the network at run time."""
    return duckdb.connect(database, read_only=read_only, config={**(config or {}), **QUIET})


@functools.lru_cache(maxsize=1)
def memory_limit() -> str:
    """DuckDB's working memory: MEMORY_LIMIT, or under an address-space limit (`ulimit -v`) half of what this
    process has left of it when the first trace opens, so DuckDB spills instead of allocating what is not there. At
    512 MB under a 400 MB limit it failed to allocate a block, or aborted on std::bad_alloc in one of its own
    threads, which no Python code can catch (issue 33). Once per process: window_trim.sql sets it back the same."""
    left = address_space_left()
    if left is None:
        return MEMORY_LIMIT
    return f"{min(max(left >> 21, SMALLEST_LIMIT_MB), int(MEMORY_LIMIT.removesuffix('MB')))}MB"


def address_space_left() -> int | None:
    """Bytes this process may still map under `ulimit -v`; None without a limit, or where it cannot be measured
    (no /proc: not Linux)."""
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        used = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
    return max(soft - used, 0)


# DuckDB threads per connection in a worker of a pool (executor.py): the cores shared out between the workers, so
# that N workers on N cores do not each start N threads (None: DuckDB's default, every core).
_worker_threads: list[int | None] = [None]


def set_worker_threads(threads: int | None) -> None:
    """How many threads the connections this process opens from now on use (executor.py sets it in workers)."""
    _worker_threads[0] = threads


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the SQLite scanner loaded from the pinned wheel, never the network.

    Its memory is capped (memory_limit()); beyond it DuckDB spills into a folder of its own under
    the system temp folder, not its default `.tmp` in the working directory, which may sit beside
    the user's trace. DuckDB creates that folder only when it spills and removes it on close, so
    a run that does not spill leaves nothing behind; the random name keeps connections and users
    apart, the process id lets remove_orphaned_spills() clear up after a killed worker.
    """
    left, needed = address_space_left(), sqlite_extension_path().stat().st_size + SCANNER_MARGIN
    if left is not None and left < needed:     # with less, the process crashed (SIGSEGV) in DuckDB, past any handler
        raise MemoryError(f"{left >> 20} MB of address space left, {needed >> 20} MB needed to open DuckDB with its "
                          "SQLite scanner")
    spill = Path(tempfile.gettempdir()) / f"{SPILL_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
    con = duckdb_connect(config={
        "memory_limit": memory_limit(),
        "allocator_flush_threshold": ALLOCATOR_FLUSH,
        "temp_directory": str(spill),
        "allow_unsigned_extensions": True,      # for the one LOAD below only: see _load_scanner
        **({"threads": _worker_threads[0]} if _worker_threads[0] else {}),
    })
    try:
        _load_scanner(con)
    except BaseException:
        con.close()
        raise
    queries.run(con, "macros")
    queries.run(con, "gpu_work")
    return con


def _load_scanner(con: duckdb.DuckDBPyConnection) -> None:
    """LOAD the wheel's scanner without DuckDB's signature check, then switch the check back on.

    The check hashes the whole 35 MB binary: 0.09-0.13 s of every process (bench/RESULTS.md), each
    batch worker included. It guards extensions fetched from somewhere; this one is a file of the
    pinned `duckdb-extension-sqlite` wheel, installed by pip into the same environment as DuckDB's
    own native library, which is loaded unchecked too. Unsigned loading is off again before any
    query runs, so no later LOAD on this connection can skip the check.
    """
    with loadable_scanner() as scanner:
        con.execute(f"LOAD '{scanner}'")
    con.execute("SET allow_unsigned_extensions = false")


def remove_orphaned_spills(own: bool = False) -> None:
    """Remove spill folders of processes that no longer run: a worker killed while DuckDB spilled
    (a Dask worker stopped by its nanny) never closes its connection, so DuckDB never removes them.

    `own`: this process's too, once its work has stopped. After Ctrl-C in a query that spilled,
    DuckDB kept the folder (about 100 MB at 4 M kernels) although the connection was closed.
    """
    for folder in Path(tempfile.gettempdir()).glob(SPILL_PREFIX + "*"):
        pid = folder.name.removeprefix(SPILL_PREFIX).split("-")[0]
        if pid.isdigit() and (not _running(int(pid)) or (own and int(pid) == os.getpid())):
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                 # another user's process: alive, and not ours to clear
        return True
    return True


@contextlib.contextmanager
def loadable_scanner() -> Iterator[Path]:
    """The wheel's scanner under the file name DuckDB derives its entry point from, while it is loaded.

    DuckDB looks for `<file stem>_duckdb_cpp_init`, and the wheel ships `sqlite.duckdb_extension`
    for the `sqlite_scanner` extension. A link named `sqlite_scanner.duckdb_extension` in a private
    temporary folder is loaded directly: no INSTALL, so nothing is copied into ~/.duckdb and no
    copy installed there from another environment is ever picked up instead. The folder is removed
    as soon as the LOAD returns (the library stays mapped), not at exit: a worker that is killed,
    or exits through os._exit, leaves no `mfu-duckdb-ext-*` folder behind. A Ctrl-C meanwhile is raised
    once the folder is gone (interrupts.deferred).
    """
    with interrupts.deferred():              # Ctrl-C inside mkdtemp or rmtree left the folder (interrupts.py)
        folder = Path(tempfile.mkdtemp(prefix="mfu-duckdb-ext-"))
        try:
            link = folder / "sqlite_scanner.duckdb_extension"
            try:
                link.symlink_to(sqlite_extension_path())
            except OSError:                      # no symlinks here (some Windows setups): copy instead
                shutil.copyfile(sqlite_extension_path(), link)
            yield link
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def sqlite_extension_path() -> Path:
    """The scanner binary shipped inside `duckdb-extension-sqlite` for our DuckDB version."""
    try:
        import duckdb_extension_sqlite
    except ImportError as exc:  # an install problem, not a user mistake in a job
        raise TraceError("the package duckdb-extension-sqlite is not installed; "
                         "run: pip install duckdb-extension-sqlite==" + duckdb.__version__) from exc
    root = Path(duckdb_extension_sqlite.__file__).parent / "extensions"
    wanted = root / f"v{duckdb.__version__}" / "sqlite.duckdb_extension"
    if not wanted.is_file():
        found = sorted(p.parent.name for p in root.glob("*/sqlite.duckdb_extension"))
        raise TraceError(f"duckdb-extension-sqlite carries {found or 'no extension'}, but DuckDB is "
                         f"{duckdb.__version__}; install matching versions of both")
    return wanted
