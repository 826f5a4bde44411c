"""A window built over more occurrences than a job selects holds, for the job's occurrences, exactly
the rows the job's own window holds (issue #10: jobs of a batch share one built window).

Occurrences are numbered per process over every matching range (region_ranges.sql), whatever
the selection; the attribution, memory-operation and classification queries then give each
occurrence rows that depend on that occurrence's range alone. The export below is built to
break that if it were not so: ranges that overlap (a launch inside two of them), a kernel
launched in one occurrence that runs inside another, a kernel with no launch row, a launch
from a second thread, a kernel with no process, memory copies through launch keys.
"""

from __future__ import annotations

import sqlite3

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.analysis import classes
from pipeline.trace import chain, queries
from tests.sqlfixtures import RESOLVED

A_MAIN, A_WORKER, B_MAIN = gtid(100, 100), gtid(100, 101), gtid(200, 200)
A, B = gpid(100), gpid(200)
STEPS = 5
WINDOW_TABLES = ("selected_ranges", "attributed", "attributed_memops", "classified")


def _export() -> Export:
    """pid 100: steps k = 1..5 span (k-1)*1000 .. k*1000+300 (each overlaps the next by 300 ns).

    Per step: a launch in the overlap with the next step (inside both), one from the worker thread,
    one whose kernel runs inside the previous step, a kernel with no launch row, a kernel with no
    process. pid 200: steps at the same starts, 800 ns long, one launch each, correlationIds reused.
    """
    e = Export()
    corr = 0
    for k in range(1, STEPS + 1):
        lo = (k - 1) * 1000
        e.range(lo, lo + 1300, A_MAIN, "step")
        e.range(lo, lo + 800, B_MAIN, "step")
        for tid, at, start, end, name in ((A_MAIN, lo + 1100, lo + 1150, lo + 1250, "overlap_gemm"),
                                          (A_WORKER, lo + 400, lo + 450, lo + 600, "worker_nccl_AllReduce"),
                                          (A_MAIN, lo + 350, lo - 300, lo - 100, "early_flash_fwd")):
            corr += 1
            e.launch(at, tid, corr)
            e.kernel(start, end, A, corr, name=name, device=k % 2)
        e.kernel(lo + 700, lo + 750, A, None, name="unlaunched_elementwise")      # no launch row at all
        e.kernel(lo + 500, lo + 900, None, None, name="orphan_kernel", device=1)   # no process id
        e.launch(lo + 100, B_MAIN, k)                                              # corr k as pid 100 used
        e.kernel(lo + 150, lo + 700, B, k, device=2, name="b_gemm")
    return e


def _write(tmp_path) -> object:
    """The export plus memory copies: one per step launched by pid 100's main thread."""
    path = _export().write(tmp_path / "shared.sqlite")
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, "end" INTEGER, deviceId INTEGER, '
                "correlationId INTEGER, globalPid INTEGER, bytes INTEGER)")
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, ?, ?, 64)",
                    [((k - 1) * 1000 + 1160, (k - 1) * 1000 + 1400, 3 * k - 2, A) for k in range(1, STEPS + 1)])
    con.commit()
    con.close()
    return path


def _window(con, first: int, last: int, mode: str) -> dict[str, list[tuple]]:
    """Build the window over first..last as measure.py and classes.classify do; every table's rows, sorted."""
    chain.run(con, {"region_ranges", "select_occurrences"}, name="step", match="exact", domain=None,
              first=first, last=last)
    attribute = {"attribute_window"} if mode == "window" else {"nccl_ranges", "attribute_launch"}
    chain.run(con, attribute, same_thread=mode == "thread")
    chain.run(con, {"attribute_memops", "classify"}, mode=mode, **classes.classify_params(classes.load_rules()))
    # classified rows with their names spelled out: name ids number the names of the window they were built in
    read = {"classified": f"SELECT * EXCLUDE (name_id) FROM ({RESOLVED})"}
    tables = {t: sorted(con.execute(read.get(t, f"SELECT * FROM {t}")).fetchall(), key=repr) for t in WINDOW_TABLES}
    tables["unattributed"] = [] if mode == "window" else queries.run(con, "unattributed")
    return tables


def _only(tables: dict[str, list], first: int, last: int, con) -> dict[str, list]:
    """The rows of occurrences first..last (the occurrence is each table's first column)."""
    out = {t: [r for r in rows if first <= r[0] <= last] for t, rows in tables.items() if t != "unattributed"}
    out["unattributed"] = [r for r in tables["unattributed"] if first <= r["occurrence"] <= last]
    return out


@pytest.mark.parametrize("mode", ["process", "thread", "window"])
def test_the_window_of_more_occurrences_holds_each_selection_unchanged(open_views, tmp_path, mode):
    trace = open_views(_write(tmp_path))
    wide = _window(trace.con, 1, STEPS, mode)
    for t in WINDOW_TABLES:
        assert {r[0] for r in wide[t]} == set(range(1, STEPS + 1)), t     # every occurrence has rows of each
    if mode != "window":
        assert {r["occurrence"] for r in wide["unattributed"]} == set(range(1, STEPS + 1))
    for first, last in ((1, 1), (2, 3), (3, 5), (5, 5)):
        alone = _window(trace.con, first, last, mode)
        assert _only(wide, first, last, trace.con) == alone, (first, last)


def test_the_export_exercises_what_could_differ(open_views, tmp_path):
    """Alone, occurrence 2's window sees a kernel launched in occurrence 3 as launched by no selected
    launch (`unlaunched`), and the launch in the overlap of 2 and 3 belongs to both: the cases above."""
    trace = open_views(_write(tmp_path))
    _window(trace.con, 2, 2, "process")
    early = trace.con.execute("SELECT count(*) FROM unlaunched u JOIN launches l USING (global_pid, correlation_id) "
                              "WHERE l.start_ns > 2000").fetchone()[0]
    assert early == 1                                     # step 3's early kernel (launched at 2350) runs inside step 2
    _window(trace.con, 2, 3, "process")
    both = trace.con.execute("SELECT count(*) FROM attributed a JOIN raw_strings s ON s.id = a.name_id "
                             "WHERE s.value = 'overlap_gemm' AND start_ns = 2150").fetchone()[0]
    assert both == 2                                      # launched at 2100: inside steps 2 and 3
