"""The trace file itself, before and beside DuckDB: may it be read, and its SHA-256.

A trace is the user's data and is never written: a file that is not an SQLite export, or that
has unmerged changes beside it, is refused here with what to do instead, and a WAL-mode file is
read through a private copy, because SQLite would otherwise create files beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from pipeline.errors import TraceError

SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100


def check_file(path: Path) -> None:
    if not path.exists():
        raise TraceError(f"{path}: trace file not found; check the path (a job's `trace:` is relative to the "
                         "job file, a path on the command line to the current folder)")
    if not path.is_file():
        raise TraceError(f"{path}: is not a file")
    try:
        with path.open("rb") as fh:
            head = fh.read(HEADER_BYTES)
            size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise TraceError(f"{path}: cannot be read ({exc.strerror})") from exc
    if head[:len(SQLITE_MAGIC)] != SQLITE_MAGIC:
        raise TraceError(f"{path}: not an SQLite file{_not_sqlite_hint(path)}")
    if (short := _cut_short(head, size)) is not None:
        raise TraceError(f"{path}: truncated: {size:,} bytes, {short}; the copy or export that wrote it did not "
                         "finish. Copy it again from where it was recorded, or export it again with "
                         "`nsys export --type sqlite`")
    for suffix in ("-wal", "-journal"):
        side = Path(f"{path}{suffix}")
        if side.is_file() and side.stat().st_size > 0:
            raise TraceError(
                f"{side}: changes to the trace not yet merged into it (the program writing it is still at work, or "
                f"stopped before it finished); reading the trace here would write beside it, and skipping them "
                f"would hide data. Once nothing writes it, fold "
                f"them in on a copy: cp '{path}' '{side}' DIR/ && python3 -c \"import sqlite3; "
                f"sqlite3.connect('DIR/{path.name}').execute('PRAGMA journal_mode=DELETE')\", then point trace: at "
                f"DIR/{path.name}")


def _not_sqlite_hint(path: Path) -> str:
    """What the file probably is, by its name: a report Nsight Systems has not exported yet (.qdrep before
    2021.3), or a job file given where the trace goes (`mfu inspect job.yaml`)."""
    suffix = path.suffix.casefold()
    if suffix in (".nsys-rep", ".qdrep"):
        return (f" (an Nsight Systems report: export it with "
                f"`nsys export --type sqlite -o {path.stem}.sqlite {path.name}`)")
    if suffix in (".yaml", ".yml"):
        return (" (a YAML file, a job file perhaps: the trace is the `nsys export --type sqlite` output; "
                "`mfu validate` and `mfu run` take job files)")
    return ""


def _cut_short(head: bytes, size: int) -> str | None:
    """Why a file with the SQLite magic is shorter than the database it holds, or None.

    SQLite itself refuses a file missing whole pages, but reads a partial last page as zeros: rows
    silently lost, figures measured wrong with exit 0. The header (sqlite.org/fileformat.html §1.3)
    gives the page size (offset 16) and, when valid (offset 24 equals offset 92), the page count
    (offset 28); a complete file is at least that long and always a whole number of pages.
    """
    if len(head) < HEADER_BYTES:
        return f"shorter than the {HEADER_BYTES}-byte SQLite header"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    if pages and head[24:28] == head[92:96] and size < pages * page:
        return f"but its SQLite header says {pages * page:,} ({pages:,} pages of {page:,} bytes)"
    if page and size % page:
        return f"not a whole number of its {page:,}-byte pages"
    return None


# Bytes 18 and 19 of the SQLite header: 2 and 2 in WAL mode, 1 and 1 in rollback-journal mode.
_WAL_HEADER = (18, b"\x02\x02")


def wal_header(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(_WAL_HEADER[0])
        return fh.read(2) == _WAL_HEADER[1]


def rollback_copy(path: Path) -> Path:
    """A private copy of a WAL-mode trace with nothing left to merge (check_file saw no -wal), read as
    a rollback-journal database.

    SQLite opens a WAL-mode file only by creating `-wal` and `-shm` beside it (and fails on a
    read-only file system), and the scanner cannot ask for `immutable`. Since nothing is unmerged,
    the copy with the header's mode bytes set to rollback holds exactly the trace's data. It is
    removed with the Trace that reads it (attach), also in a worker that is interrupted.
    """
    folder = Path(tempfile.mkdtemp(prefix="mfu-wal-trace-"))
    copy = folder / path.name
    try:
        shutil.copyfile(path, copy)
        with copy.open("r+b") as fh:
            fh.seek(_WAL_HEADER[0])
            fh.write(b"\x01\x01")
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise TraceError(f"{path}: is in WAL mode, and a private copy to read it without writing beside it "
                         f"could not be made in {folder.parent} ({exc.strerror}); set TMPDIR to a folder "
                         "with room for it") from None
    return copy


class Hashing:
    """A file's SHA-256, hashed block by block in a daemon thread at the lowest CPU priority.

    Hashing a trace is a full read of it (0.11 s of CPU at 2 M kernels). Beside DuckDB's two
    threads on two cores, at normal priority it cost the cold run about 0.04 s of wall time
    (bench/phases.py, paired runs, load 1); at nice 19 (Linux) it takes only what DuckDB leaves
    idle. Whoever needs the digest first (`result`) hashes the remaining blocks itself at its own
    priority, so a loaded machine cannot starve the run, and a reading error reaches it. A thread
    of its own, not a pool: a pool's thread does not survive a fork; a forked process hashes the
    file itself.
    """

    BLOCK = 1 << 20

    def __init__(self, path: Path):
        self.path, self.pid = path, os.getpid()
        try:
            self._stat: tuple[int, int, int] | None = _identity(path)
        except OSError:                                  # result() meets the reading error
            self._stat = None
        self._lock = threading.Lock()
        self._digest = hashlib.sha256()
        self._file: Any = None
        self._hex: str | None = None
        threading.Thread(target=self._background, name="mfu-sha256", daemon=True).start()

    def result(self) -> str:
        """The digest, asked for once the run has read what it needs: a file whose identity (_identity) moved
        since it was attached was rewritten meanwhile, and what was read may mix both versions."""
        try:
            if self.pid != os.getpid():
                digest = file_sha256(self.path)
            else:
                while (known := self._step()) is None:
                    pass
                digest = known
        except OSError:
            if not self._moved():
                raise
            digest = ""
        if self._moved():
            raise TraceError(f"{self.path}: changed while this run read it (its size, modification or change time "
                             "moved, or it is gone), so the figures could mix two versions of it; run again when "
                             "nothing writes the file")
        return digest

    def _moved(self) -> bool:
        """Whether the file is no longer the one attached (a missing file at attach: nothing to compare)."""
        if self._stat is None:
            return False
        try:
            return _identity(self.path) != self._stat
        except OSError:
            return True

    def _background(self) -> None:
        if sys.platform.startswith("linux"):             # per-thread nice: Linux only
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        with contextlib.suppress(OSError, MemoryError):  # result() reads on and raises it, in the main thread: out
            while self._step() is None:                  # of memory here was a traceback of thread mfu-sha256
                pass

    def _step(self) -> str | None:
        """Hash the next block; the digest once it is known (None while blocks remain)."""
        with self._lock:
            if self._hex is not None:
                return self._hex
            if self._file is None:
                self._file = self.path.open("rb")
            block = self._file.read(self.BLOCK)
            if block:
                self._digest.update(block)
                return None
            self._file.close()
            self._hex = self._digest.hexdigest()
            return self._hex


def _identity(path: Path) -> tuple[int, int, int]:
    """Size, modification and change time: the change time (ctime) also moves when bytes are written back with
    the old modification time restored (`touch -r`), or another file is renamed over the path, and no file tool
    can set it back (cache.py keys its entries on the same three)."""
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def file_sha256(path: Path) -> str:
    """The whole file's SHA-256 in this thread (Hashing.result in a forked process)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(Hashing.BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()
