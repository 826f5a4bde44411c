"""`import pandas` fails at once in mfu's own processes, the command's and its batch workers'.

DuckDB's Python client (1.5) imports pandas before binding every statement that has parameters, to
recognise pandas values among them; mfu passes none and reads results as numpy or tuples. With pandas
installed, a cold run paid its whole import (0.2-0.4 s, 40 MB); without it, a failed import (a search
of sys.path) per statement, about 230 a run. A None entry in sys.modules makes the import fail at once.
The command sets it only while it runs (`blocked`): a program that imports pipeline, or calls main()
and then imports pandas, keeps its pandas. A local pool's workers set it as they start (`block`, from
the pool's initializer): a forked worker inherits the command's entry, a spawned or forkserver one (the
default on macOS, and on Linux from Python 3.14) starts without it. A task on mfu's own Dask LocalCluster sets
it while it runs (`blocked`, executor._without_pandas): its worker is started by Dask's nanny. A task
sent to a scheduler given by address does not: the block is process-wide, and a worker there may run
other people's tasks in other threads at the same time.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


def block() -> bool:
    """Make `import pandas` fail at once in this process, unless pandas is loaded; True when this call did."""
    if "pandas" in sys.modules:
        return False
    sys.modules["pandas"] = None    # type: ignore[assignment]  # None there is how Python makes an import fail
    return True


@contextmanager
def blocked() -> Iterator[None]:
    """`block` while the body runs, then sys.modules as it was."""
    added = block()
    try:
        yield
    finally:
        if added and "pandas" in sys.modules and sys.modules["pandas"] is None:
            del sys.modules["pandas"]
