"""The SQLite scanner comes from the pinned wheel; opening a trace needs no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from nsys_export import Export, gpid, gtid
from pipeline.trace.connection import connect, loadable_scanner, sqlite_extension_path

REPO = Path(__file__).resolve().parents[1]
UNREACHABLE = "http://127.0.0.1:9"


def test_scanner_is_loaded_from_the_wheel_with_auto_install_off() -> None:
    con = connect()
    try:
        assert con.execute("SELECT current_setting('autoinstall_known_extensions'), "
                           "current_setting('autoload_known_extensions')").fetchone() == (False, False)
        # unsigned loading was allowed for the scanner's LOAD only: off again for anything after it
        assert con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone() == (False,)
        scanner = con.execute("SELECT loaded FROM duckdb_extensions() "
                              "WHERE list_contains(aliases, 'sqlite')").fetchall()
    finally:
        con.close()
    assert scanner == [(True,)]          # loaded by path (the fresh-home test shows nothing is installed)
    with loadable_scanner() as link:
        assert link.resolve() == sqlite_extension_path().resolve()
    assert not link.parent.exists()                  # removed once loaded: nothing left in the temp folder
    assert sqlite_extension_path().is_file()


def test_open_trace_with_unreachable_proxy_and_a_fresh_home(tmp_path: Path) -> None:
    """A machine that never cached an extension and whose proxy refuses connections still opens a trace."""
    e = Export()
    e.range(100, 200, gtid(1, 1), "step")
    e.launch(110, gtid(1, 1), 1)
    e.kernel(120, 180, gpid(1), 1)
    trace = e.write(tmp_path / "t.sqlite")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO), "HTTP_PROXY": UNREACHABLE,
           "HTTPS_PROXY": UNREACHABLE, "http_proxy": UNREACHABLE, "https_proxy": UNREACHABLE, "NO_PROXY": ""}
    script = ("import json, sys\n"
              "from pipeline.trace import chain\n"
              "from pipeline.trace.open import open_trace\n"
              "t = open_trace(sys.argv[1])\n"
              "print(json.dumps(chain.run(t.con, {'views', 'inspect_read', 'inspect_counts'})['inspect_counts'][0]))\n")
    done = subprocess.run([sys.executable, "-c", script, str(trace)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert (counts["kernels"], counts["launches"], counts["nvtx_ranges"]) == (1, 1, 1)
    assert list(home.iterdir()) == []                       # nothing installed into the user's home
