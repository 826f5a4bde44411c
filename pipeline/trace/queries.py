"""Run the SQL files in pipeline/trace/sql by name, with named parameters.

No SQL text lives anywhere else: a file holds one or more statements separated by
`;` at line ends, and each statement gets only the `$parameters` it mentions
(DuckDB rejects unused ones).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

import duckdb

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@cache
def statements(name: str) -> tuple[str, ...]:
    text = resources.files("pipeline.trace").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return tuple(s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip())


def run(con: duckdb.DuckDBPyConnection, query: str, /, **params: Any) -> list[dict[str, Any]]:
    """Execute every statement of `query`.sql; return the last one's rows as dicts."""
    rows: list[dict[str, Any]] = []
    for stmt in statements(query):
        wanted = {p: params[p] for p in set(_PARAM.findall(stmt))}
        cur = con.execute(stmt, wanted) if wanted else con.execute(stmt)
        if cur.description:
            cols = [d[0] for d in cur.description]
            rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    return rows
