"""step_share.sql: a shared window keeps its steps' unions, each occurrence's step, and the rows that run past it."""

from __future__ import annotations

from tests.stepfixtures import shared


def test_the_steps_and_the_rows_running_past_them():
    """Ranges [100 i, 100 i + 50), i = 1..3. Occurrence 1's GEMM [110, 230) runs into occurrence 2 (which starts at
    200, inside occurrence 1's envelope: step 1 is 100); occurrence 2's copy [210, 240) ends inside its wall [200,
    250); occurrence 3's kernel [310, 360) makes its wall, the last step, 60."""
    rows = [(1, 0, "gemm", "gemm", 110, 230), (2, 0, "[CUDA memcpy]", "memory", 210, 240),
            (3, 0, "add", "elementwise", 310, 360)]
    con = shared(rows, [(i, 100, 100 * i, 100 * i + 50) for i in (1, 2, 3)])
    assert con.execute("SELECT * FROM shared_step_times ORDER BY occurrence").fetchall() == \
        [(1, 100, 100), (2, 200, 50), (3, 300, 60)]
    assert con.execute("SELECT occurrence, start_ns, end_ns, step_end_ns FROM shared_step_spills").fetchall() == \
        [(1, 110, 230, 200)]
    # step_unions.sql's rows under the shared name: step 2 holds the GEMM's tail [200, 230) and the copy, any = 40
    got = dict(con.execute("SELECT k1, union_ns FROM shared_step_unions WHERE scope = 'any' AND k2 = 1").fetchall())
    assert got == {1: 90, 2: 40, 3: 50}
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'step_unions'").fetchone() == (0,)
