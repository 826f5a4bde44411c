-- reads: -
-- creates: gpu_work
-- The trace's GPU work with the process each row belongs to, for the GPU-active window: a run's region kinds
-- gpu_active and time_window (window_ranges.sql) and what `mfu init` proposes as gpu_active
-- (discovery_active.sql) read this one definition, so both see the same windows (docs/figures.md §3).
-- GPU work is every row of table `kernel_tbl` (views.sql `kernels`: kernel rows and whole CUDA graph
-- launch rows, or inspect's one read of it, kernel_rows) and every memory copy and set. A macro (every
-- connection defines it, connection.py connect()): it reads raw_memcpy, raw_memset and `kernel_tbl` when called.
-- A row without a process id (an export whose tables lack globalPid) is the process's when the trace's GPU
-- rows name exactly one process, and process key 0 (pid 0) when they name none; with several, nothing says
-- whose it is and it is left out, as window attribution leaves it out (attribute_window.sql).
CREATE OR REPLACE TEMP MACRO gpu_work(kernel_tbl) AS TABLE
WITH work AS (
    SELECT global_pid, start_ns, end_ns FROM query_table(kernel_tbl)
    UNION ALL
    SELECT globalPid, start, "end" FROM raw_memcpy
    UNION ALL
    SELECT globalPid, start, "end" FROM raw_memset
),
named AS (
    SELECT count(DISTINCT global_pid) AS processes, min(global_pid) AS only_pid FROM work
),
owned AS (
    SELECT CASE WHEN w.global_pid IS NOT NULL THEN w.global_pid
                WHEN n.processes = 1 THEN n.only_pid
                WHEN n.processes = 0 THEN 0 END AS global_pid,
           w.start_ns, w.end_ns
    FROM work AS w, named AS n
)
SELECT global_pid, start_ns, end_ns FROM owned WHERE global_pid IS NOT NULL;
