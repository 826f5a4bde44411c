"""Where a run writes (--out, --cache, --history) is checked before any job starts.

A folder that is a file, cannot be created, or cannot be written (read-only file system,
no permission, a parent that is a file) is a usage problem (exit 2) named in one line, not a
failure of every job after the traces were read. The check creates and removes a probe entry
in the nearest existing folder, so it asks the file system itself rather than guessing from
permission bits (root passes those, a read-only mount does not).
"""

from __future__ import annotations

import secrets
from pathlib import Path

from pipeline.errors import UsageError


def folder(text: str | Path, option: str) -> Path:
    """The folder named by `option`, shown to be creatable and writable; nothing is left behind.

    The probe goes into the nearest folder that exists (the target or an ancestor), so a
    check that fails, or a run that stops later, leaves no empty folder.
    """
    if not str(text).strip():
        raise UsageError(f"{option}: an empty path; give a folder")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path}: is a file, not a folder")
    existing = path.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        if not existing.is_dir():
            raise NotADirectoryError(20, "Not a directory")
        probe = existing / f".mfu-probe-{secrets.token_hex(4)}"
        probe.mkdir()
        probe.rmdir()
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({exc.strerror})") from None
    return path


def file_in_folder(text: str | Path, option: str) -> Path:
    """A file to be created or updated (a DuckDB history): a file if it exists, in a writable folder."""
    if not str(text).strip():
        raise UsageError(f"{option}: an empty path; give a file")
    path = Path(text)
    if path.exists() and not path.is_file():            # a folder, or a device such as /dev/null
        raise UsageError(f"{option} {path}: " + ("is a folder, not a file" if path.is_dir() else
                                                  "is not a regular file (a device or a pipe); give a file"))
    folder(path.parent, option)
    return path
