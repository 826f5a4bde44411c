"""trace/chain.py: the SQL files' declared headers and the order derived from them."""

from __future__ import annotations

from importlib import resources

import pytest

from pipeline.trace import chain, queries
from pipeline.trace.open import RAW_TABLES

SQL_FILES = sorted(p.name.removesuffix(".sql") for p in resources.files("pipeline.trace").joinpath("sql").iterdir()
                   if p.name.endswith(".sql"))
# Made outside the chain: the raw views of trace/open.py (and analysis/merged.py's views of every file's raw rows,
# raw_*__all), and the attached output of synth_scaled.
BASE = set(RAW_TABLES) | {f"{raw}__all" for raw in RAW_TABLES}


def test_every_file_declares_what_it_reads_and_creates():
    created = {made for f in SQL_FILES for made in chain.header(f)[1]}
    for f in SQL_FILES:
        reads, _ = chain.header(f)
        assert reads <= created | BASE, (f, reads - created - BASE)


def test_creators_run_before_readers_whatever_order_is_given():
    wanted = ["rank_times", "occurrence_times", "kernel_union", "attribute_launch", "select_occurrences",
              "region_ranges", "device_times", "unattributed", "views", "window_unions", "classify"]
    got = chain.order(wanted)
    assert sorted(got) == sorted(wanted)
    for i, f in enumerate(got):
        for later in got[i + 1:]:
            assert not (chain.header(later)[1] & chain.header(f)[0]), f"{later} creates what {f} reads"
    assert got.index("views") < got.index("region_ranges") < got.index("select_occurrences") \
        < got.index("attribute_launch") < got.index("classify") < got.index("window_unions") \
        < got.index("kernel_union") \
        < got.index("occurrence_times")


def test_two_creators_of_one_table_in_one_call_are_refused():
    with pytest.raises(ValueError, match="both attribute_launch.sql and attribute_window.sql create"):
        chain.order(["attribute_launch", "attribute_window"])


def test_a_cycle_is_refused():
    # rank_collect reads `selected_ranges`, which rank_combine creates from what rank_collect creates
    with pytest.raises(ValueError, match="cycle"):
        chain.order(["rank_collect", "rank_combine"])


def test_run_returns_each_files_rows_and_executes_in_order():
    import duckdb
    con = duckdb.connect()
    queries.run(con, "macros")                        # select_occurrences.sql lists ranges by time_buckets
    con.execute("CREATE TEMP TABLE region_ranges AS SELECT * FROM (VALUES (1, 10, 5, 50, 0, 100, 'step', 1000), "
                "(2, 10, 5, 50, 1000, 1100, 'step', NULL)) AS t(occurrence, global_pid, pid, global_tid, start_ns, "
                "end_ns, name, period_ns)")
    rows = chain.run(con, {"region_counts", "select_occurrences"}, first=2, last=2)
    assert rows["region_counts"] == [{"pid": 5, "global_pid": 10, "occurrences": 2}]
    assert con.execute("SELECT occurrence FROM selected_ranges").fetchall() == [(2,)]
