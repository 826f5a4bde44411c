"""Run the SQL files in pipeline/trace/sql by name, with named parameters.

No SQL text lives anywhere else (but the CREATE that stores computed unions or islands): a file
holds one or more statements separated by `;` at line ends, and each statement gets only the
`$parameters` it mentions (DuckDB rejects unused ones). The order of several files is
derived from their headers by trace/chain.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import duckdb

from pipeline.trace import recorded

if TYPE_CHECKING:
    from pipeline.trace import unions

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@cache
def statements(name: str) -> tuple[str, ...]:
    text = (resources.files("pipeline.trace") / "sql" / f"{name}.sql").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return tuple(s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip())


@cache
def union_spec(name: str) -> tuple[str, list[unions.Grouping], str] | None:
    """(table, groupings, kind) when `name`.sql declares `-- unions (table): scope = col, ...; ...`
    or `-- islands (table): ...` (trace/unions.py `compute` / `islands`)."""
    text = (resources.files("pipeline.trace") / "sql" / f"{name}.sql").read_text(encoding="utf-8")
    for line in text.splitlines():
        for kind in ("unions", "islands"):
            if line.startswith(f"-- {kind} ("):
                from pipeline.trace import unions    # numpy (0.04 s to import) only where unions are computed
                table, _, spec = line.removeprefix(f"-- {kind} (").partition("):")
                return table.strip(), unions.parse(spec), kind
    return None


def run(con: duckdb.DuckDBPyConnection, query: str, /, **params: Any) -> list[dict[str, Any]]:
    """Execute every statement of `query`.sql; return the last one's rows as dicts.

    A file declaring `-- unions:` (or `-- islands:`) instead stores the unions (or islands) of its
    last statement's intervals in the table it creates, and returns no rows. Inside
    recorded.replaying, the rows come from an earlier run instead (trace/recorded.py).
    """
    if (rows := recorded.answer(query, params)) is not None:
        return rows
    rows = []
    spec = union_spec(query)
    for cur, last in _executed(con, query, params):
        if spec and last:
            from pipeline.trace import unions
            made = unions.compute if spec[2] == "unions" else unions.islands
            _store(con, spec[0], made(cur.fetchnumpy(), spec[1]))
        elif cur.description:
            cols = [d[0] for d in cur.description]
            rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    recorded.note(query, params, rows)
    return rows


def sort_unions(con: duckdb.DuckDBPyConnection, query: str, by: str, /, **params: Any) -> unions.Sorted:
    """Execute a `-- unions:` file but keep its intervals sorted for many cuts by occurrence (`store_cut`).

    A window shared by a batch's jobs (analysis/sharing.py) is sorted once, not once per job.
    """
    from pipeline.trace import unions
    recorded.not_replayable(query)
    spec = union_spec(query)
    if spec is None or spec[2] != "unions":
        raise ValueError(f"sql/{query}.sql declares no unions")
    for cur, last in _executed(con, query, params):
        if last:
            return unions.sort(cur.fetchnumpy(), spec[1], by)
    raise ValueError(f"sql/{query}.sql has no statement")


def store_cut(con: duckdb.DuckDBPyConnection, query: str, done: unions.Sorted, first: int, last: int) -> None:
    """The table `query`.sql creates, for occurrences first..last of what sort_unions sorted."""
    from pipeline.trace import unions
    recorded.not_replayable(query)
    spec = union_spec(query)
    assert spec is not None, f"{query}.sql declares no unions"
    _store(con, spec[0], unions.cut(done, first, last))


def _executed(con: duckdb.DuckDBPyConnection, query: str, params: dict[str, Any]) -> Iterator[tuple[Any, bool]]:
    """Each statement of `query`.sql executed with the parameters it mentions: (cursor, is it the last)."""
    stmts = statements(query)
    for i, stmt in enumerate(stmts):
        wanted = {p: params[p] for p in set(_PARAM.findall(stmt))}
        yield (con.execute(stmt, wanted) if wanted else con.execute(stmt)), i == len(stmts) - 1


def _store(con: duckdb.DuckDBPyConnection, table: str, result: dict[str, Any]) -> None:
    """Unions or islands as a DuckDB table (DuckDB scans the dict of numpy arrays directly)."""
    from pipeline.trace import unions
    values = [n for n in result if n != "scope" and n not in unions.KEYS]      # column names unions.py chose
    columns = ["CAST(scope AS VARCHAR) AS scope", *(f"nullif({k}, {unions.MISSING}) AS {k}" for k in unions.KEYS),
               *(f"CAST({v} AS BIGINT) AS {v}" for v in values)]
    con.register("union_result", result)
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {', '.join(columns)} FROM union_result")
    finally:
        con.unregister("union_result")
