"""Which export table the raw views read, when versions name tables differently (NSYS_SCHEMA.md, docs/figures.md §2).

Some Nsight Systems versions suffix table names (`_V2`, `_V3`): the exact name is preferred, then the
highest numeric suffix (numerically: `_V10` over `_V9`). The metadata table is `META_DATA_EXPORT`, named
`EXPORT_META_DATA` up to schema 3.1.7 and absent in 2021 exports; the version must be read from either.
Each export here is hand-made: the kernel tables under different names hold kernels of different
lengths, so the measured figure says by itself which table was read.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.errors import TraceError
from pipeline.job.config import load_job
from pipeline.run import run_job
from pipeline.trace.open import open_trace, resolve_table
from test_run_synth import write_job

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
NS = 1e9


def _one_step(kernel_end: int) -> Export:
    """One process, one `step` range 1000..3000, one kernel launched inside it, 1200..kernel_end."""
    e = Export()
    main = gtid(100, 100)
    e.range(1000, 3000, main, "step")
    e.launch(1100, main, 1)
    e.kernel(1200, kernel_end, gpid(100), 1)
    return e


def _versioned(tmp_path: Path, tables: dict[str, int]) -> Path:
    """An export whose kernel table exists under each name of `tables`, holding the one kernel ending there.

    Written with the exact name, then each copy made from it and its kernel's end changed; the exact name
    is dropped when `tables` does not list it (an export that only has suffixed tables)."""
    path = _one_step(2000).write(tmp_path / "versioned.sqlite")
    con = sqlite3.connect(path)
    try:
        for name, end in tables.items():
            if name != KERNEL:
                con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM {KERNEL}')
            con.execute(f'UPDATE "{name}" SET "end" = ?', (end,))
        if KERNEL not in tables:
            con.execute(f"DROP TABLE {KERNEL}")
        con.commit()
    finally:
        con.close()
    return path


def _metadata(tmp_path: Path, table: str | None) -> Path:
    """An export whose version metadata is in `table` (or nowhere: a 2021 export)."""
    path = _one_step(2000).write(tmp_path / f"meta-{table}.sqlite")
    con = sqlite3.connect(path)
    try:
        con.execute("DROP TABLE META_DATA_EXPORT")
        if table:
            con.execute(f"CREATE TABLE {table} (name TEXT NOT NULL, value TEXT)")
            con.executemany(f"INSERT INTO {table} VALUES (?, ?)", [
                ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2022.4.2.1"),
                ("EXPORT_SCHEMA_VERSION", "3.0.0")])
        con.commit()
    finally:
        con.close()
    return path


@pytest.mark.parametrize("present, chosen", [
    ({"T", "T_V2", "T_V3"}, "T"),                 # the exact name first, whatever suffixes exist
    ({"T_V2", "T_V3"}, "T_V3"),                   # then the highest suffix
    ({"T_V9", "T_V10", "T_V2"}, "T_V10"),         # numerically: 10 > 9, though "T_V10" < "T_V9" as text
    ({"T_V2", "T_Vx", "T_V", "T_V3_old", "U_V7"}, "T_V2"),   # only T_V<digits> are versions of T
    ({"U", "T_OLD"}, None),
])
def test_resolve_table_prefers_exact_then_highest_suffix(present: set[str], chosen: str | None) -> None:
    """NSYS_SCHEMA.md / docs/figures.md §2: prefer the exact name, then the highest numeric suffix."""
    assert resolve_table(present, "T") == chosen


@pytest.mark.parametrize("tables, read, kernel_ns", [
    ({KERNEL: 1500, f"{KERNEL}_V2": 1700, f"{KERNEL}_V3": 1900}, KERNEL, 300),     # 1200..1500
    ({f"{KERNEL}_V2": 1700, f"{KERNEL}_V3": 1900}, f"{KERNEL}_V3", 700),          # 1200..1900
    ({f"{KERNEL}_V9": 1700, f"{KERNEL}_V10": 2100}, f"{KERNEL}_V10", 900),        # 1200..2100
])
def test_versioned_kernel_tables_are_read_by_preference(tmp_path: Path, tables: dict[str, int], read: str,
                                                        kernel_ns: int) -> None:
    """End to end: the kernel figures come from the preferred table only. The kernels under the other names
    (launched by the same call, so attributed just as well) would give another sum, or twice the count."""
    path = _versioned(tmp_path, tables)
    trace = open_trace(path)
    try:
        assert trace.tables["raw_kernel"] == read
    finally:
        trace.con.close()
    job = write_job(tmp_path, path, region={"name": "step"}, hardware={"num_gpus": 1, "peak_tflops": 1.0},
                    model={"flops_per_step": 1.0e3}, workload={"seq_len": 4, "global_batch": 1})
    res = run_job(load_job(job))
    (occ,) = res["occurrences"]
    assert occ["kernel_count"] == 1 and round(occ["gpu_kernel_sum_s"] * NS) == kernel_ns
    assert round(occ["wall_time_s"] * NS) == 2000                 # the range 1000..3000 holds every variant


@pytest.mark.parametrize("table, product, schema", [
    ("META_DATA_EXPORT", "2022.4.2.1", "3.0.0"),
    ("EXPORT_META_DATA", "2022.4.2.1", "3.0.0"),     # the name up to schema 3.1.7
    (None, None, None),                              # 2021 exports have no metadata table
])
def test_export_metadata_under_either_name(tmp_path: Path, table: str | None, product: str | None,
                                           schema: str | None) -> None:
    """docs/figures.md §2: the version is in META_DATA_EXPORT, called EXPORT_META_DATA up to schema 3.1.7; both are read,
    and a file with neither still opens, its version unknown."""
    trace = open_trace(_metadata(tmp_path, table))
    try:
        assert (trace.nsys_version, trace.export_schema_version) == (product, schema)
    finally:
        trace.con.close()


def test_export_metadata_name_reaches_the_report(tmp_path: Path) -> None:
    """An EXPORT_META_DATA export's version is what result.json and the report show, not 'unknown'."""
    job = write_job(tmp_path, _metadata(tmp_path, "EXPORT_META_DATA"), region={"name": "step"},
                    hardware={"num_gpus": 1, "peak_tflops": 1.0}, model={"flops_per_step": 1.0e3},
                    workload={"seq_len": 4, "global_batch": 1})
    res = run_job(load_job(job))
    (info,) = res["trace"]["files"]
    assert (info["nsys_version"], info["export_schema_version"]) == ("2022.4.2.1", "3.0.0")


def test_schema_problems_are_named_in_the_table_read(tmp_path: Path) -> None:
    """integrity.py resolves names as open.py does: text in the time column of the table the views read (_V3)
    is a trace problem naming that table; the same fault in a table not read (_V2) is none of the run's business."""
    path = _versioned(tmp_path, {f"{KERNEL}_V2": 1700, f"{KERNEL}_V3": 1900})
    con = sqlite3.connect(path)
    con.execute(f'UPDATE "{KERNEL}_V2" SET "end" = \'late\'')
    con.commit()
    con.close()
    job = write_job(tmp_path, path, region={"name": "step"}, hardware={"num_gpus": 1, "peak_tflops": 1.0},
                    model={"flops_per_step": 1.0e3}, workload={"seq_len": 4, "global_batch": 1})
    (occ,) = run_job(load_job(job))["occurrences"]
    assert round(occ["gpu_kernel_sum_s"] * NS) == 700                 # _V3 read, its 1200..1900 kernel
    con = sqlite3.connect(path)
    con.execute(f'UPDATE "{KERNEL}_V3" SET "end" = \'late\'')
    con.commit()
    con.close()
    with pytest.raises(TraceError) as err:
        run_job(load_job(job))
    assert err.value.code == 4 and f"{KERNEL}_V3.end: 1 rows hold text" in str(err.value)
    assert f"{KERNEL}_V2" not in str(err.value)
