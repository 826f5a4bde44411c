"""Writing into the output folder so that no reader ever sees a half-written or mixed report.

A report folder is built complete under a hidden name beside it, then swapped in with one
`renameat2(RENAME_EXCHANGE)` (Linux); where that call does not exist, the old folder is
moved away and the new one moved in under the output folder's lock (the folder is briefly
absent, never mixed). Either way a crash leaves the old complete folder or the new one,
and the staging folder is removed on every path out, including Ctrl-C and SIGTERM
(cli turns both into exceptions, so `finally` runs).

Every job of a run, failed or not, leaves a status record (job, exit code, reason) in
`.status/`: not a report, just what the index is built from, so the index lists failed
jobs too. Its paths are relative (the job file to the output folder, paths in the reason to
the job file's folder), so it does not depend on the current directory or the checkout's
place. Hidden names cannot collide with jobs: a job name starts with a letter or digit.
Files get the permissions the umask gives, like any other file the user creates.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline import bundled
from pipeline.errors import UsageError, shown, without_current_folder

STATUS_DIR = ".status"
LOCK_FILE = ".lock"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_NO_FOLLOW = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def replace_folder(folder: Path, files: dict[str, str]) -> list[Path]:
    """Make `folder` hold exactly `files`, all at once; the previous content goes as a whole."""
    folder = Path(folder)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        stage = _unique(folder.parent, f".{folder.name}.new-")
        stage.mkdir(mode=0o777)                      # the umask applies, as for any folder
    except OSError as exc:
        raise UsageError(f"{folder}: cannot write the report ({exc.strerror})") from None
    try:
        for name, text in files.items():
            with open(stage / name, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        _swap_in(stage, folder)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot write the report ({exc.strerror}); the previous report, if any, "
                         "is unchanged") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)     # after an exchange it holds the previous folder
    return [folder / name for name in files]


def write_files(folder: Path, files: dict[str, str]) -> list[Path]:
    """Files into a shared folder (index, compare, history): each written to a temp name, then renamed.

    Every temp file is removed if anything fails or is interrupted before its rename.
    """
    folder = Path(folder)
    staged: list[tuple[str, Path]] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            tmp = _unique(folder, f".{name}.", ".tmp")
            staged.append((name, tmp))
            with open(tmp, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        while staged:
            name, tmp = staged[0]
            os.replace(tmp, folder / name)
            staged.pop(0)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot write {', '.join(files)} ({exc.strerror})") from None
    finally:
        for _, tmp in staged:
            tmp.unlink(missing_ok=True)
    return [folder / name for name in files]


def _unique(folder: Path, prefix: str, suffix: str = "") -> Path:
    return folder / f"{prefix}{secrets.token_hex(6)}{suffix}"


def _swap_in(stage: Path, folder: Path) -> None:
    """Put `stage` at `folder`; afterwards `stage` is gone or holds the previous folder."""
    for _ in range(100):
        try:
            os.rename(stage, folder)                  # nothing (or an empty folder) there: one atomic step
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
        if _exchange(stage, folder):
            return
        with locked(folder.parent):                   # no exchange here: move the old one away first
            old = _unique(folder.parent, f".{folder.name}.old-")
            with contextlib.suppress(FileNotFoundError):
                os.rename(folder, old)
            try:
                os.rename(stage, folder)
                return
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
            finally:
                shutil.rmtree(old, ignore_errors=True)
    raise OSError(errno.EBUSY, "other runs keep replacing this folder", str(folder))


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where the call or the file system lacks it."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError, TypeError):
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """The output folder's lock (flock on a hidden file); a no-op where flock does not exist."""
    try:
        import fcntl
    except ImportError:                               # pragma: no cover - Windows
        yield
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    try:                                              # a planted link is never followed out of the folder
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDWR | os.O_CREAT | _NO_FOLLOW, 0o666)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise _planted(Path(folder) / LOCK_FILE) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def record(out_root: Path, row: dict[str, Any], summary: dict[str, Any] | None = None) -> None:
    """Leave this job's status record; it replaces earlier records of the same job name or job file.

    The record names the job file relative to the output folder, and paths in the reason relative
    to the job file's folder (job_reference, job_relative): the same jobs run from another folder,
    or from a copy of the checkout elsewhere, leave the same bytes, and no machine's folders.
    `summary`: what the index shows of the job's report (index.summary), kept so the index need
    not read the report again. The reason is kept as the terminal showed it (errors.shown): the index's
    "no NVTX range matches 'train_step'" hid the zero-width space in the name asked for.
    """
    folder = Path(out_root) / STATUS_DIR
    if folder.is_symlink():                           # its records would be written wherever it points
        raise _planted(folder)
    job_file = Path(row["job"]).resolve()
    job = job_reference(out_root, job_file)
    rec = {"job": job, "name": row.get("name"), "exit_code": row["exit_code"], "status": row["status"],
           "reason": shown(_short(job_relative(row.get("reason") or "", Path(row["job"])))),     # as the terminal
           "report": Path(row["report"]).name if row.get("report") else None,
           **({"summary": summary} if summary is not None else {})}
    key = rec["name"] or "job-" + hashlib.sha256(job.encode()).hexdigest()[:16]
    with locked(out_root):
        for other in read_records(out_root):
            if record_job_file(out_root, other) == job_file and other["_file"] != f"{key}.json":
                (folder / other["_file"]).unlink(missing_ok=True)
        write_files(folder, {f"{key}.json": json.dumps(rec, indent=1, sort_keys=True) + "\n"})


def _planted(path: Path) -> UsageError:
    return UsageError(f"{path}: a symbolic link where mfu keeps its own files; writes stay inside the output "
                      "folder and never follow a link out of it: remove the link")


def job_reference(out_root: Path, job_file: Path) -> str:
    """The job file as a record names it: relative to the output folder ('../jobs/a.yaml'), which
    neither the current directory nor the checkout's place changes, and which still tells two job
    files of the same name apart. Absolute only where no relative path exists (another drive)."""
    try:
        return Path(os.path.relpath(job_file, Path(out_root).resolve())).as_posix()
    except ValueError:
        return job_file.as_posix()


def record_job_file(out_root: Path, rec: dict[str, Any]) -> Path:
    """The absolute job file a record is about; a record written before job_reference kept it as `job_path`."""
    if "job_path" in rec:
        return Path(rec["job_path"])
    return Path(os.path.normpath(Path(out_root).resolve() / rec["job"]))


def job_relative(reason: str, job: Path) -> str:
    """`reason` with the job file's folder left out of the paths in it, however it was reached (as
    typed, absolute, through symlinks): 'jobs/a.yaml:2:1' and '/home/x/jobs/traces/t.sqlite' become
    'a.yaml:2:1' and 'traces/t.sqlite', paths relative to the job file's folder as its trace paths are. The
    current folder a missing job file was looked for in (errors.without_current_folder) is left out too. A file
    the package ships, which messages name by its whole path, is named inside the package first
    ('pipeline/_data/configs/models.yaml:12:7'), wherever the job file is."""
    reason = without_machine_folders(reason)
    folders = {str(job.resolve().parent), os.path.abspath(job.parent)}
    if job.parent != Path("."):
        folders.add(str(job.parent))                       # as typed, relative to the current directory
    for folder in sorted(folders, key=len, reverse=True):
        reason = under_folder(reason, folder, "")
    return reason


def without_machine_folders(text: str) -> str:
    """`text` as what is kept or read by a tool names paths: without the current folder a missing file was looked
    for in (errors.without_current_folder), and a file the package ships named inside the package
    ('pipeline/_data/configs/models.yaml') rather than by this machine's folders; paths the user typed stay."""
    text = without_current_folder(text)
    for folder, name in sorted(bundled.kept_names().items(), key=lambda f: len(f[0]), reverse=True):
        text = under_folder(text, folder, name)
    return text


def under_folder(text: str, folder: str, replacement: str) -> str:
    """`text` with `folder` (and its separator) at the start of each path in it replaced by `replacement`: a
    whole path only, not the tail of another ('/x/jobs/' is not replaced inside '/y/x/jobs/')."""
    if folder.rstrip(os.sep) + os.sep not in text:        # most texts name no such folder: no pattern to run
        return text
    return re.sub(r"(?<![\w.~/-])" + re.escape(folder.rstrip(os.sep) + os.sep), lambda _: replacement, text)


def read_records(out_root: Path) -> list[dict[str, Any]]:
    """Every readable status record, by file name; `_file` names the record's file."""
    out = []
    for path in sorted((Path(out_root) / STATUS_DIR).glob("*.json")):
        with contextlib.suppress(OSError, ValueError):
            rec = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(rec, dict) and {"job", "exit_code", "status", "reason"} <= rec.keys():
                out.append({**rec, "_file": path.name})
    return out


def _short(reason: str, limit: int = 2000) -> str:
    """Records stay small: a traceback is cut to its last lines, long lists to `limit` characters."""
    lines = reason.strip().splitlines()
    if reason.startswith("Traceback"):
        lines = lines[-3:]
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + " …"
