"""The floor for benchmark (a): DuckDB reads the kernel and runtime tables once, joins, sums."""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.trace.open import connect


def main(trace: str) -> None:
    con = connect()
    literal = "'" + trace.replace("'", "''") + "'"
    con.execute(f"ATTACH {literal} AS nsys (TYPE sqlite, READ_ONLY)")
    print(con.execute((Path(__file__).parent / "floor.sql").read_text()).fetchall())


if __name__ == "__main__":
    main(sys.argv[1])
