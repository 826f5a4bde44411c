"""attribute_memops.sql: copies and sets follow the kernels' attribution rules (docs/figures.md §4)."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

P1, P2 = 1 << 24, 2 << 24          # two processes; correlationId 5 exists in both


def _con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    queries.run(con, "macros")                          # overlapping_ranges, as every pipeline connection has
    cols = ('start BIGINT, "end" BIGINT, deviceId BIGINT, correlationId BIGINT, globalPid BIGINT, bytes BIGINT, '
            'streamId BIGINT')     # the raw views' columns (trace/open.py)
    con.execute(f"CREATE TABLE raw_memcpy ({cols})")
    con.execute(f"CREATE TABLE raw_memset ({cols})")
    con.executemany("INSERT INTO raw_memcpy VALUES (?, ?, ?, ?, ?, 64, 7)", [
        (120, 140, 0, 5, P1),      # launched by P1 inside its range
        (125, 150, 1, 5, P2),      # same correlationId, other process: launched outside P2's range
        (190, 260, 0, 6, P1),      # launched inside, runs past the range end
    ])
    con.execute("INSERT INTO raw_memset VALUES (130, 135, 0, 7, ?, 64, 7)", [P1])
    con.execute("CREATE TABLE launches (start_ns BIGINT, end_ns BIGINT, global_tid BIGINT, "
                "global_pid BIGINT, correlation_id BIGINT)")
    con.executemany("INSERT INTO launches VALUES (?, ?, ?, ?, ?)", [
        (110, 112, P1 | 1, P1, 5), (111, 113, P1 | 1, P1, 5),   # duplicate launch row
        (50, 52, P2 | 1, P2, 5), (180, 182, P1 | 2, P1, 6), (128, 129, P1 | 1, P1, 7)])
    con.execute("CREATE TABLE kernels (start_ns BIGINT, end_ns BIGINT, device_id BIGINT, stream_id BIGINT, "
                "correlation_id BIGINT, global_pid BIGINT, name_id BIGINT, graph_id BIGINT, detail_id BIGINT)")   # no kernels: memops only
    con.execute("CREATE TABLE region_ranges AS SELECT * FROM (VALUES "
                f"(1, {P1}, {P1 | 1}, 100, 200), (1, {P2}, {P2 | 1}, 100, 200)) "
                "AS t(occurrence, global_pid, global_tid, start_ns, end_ns)")
    con.execute("CREATE TABLE nccl_ranges (global_tid BIGINT, start_ns BIGINT, end_ns BIGINT, comm_key UBIGINT)")
    return con


def _rows(con, **kw):
    """Attribute as measure.py does (launch keys, or the window rule), then the memory operations."""
    queries.run(con, "select_occurrences", first=1, last=1)
    queries.run(con, "attribute_window" if kw["mode"] == "window" else "attribute_launch", **kw)
    queries.run(con, "attribute_memops", first=1, last=1, **kw)
    return sorted(con.execute("SELECT name, device_id, start_ns, end_ns FROM attributed_memops").fetchall())


def test_process_attribution_joins_on_process_and_correlation_once():
    assert _rows(_con(), mode="process", same_thread=False) == [
        ("[CUDA memcpy]", 0, 120, 140), ("[CUDA memcpy]", 0, 190, 260), ("[CUDA memset]", 0, 130, 135)]


def test_thread_attribution_drops_the_other_thread():
    assert _rows(_con(), mode="thread", same_thread=True) == [
        ("[CUDA memcpy]", 0, 120, 140), ("[CUDA memset]", 0, 130, 135)]


def test_window_attribution_clips_to_the_range():
    assert _rows(_con(), mode="window", same_thread=False) == [
        ("[CUDA memcpy]", 0, 120, 140), ("[CUDA memcpy]", 0, 190, 200), ("[CUDA memcpy]", 1, 125, 150),
        ("[CUDA memset]", 0, 130, 135)]


def test_window_attribution_gives_an_operation_without_process_to_the_only_process():
    """The kernels' rule (attribute_window.sql): an operation with no process id is the window's process's only
    when the window holds one process; with several, giving it to each counted it once per rank. By hand: a copy
    150..160 with no globalPid lies inside both ranges (100..200 of P1 and of P2)."""
    con = _con()
    con.execute("INSERT INTO raw_memcpy VALUES (150, 160, 0, 9, NULL, 64, 7)")
    assert _rows(con, mode="window", same_thread=False) == [
        ("[CUDA memcpy]", 0, 120, 140), ("[CUDA memcpy]", 0, 190, 200), ("[CUDA memcpy]", 1, 125, 150),
        ("[CUDA memset]", 0, 130, 135)]
    con = _con()
    con.execute("INSERT INTO raw_memcpy VALUES (150, 160, 0, 9, NULL, 64, 7)")
    con.execute(f"DELETE FROM region_ranges WHERE global_pid = {P2}")          # P1's range alone
    queries.run(con, "select_occurrences", first=1, last=1)
    queries.run(con, "attribute_window", mode="window", same_thread=False)
    queries.run(con, "attribute_memops", first=1, last=1, mode="window", same_thread=False)
    assert sorted(con.execute("SELECT global_pid, start_ns, end_ns FROM attributed_memops").fetchall()) == [
        (P1, 120, 140), (P1, 130, 135), (P1, 150, 160), (P1, 190, 200)]
