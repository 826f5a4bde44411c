"""The floor: DuckDB reads the kernel and runtime tables once, joins, sums (start-up excluded).

With --reads, bench/reads.sql instead: the same two tables read with the columns a job needs, no
join (what a cold `mfu run` cannot go below). Prints the query's result and, last, the seconds
from connecting to the result: wall, then CPU (user + system, all threads).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pipeline.trace.open import literal
from pipeline.trace.connection import connect


def main(trace: str, query: str = "floor.sql") -> None:
    start, cpu = time.perf_counter(), time.process_time()
    con = connect()
    con.execute(f"ATTACH {literal(trace)} AS nsys (TYPE sqlite, READ_ONLY)")
    rows = con.execute((Path(__file__).parent / query).read_text()).fetchall()
    print(rows, time.perf_counter() - start, time.process_time() - cpu)


if __name__ == "__main__":
    main(sys.argv[-1], "reads.sql" if "--reads" in sys.argv[1:-1] else "floor.sql")
