"""The Parquet cache (issue #7): same figures as reading the SQLite file, reused when fresh,
rebuilt when the trace changes or the entry is broken, safe under concurrent builds, and
never writing beside the trace."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from clock import past_change_time
from pipeline.trace import cache
from pipeline.job.config import load_job
from pipeline.run import run_job
from pipeline.trace.open import Trace
from pipeline.trace.connection import connect
from pipeline.trace.synth import SynthSpec, generate

FIGURES = ("occurrences", "ranks", "totals", "metrics", "warnings", "trace")


def open_cached(path: Path, cache_dir: Path) -> Trace:
    """A Trace on a new connection whose raw views read the verified (or freshly built) cache entry (the
    run itself attaches entries to its TraceSet's connection: ranks.open_set)."""
    return cache.attach_cached(connect(), path, cache_dir)


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "traces" / "run.sqlite"
    path.parent.mkdir()
    generate(SynthSpec(ranks=2, steps=4, kernels_per_step=30, drop_launch_every=7), path)
    return path


def job_file(folder: Path, trace: Path, **region) -> Path:
    body = {"name": "cached", "trace": str(trace),
            "region": {"name": "train_step", "occurrences": {"first": 2}, **region},
            "hardware": {"gpu": "auto", "num_gpus": 2, "precision": "bf16"},
            "model": {"flops_per_step": 4.0e+14},
            "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}
    path = folder / "job.yaml"
    path.write_text(json.dumps(body))
    return path


@pytest.mark.parametrize("attribution", ["process", pytest.param("thread", marks=pytest.mark.slow),  # slow tier: the
                                         pytest.param("window", marks=pytest.mark.slow)])     # other modes
def test_cached_figures_equal_direct_ones(trace, tmp_path, attribution):
    job = load_job(job_file(tmp_path, trace, attribution=attribution))
    direct = run_job(job)
    cold = run_job(job, cache_dir=tmp_path / "cache")
    warm = run_job(job, cache_dir=tmp_path / "cache")
    for key in FIGURES:
        assert cold[key] == direct[key] == warm[key], key
    assert direct["totals"]["unattributed_kernel_count"] > 0 or attribution == "window"


def test_fresh_entry_is_reused_not_rebuilt(trace, tmp_path, monkeypatch):
    open_cached(trace, tmp_path / "c").con.close()
    monkeypatch.setattr(cache, "_build", lambda *a: pytest.fail("rebuilt a fresh entry"))
    t = open_cached(trace, tmp_path / "c")
    assert t.has("raw_kernel") and t.con.execute("SELECT count(*) FROM raw_kernel").fetchone()[0] > 0
    t.con.close()


def test_changed_trace_gets_a_new_entry_and_the_old_one_goes(trace, tmp_path):
    open_cached(trace, tmp_path / "c").con.close()
    [old] = list((tmp_path / "c").iterdir())
    generate(SynthSpec(ranks=2, steps=6, kernels_per_step=30), trace)      # rewritten in place
    t = open_cached(trace, tmp_path / "c")
    assert t.con.execute("SELECT count(*) FROM raw_nvtx WHERE eventType = 59").fetchone()[0] == 2 * 6 * 2
    t.con.close()
    [new] = list((tmp_path / "c").iterdir())
    assert new != old


def test_broken_entry_is_rebuilt(trace, tmp_path):
    open_cached(trace, tmp_path / "c").con.close()
    [entry] = list((tmp_path / "c").iterdir())
    (entry / "raw_kernel.parquet").unlink()
    t = open_cached(trace, tmp_path / "c")
    assert t.con.execute("SELECT count(*) FROM raw_kernel").fetchone()[0] > 0
    t.con.close()


def test_nothing_is_written_beside_the_trace(trace, tmp_path):
    before = sorted(os.listdir(trace.parent))
    run_job(load_job(job_file(tmp_path, trace)), cache_dir=tmp_path / "cache")
    assert sorted(os.listdir(trace.parent)) == before


def _build_in_child(args: tuple[str, str]) -> int:
    t = open_cached(Path(args[0]), Path(args[1]))
    try:
        return t.con.execute("SELECT count(*) FROM raw_kernel").fetchone()[0]
    finally:
        t.con.close()


def test_two_processes_building_at_once_agree(trace, tmp_path):
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        counts = pool.map(_build_in_child, [(str(trace), str(tmp_path / "c"))] * 2)
    assert counts[0] == counts[1] > 0
    assert [p.name.startswith(".build-") for p in (tmp_path / "c").iterdir()] == [False]


def test_a_build_clears_folders_abandoned_by_killed_builds(trace, tmp_path):
    """A build killed by SIGKILL leaves its `.build-*` folder; the next build removes such folders
    once they are a day old, and leaves younger ones (another process may be filling them)."""
    cache_dir = tmp_path / "c"
    old, young = cache_dir / ".build-x-killed", cache_dir / ".build-y-running"
    for folder in (old, young):
        (folder / "entry").mkdir(parents=True)
        (folder / "entry" / "raw_kernel.parquet").write_bytes(b"partial")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    t = open_cached(trace, cache_dir)
    t.con.close()
    assert not old.exists() and young.exists()


@pytest.mark.parametrize("table", ["raw_kernel", "raw_strings"])
def test_entry_whose_data_pages_are_damaged_is_rebuilt_not_crashed_on(trace, tmp_path, capfd, table):
    """A Parquet file whose footer is intact but whose pages cannot be decoded (bytes overwritten in place,
    same size) passes the footer check; reading it fails mid-run. The entry is then rebuilt with a warning
    and the job measured from it, with the figures the trace holds (its ground truth), never a traceback."""
    truth = json.loads(Path(f"{trace}.truth.json").read_text())
    open_cached(trace, tmp_path / "c").con.close()
    [entry] = list((tmp_path / "c").iterdir())
    damaged = entry / f"{table}.parquet"
    con = connect()
    chunks = con.execute("SELECT data_page_offset, total_compressed_size FROM parquet_metadata(?)",
                         [str(damaged)]).fetchall()
    con.close()
    data = bytearray(damaged.read_bytes())
    for offset, size in chunks:                   # the middle of every column chunk: past the page header
        lo, hi = offset + size // 4, offset + size - size // 4
        data[lo:hi] = bytes(b ^ 0xA5 for b in data[lo:hi])
    damaged.write_bytes(bytes(data))
    capfd.readouterr()
    res = run_job(load_job(job_file(tmp_path, trace)), cache_dir=tmp_path / "c")
    err = capfd.readouterr().err
    assert "warning: cache entry " in err and "is damaged (" in err and table in err
    for got in res["occurrences"]:
        want = truth["occurrences"][got["index"] - 1]
        assert got["kernel_count"] == want["kernel_count"]
        assert round(got["gpu_kernel_union_s"] * 1e9) == want["kernel_union_ns"]
        assert round(got["wall_time_s"] * 1e9) == want["wall_ns"]
    assert [o["index"] for o in res["occurrences"]] == [2, 3, 4]
    assert run_job(load_job(tmp_path / "job.yaml"), cache_dir=tmp_path / "c")["occurrences"] == res["occurrences"]


def test_a_cache_that_cannot_be_written_means_a_run_without_it(trace, tmp_path, monkeypatch, capsys):
    """DuckDB failing to write an entry's Parquet file (a full disk: here a folder that is not there) was an
    internal error (exit 5). The run warns, reads the trace itself, and leaves no half-built entry."""
    from pipeline.cli import main
    real = cache.literal
    monkeypatch.setattr(cache, "literal", lambda p: real(Path(p).parent / "gone" / Path(p).name)
                        if Path(p).name == "raw_kernel.parquet" else real(p))
    job, store = job_file(tmp_path, trace), tmp_path / "store"
    code = main(["run", str(job), "--out", str(tmp_path / "direct"), "--no-cache"])
    assert code in (0, 1) and capsys.readouterr().err == ""
    assert main(["run", str(job), "--out", str(tmp_path / "out"), "--cache", str(store)]) == code
    err = capsys.readouterr().err
    assert err.startswith(f"warning: cannot write the cache entry {store.resolve()}/run-") and \
        err.endswith(f"(No such file or directory); reading {trace} without the cache\n"), err
    assert list(store.iterdir()) == []
    assert (tmp_path / "out/cached/result.json").read_text() == (tmp_path / "direct/cached/result.json").read_text()


def test_bytes_edited_in_place_with_size_and_mtime_kept_are_read_from_the_trace(tmp_path):
    """A kernel's end rewritten inside the file, away from the hashed first and last MiB, with the size
    unchanged and the modification time put back (`touch -r`): the entry built before must not answer.
    The warm open reads the new end, and the SHA-256 it reports is that of the file as it now is."""
    import hashlib
    import sqlite3

    from nsys_export import Export, gpid, gtid
    path = tmp_path / "edited.sqlite"
    with sqlite3.connect(path) as con:            # 1.5 MiB before the export's pages and after them
        con.execute("CREATE TABLE padding_before (b BLOB)")
        con.execute("INSERT INTO padding_before VALUES (zeroblob(1536 * 1024))")
    e = Export()
    e.range(999_000_000, 1_002_000_000, gtid(100, 100), "train_step")
    e.launch(999_500_000, gtid(100, 100), 1)
    e.kernel(1_000_000_000, 1_000_500_000, gpid(100), 1)
    e.write(path)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE padding_after (b BLOB)")
        con.execute("INSERT INTO padding_after VALUES (zeroblob(1536 * 1024))")
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'").fetchone()[0]
    con.close()

    t = open_cached(path, tmp_path / "c")
    assert t.con.execute('SELECT "end" FROM raw_kernel').fetchall() == [(1_000_500_000,)]
    t.con.close()

    before = path.stat()
    data = bytearray(path.read_bytes())
    page = (root - 1) * page_size                 # the kernel table's one page, in the middle of the file
    assert cache.EDGE_BYTES <= page and page + page_size <= len(data) - cache.EDGE_BYTES
    old, new = (1_000_500_000).to_bytes(4, "big"), (1_000_900_000).to_bytes(4, "big")
    assert data[page:page + page_size].count(old) == 1
    at = data.index(old, page)
    data[at:at + 4] = new                         # the same 4-byte integer serial type: SQLite reads it as is
    past_change_time(path)                        # past the clock tick the file times were taken in
    with path.open("r+b") as fh:
        fh.seek(at)
        fh.write(new)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    t = open_cached(path, tmp_path / "c")
    assert t.con.execute('SELECT "end" FROM raw_kernel').fetchall() == [(1_000_900_000,)]
    assert t.sha256 == hashlib.sha256(bytes(data)).hexdigest()
    t.con.close()
    assert len(list((tmp_path / "c").iterdir())) == 1             # the stale entry is gone
