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
_VARIABLE = "mfu_param_"                   # prefix of the DuckDB variables a unions file's parameters become (_intervals)


@cache
def sql_text(name: str) -> str:
    """`name`.sql's text, read once per process: statements, union_spec and chain.header each want it (a cold run
    read its 45 files 124 times through importlib.resources, 3-5 ms of CPU)."""
    return (resources.files("pipeline.trace") / "sql" / f"{name}.sql").read_text(encoding="utf-8")


@cache
def statements(name: str) -> tuple[str, ...]:
    body = "\n".join(line for line in sql_text(name).splitlines() if not line.lstrip().startswith("--"))
    return tuple(s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip())


@cache
def union_spec(name: str) -> tuple[str, list[unions.Grouping], str] | None:
    """(table, groupings, kind) when `name`.sql declares `-- unions (table): scope = col, ...; ...`
    or `-- islands (table): ...` (trace/unions.py `compute` / `islands`)."""
    for line in sql_text(name).splitlines():
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
    if spec := union_spec(query):
        from pipeline.trace import unions
        made = unions.compute if spec[2] == "unions" else unions.islands
        _store(con, spec[0], made(_intervals(con, query, params), spec[1]))
    else:
        for cur in _executed(con, query, params):
            if cur.description:
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
    return unions.sort(_intervals(con, query, params), spec[1], by)


def store_cut(con: duckdb.DuckDBPyConnection, query: str, done: unions.Sorted, first: int, last: int) -> None:
    """The table `query`.sql creates, for occurrences first..last of what sort_unions sorted."""
    from pipeline.trace import unions
    recorded.not_replayable(query)
    spec = union_spec(query)
    assert spec is not None, f"{query}.sql declares no unions"
    _store(con, spec[0], unions.cut(done, first, last))


def store_given(con: duckdb.DuckDBPyConnection, query: str, rows: dict[str, Any]) -> None:
    """The table a `-- unions:` or `-- islands:` file creates, from `rows` (the columns its last statement
    selects) given by the caller instead of fetched: a shared window's job takes them from rows sorted once
    (unions.occurrence_rows), where its own query would scan the window again."""
    from pipeline.trace import unions
    recorded.not_replayable(query)
    spec = union_spec(query)
    assert spec is not None, f"{query}.sql declares no unions"
    _store(con, spec[0], (unions.compute if spec[2] == "unions" else unions.islands)(rows, spec[1]))


def _intervals(con: duckdb.DuckDBPyConnection, query: str, params: dict[str, Any]) -> dict[str, Any]:
    """A unions (or islands) file run: its last statement's rows as numpy arrays, the others executed.

    The rows come through a relation (con.sql), not a cursor: DuckDB 1.5 converts a relation's rows to
    numpy at a quarter to a half of the CPU a cursor's fetchnumpy takes (a window of 800 k rows, 9
    columns: 0.036 against 0.075 CPU s). A relation takes no parameters (con.sql's `params` run the
    query apart, 40 times slower), so each becomes a DuckDB variable the statement reads with
    getvariable, set through a prepared statement (no value is spliced into SQL). An empty list
    parameter stays a parameter (a variable would type it INTEGER[]), through the cursor."""
    *before, last = statements(query)
    for stmt in before:
        _execute(con, stmt, params)
    wanted = {p: params[p] for p in set(_PARAM.findall(last))}
    if any(isinstance(v, (list, tuple)) and not v for v in wanted.values()):
        return _execute(con, last, params).fetchnumpy()
    for name, value in wanted.items():
        con.execute(f"SET VARIABLE {_VARIABLE}{name} = ?", [value])
    try:
        return con.sql(_PARAM.sub(lambda m: f"getvariable('{_VARIABLE}{m.group(1)}')", last)).fetchnumpy()
    finally:
        for name in wanted:
            con.execute(f"RESET VARIABLE {_VARIABLE}{name}")


def _executed(con: duckdb.DuckDBPyConnection, query: str, params: dict[str, Any]) -> Iterator[Any]:
    """Each statement of `query`.sql executed with the parameters it mentions (its cursor)."""
    for stmt in statements(query):
        yield _execute(con, stmt, params)


def _execute(con: duckdb.DuckDBPyConnection, stmt: str, params: dict[str, Any]) -> Any:
    wanted = {p: params[p] for p in set(_PARAM.findall(stmt))}
    return con.execute(stmt, wanted) if wanted else con.execute(stmt)


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
