"""Files a user names, read by type and size before their content.

A FIFO given as a job file blocked a run forever, and /dev/zero was read until memory ran out: a file is
opened without blocking, refused unless it is a regular file, and read at most `limit` bytes (one more
tells a larger file), so no limit is checked only after everything was read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class NotRegular(OSError):
    """The path is no regular file (a folder, a FIFO, a device, a socket): `kind` says which."""

    def __init__(self, path: Path, kind: str):
        super().__init__(f"{kind}, not a regular file")
        self.strerror, self.filename, self.kind = f"{kind}, not a regular file", str(path), kind


class TooLarge(OSError):
    """The file holds more than the limit: reading stopped at it."""

    def __init__(self, path: Path, limit: int):
        super().__init__(f"larger than {limit:,} bytes")
        self.strerror, self.filename, self.limit = f"larger than {limit:,} bytes", str(path), limit


def kind_of(mode: int) -> str | None:
    """What a file of this st_mode is, in words, when it is no regular file; None for a regular file."""
    return None if stat.S_ISREG(mode) else next((k for test, k in _KINDS if test(mode)), "a special file")


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them.

    Raises NotRegular (a folder, FIFO, device), TooLarge (more than `limit` bytes, found while reading) or
    the OSError of opening it (FileNotFoundError, PermissionError, ...). O_NONBLOCK: opening a FIFO with no
    writer returns at once instead of waiting for one; the type is then read from the open file itself."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if (kind := kind_of(os.fstat(fd).st_mode)) is not None:
            raise NotRegular(path, kind)
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise TooLarge(path, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)
