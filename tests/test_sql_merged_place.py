"""merged_place.sql: per file of several built as one, the counts its own window would decide placement from."""

from __future__ import annotations

import duckdb

from pipeline.analysis.measure import places
from pipeline.trace import queries


def test_an_operator_or_a_second_label_places():
    con = duckdb.connect()
    con.execute("CREATE TABLE operator_ranges (global_tid BIGINT)")
    con.execute("CREATE TABLE label_spans (global_tid BIGINT, label VARCHAR)")
    con.execute("INSERT INTO operator_ranges VALUES (?)", [0 << 48 | 5])                      # file 0: an operator
    con.execute("INSERT INTO label_spans VALUES (?, 'step'), (?, 'fwd'), (?, 'step'), (?, 'step')",
                [1 << 48 | 5, 1 << 48 | 6, 2 << 48 | 5, 2 << 48 | 6])      # file 1: two labels, file 2: one
    rows = queries.run(con, "merged_place")
    assert rows == [{"file": 0, "operators": 1, "labels": 0}, {"file": 1, "operators": 0, "labels": 2},
                    {"file": 2, "operators": 0, "labels": 1}]
    assert [places(r) for r in rows] == [True, True, False]
