"""Read a trace once: its raw tables as Parquet, optionally kept in a cache between runs (issue #7).

DuckDB's SQLite scanner reads the file again for every query that touches it, and
row by row through SQLite. So the columns the pipeline needs (trace.RAW_TABLES) are
copied once into Parquet files and the `raw_*` views are pointed at those: every later
query runs multi-threaded over compressed columns and skips row groups outside its
time window, and a batch of jobs on one trace shares that single read.

Copying costs about two scans of the file, so a single run without a cache reads
the SQLite file directly (trace.open_trace). With `--cache DIR` (the default for a
batch) the Parquet is kept under DIR, one entry per trace, keyed by the file's size,
modification time, change time and a hash of its first and last pages (the SQLite header
with its change counter, and the tail where appends land) — cheap to check, unlike hashing
gigabytes. The change time is what catches bytes written in place with size and
modification time put back (`touch -r`): every write and utime moves it to the clock's time,
and no file tool sets it. An entry is built in a temporary folder and renamed into place, so two
processes building at once never see a half-written entry; the loser uses the
winner's. Entries whose key no longer matches their trace are rebuilt; older entries
of the same trace are removed. An entry with a Parquet file missing or unreadable (its
footer is read on every use; its pages, when a query on the entry fails: rebuild_damaged) is
rebuilt with a warning, never trusted or crashed on. Nothing is ever written beside the trace.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipeline.bundled import user_cache_folder
from pipeline.errors import TraceError, UsageError, io_reason
from pipeline.trace.files import check_file
from pipeline.trace.open import RAW_TABLES, Trace, literal, open_trace

FORMAT = 5                     # bump when the stored tables change (2: CUDA graph columns and table; 3: cuDevice;
                               # 4: memory operations' streamId; 5: NVTX jsonText, NCCL's communicator)
EDGE_BYTES = 1 << 20           # hashed at each end of the file
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class TraceKey:
    """What identifies a trace file's content without reading all of it."""

    size: int
    mtime_ns: int
    ctime_ns: int
    edge_sha256: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{FORMAT}:{self.size}:{self.mtime_ns}:{self.ctime_ns}:{self.edge_sha256}"
                              .encode()).hexdigest()[:16]

    def fields(self) -> dict[str, Any]:
        """The key as the manifest records it."""
        return {"size": self.size, "mtime_ns": self.mtime_ns, "ctime_ns": self.ctime_ns,
                "edge_sha256": self.edge_sha256}


def default_cache_dir() -> Path:
    """$MFU_CACHE_DIR, else $XDG_CACHE_HOME/mfu-pipeline, else ~/.cache/mfu-pipeline: never beside a trace."""
    found = user_cache_folder()
    if found is None:
        raise UsageError("cache: no home folder to keep it in (HOME is not set, and this user has none in the "
                         "password database)")
    return found


def trace_key(path: Path) -> TraceKey:
    """Size, mtime, ctime and a hash of the first and last EDGE_BYTES: changes when the export is rewritten, or
    written in place with its size and mtime restored (ctime also moves on chmod, rename, a new hard link:
    a rebuild, never a stale answer)."""
    st = path.stat()
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        digest.update(fh.read(EDGE_BYTES))
        if st.st_size > EDGE_BYTES:
            fh.seek(max(EDGE_BYTES, st.st_size - EDGE_BYTES))
            digest.update(fh.read(EDGE_BYTES))
    return TraceKey(st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest.hexdigest())


def attach_cached(con: Any, path: Path, cache_dir: Path, suffix: str = "", build: bool = True) -> Trace | None:
    """Point `raw_*<suffix>` views on `con` at the cache entry of `path`, building it first if needed.

    A suffix lets several files share one connection (ranks.open_set) without copying their tables.
    `build` False: None when there is no usable entry (the caller reads the file itself).
    """
    found = ensure_entry(con, path, cache_dir, build)
    if found is None:
        return None
    entry, manifest = found
    trace = Trace(path=path, con=con, tables=manifest["tables"],
                  columns={raw: set(c) for raw, c in manifest["columns"].items()},
                  nsys_version=manifest["nsys_version"], export_schema_version=manifest["export_schema_version"],
                  digest=manifest["sha256"], notes=list(manifest["notes"]), cache_entry=entry,
                  lacking=manifest.get("lacking", {}))
    _point_views(trace, entry, suffix)
    return trace


def ensure_entry(con: Any, path: Path, cache_dir: Path, build: bool = True) -> tuple[Path, dict[str, Any]] | None:
    """The entry folder and manifest for `path`: reused when its key matches, else built atomically
    (`build` False: None instead; a damaged entry is then left for a run that builds to replace).
    `con` reads the Parquet footers (a connection of its own would cost a DuckDB instance, 0.01 s)."""
    path = Path(path)
    check_file(path)                                # a missing or non-SQLite file is a trace problem (exit 4)
    key = trace_key(path)
    entry = Path(cache_dir) / f"{path.stem}-{key.digest}"
    manifest = _manifest(entry, key)
    if manifest is not None:
        damage = _damage(con, entry, manifest)
        if damage is None:
            return entry, manifest
        if not build:
            return None
        print(f"warning: cache entry {entry} is damaged ({damage}); rebuilding it from {path}", file=sys.stderr)
    if not build:
        return None
    if entry.exists():                              # complete entries appear only by rename: this one is broken
        shutil.rmtree(entry, ignore_errors=True)
    try:
        build_in_place(entry, lambda folder: _build(path, folder, key), MANIFEST)
    except (OSError, duckdb.IOException) as exc:
        if not _writing(exc, Path(cache_dir)):
            raise
        print(f"warning: cannot write the cache entry {entry} ({io_reason(exc)}); reading {path} without the cache",
              file=sys.stderr)
        return None
    _remove_stale(path, entry)
    manifest = _manifest(entry, key)
    if manifest is None or _damage(con, entry, manifest):
        raise TraceError(f"{entry}: the cache entry just built does not verify; remove it and retry")
    return entry, manifest


def _writing(exc: BaseException, cache_dir: Path) -> bool:
    """Whether building an entry failed writing into the cache folder (a full disk, a quota), not reading
    the trace: the run can go on without the cache. DuckDB's errors name the file it could not write."""
    if isinstance(exc, OSError):
        return True
    return any(str(p) in str(exc) for p in (cache_dir, cache_dir.absolute(), cache_dir.resolve()))


def build_in_place(folder: Path, fill: Callable[[Path], None], marker: str) -> None:
    """`fill` a new folder beside `folder`, then rename it into place: never half-written. When another
    process got there first (its `marker` file says it is complete), theirs stays."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_builds(folder.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".build-{folder.name}-", dir=folder.parent))
    try:
        fill(tmp / "entry")
        try:
            os.rename(tmp / "entry", folder)        # atomic; fails if another process got there first
        except OSError:
            if not (folder / marker).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _build(path: Path, folder: Path, key: TraceKey) -> None:
    """Read every raw table of the export once into Parquet, with a manifest saying what it holds."""
    trace = open_trace(path)
    try:
        folder.mkdir(parents=True)
        # Parallel, unordered copy: 2.5x faster; row groups stay runs of consecutive rows, so time filters still prune.
        trace.con.execute("SET preserve_insertion_order = false")
        for raw in trace.tables:
            target = literal(folder / f"{raw}.parquet")
            trace.con.execute(f"COPY (SELECT * FROM {raw}) TO {target} "
                              "(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)")
        manifest = {
            "format": FORMAT, "source": str(path.resolve()), "sha256": trace.sha256,
            "key": key.fields(),
            "tables": trace.tables, "columns": {raw: sorted(c) for raw, c in trace.columns.items()},
            "nsys_version": trace.nsys_version, "export_schema_version": trace.export_schema_version,
            "notes": trace.notes, "lacking": trace.lacking,
        }
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    finally:
        trace.con.close()


def _manifest(entry: Path, key: TraceKey) -> dict[str, Any] | None:
    """The entry's manifest when the entry is complete and names this very file content."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("format") != FORMAT or manifest.get("key") != key.fields():
        return None
    return manifest


def _damage(con: Any, entry: Path, manifest: dict[str, Any]) -> str | None:
    """What is wrong with an entry whose manifest matches: a Parquet file missing or unreadable.

    Each file's footer is read (cheap: metadata only), so a truncated, overwritten or vanished
    file is found before the run relies on it, and the entry is rebuilt instead of crashing.
    """
    for raw in manifest["tables"]:
        file = entry / f"{raw}.parquet"
        if not file.is_file():
            return f"{file.name} is missing"
        try:
            con.execute("SELECT count(*) FROM parquet_file_metadata(?)", [str(file)]).fetchone()
        except duckdb.Error as exc:
            return f"{file.name}: {str(exc).strip().splitlines()[0]}"
    return None


def unreadable(con: Any, entry: Path, manifest: dict[str, Any]) -> str | None:
    """What `_damage` finds, else the first Parquet file whose pages cannot be decoded (every column read
    through). A full read of the entry: for when a query on it has failed, never on every use."""
    damage = _damage(con, entry, manifest)
    if damage is not None:
        return damage
    for raw in manifest["tables"]:
        file = entry / f"{raw}.parquet"
        try:
            con.execute(f"SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM read_parquet({literal(file)})").fetchall()
        except duckdb.Error as exc:
            return f"{file.name}: {str(exc).strip().splitlines()[0]}"
    return None


def rebuild_damaged(con: Any, trace: Trace, suffix: str = "") -> Trace | None:
    """After a query failed on `trace`'s cache entry: None when the entry reads through (the failure is not
    the entry's); else the entry rebuilt from the trace, with a warning, and the views `suffix` on it."""
    entry = trace.cache_entry
    if entry is None:
        return None
    manifest = _manifest(entry, trace_key(trace.path))
    damage = "it no longer matches the trace" if manifest is None else unreadable(con, entry, manifest)
    if damage is None:
        return None
    print(f"warning: cache entry {entry} is damaged ({damage}); rebuilding it from {trace.path}", file=sys.stderr)
    shutil.rmtree(entry, ignore_errors=True)
    # The new files get the old ones' paths and maybe their modification time to the second, which is what
    # DuckDB's file and Parquet metadata caches check: this connection must never read the old bytes again.
    con.execute("SET enable_external_file_cache = false")
    fresh = attach_cached(con, trace.path, entry.parent, suffix=suffix)
    con.execute("SET parquet_metadata_cache = false")      # _point_views switched it on for the new views
    return fresh


def _point_views(trace: Trace, folder: Path, suffix: str = "") -> None:
    """raw_* views over the Parquet files; tables the export lacks stay empty views with the same columns."""
    trace.con.execute("SET parquet_metadata_cache = true")    # a batch queries the same files many times
    for raw, (_, cols) in RAW_TABLES.items():
        if raw in trace.tables:
            source = f"read_parquet({literal(folder / f'{raw}.parquet')})"
            trace.con.execute(f"CREATE OR REPLACE TEMP VIEW {raw}{suffix} AS SELECT * FROM {source}")
        else:
            select = ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in cols)
            trace.con.execute(f"CREATE OR REPLACE TEMP VIEW {raw}{suffix} AS SELECT {select} WHERE false")


ABANDONED_BUILD_S = 24 * 3600     # no build takes a day: such a folder's process was killed mid-write


def _remove_abandoned_builds(cache_dir: Path) -> None:
    """Build folders left by a process killed while writing (SIGKILL, power loss: no `finally` ran).
    Judged by age, not by process id: a cache folder may be shared by several machines."""
    now = time.time()
    for tmp in cache_dir.glob(".build-*"):
        with contextlib.suppress(OSError):
            if now - tmp.stat().st_mtime > ABANDONED_BUILD_S:
                shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale(path: Path, keep: Path) -> None:
    """Entries built from an earlier state of the same trace file: never valid again."""
    source = str(path.resolve())
    for other in keep.parent.glob(f"{path.stem}-*"):
        if other == keep:
            continue
        with contextlib.suppress(OSError, ValueError):
            if json.loads((other / MANIFEST).read_text()).get("source") == source:
                shutil.rmtree(other, ignore_errors=True)
