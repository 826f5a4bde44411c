"""Run the SQL files in pipeline/trace/sql by name, with named parameters.

No SQL text lives anywhere else (but the fixed CREATE that stores computed unions): a file
holds one or more statements separated by `;` at line ends, and each statement gets only the
`$parameters` it mentions (DuckDB rejects unused ones). The order of several files is
derived from their headers by trace/chain.py.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

import duckdb

from pipeline.trace import unions

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@cache
def statements(name: str) -> tuple[str, ...]:
    text = resources.files("pipeline.trace").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return tuple(s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip())


@cache
def union_spec(name: str) -> tuple[str, list[unions.Grouping]] | None:
    """(table, groupings) when `name`.sql declares `-- unions (table): scope = col, ...; ...` (trace/unions.py)."""
    text = resources.files("pipeline.trace").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")
    line = next((ln for ln in text.splitlines() if ln.startswith("-- unions (")), None)
    if line is None:
        return None
    table, _, spec = line.removeprefix("-- unions (").partition("):")
    return table.strip(), unions.parse(spec)


def run(con: duckdb.DuckDBPyConnection, query: str, /, **params: Any) -> list[dict[str, Any]]:
    """Execute every statement of `query`.sql; return the last one's rows as dicts.

    A file declaring `-- unions:` instead stores the unions of its last statement's intervals
    in the table it creates, and returns no rows.
    """
    rows: list[dict[str, Any]] = []
    spec = union_spec(query)
    for i, stmt in enumerate(statements(query)):
        wanted = {p: params[p] for p in set(_PARAM.findall(stmt))}
        cur = con.execute(stmt, wanted) if wanted else con.execute(stmt)
        if spec and i == len(statements(query)) - 1:
            _store(con, spec[0], unions.compute(cur.fetchnumpy(), spec[1]))
        elif cur.description:
            cols = [d[0] for d in cur.description]
            rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    return rows


def _store(con: duckdb.DuckDBPyConnection, table: str, result: dict[str, Any]) -> None:
    """The unions as a DuckDB table (DuckDB scans the dict of numpy arrays directly)."""
    con.register("union_result", result)
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT CAST(scope AS VARCHAR) AS scope, "
                    f"nullif(k1, {unions.MISSING}) AS k1, nullif(k2, {unions.MISSING}) AS k2, "
                    f"nullif(k3, {unions.MISSING}) AS k3, "
                    "CAST(union_ns AS BIGINT) AS union_ns, CAST(sum_ns AS BIGINT) AS sum_ns, "
                    "CAST(interval_count AS BIGINT) AS interval_count, "
                    "CAST(last_end_ns AS BIGINT) AS last_end_ns FROM union_result")
    finally:
        con.unregister("union_result")
