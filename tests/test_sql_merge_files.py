"""merge_files.sql: the files' rows seen as one trace, process keys, devices and strings unique per file."""

from __future__ import annotations

from pipeline.trace import queries
from tests.test_sql_merge_keys import _con, _kernel

GPID = 4000 << 24                # the same process in both files


def test_the_file_goes_into_bits_no_id_uses():
    con = _con({"raw_kernel": [_kernel(0, GPID), _kernel(1, 2 << 48 | GPID)],
                "raw_strings": [(0, 1, "gemm"), (1, 1, "gemm")]})
    queries.run(con, "merge_files")
    assert con.execute("SELECT globalPid, deviceId, shortName FROM raw_kernel ORDER BY globalPid").fetchall() == [
        (GPID, 0, 1), (1 << 48 | GPID, 1 << 32, 1 << 40 | 1)]      # the host's bits hold the file now
    assert con.execute("SELECT id, value FROM raw_strings ORDER BY id").fetchall() == [(1, "gemm"), (1 << 40 | 1, "gemm")]
    assert con.execute("SELECT start, \"end\", correlationId FROM raw_kernel").fetchall() == [(0, 10, 1)] * 2
