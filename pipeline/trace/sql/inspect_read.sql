-- reads: kernels, launches
-- creates: launch_keys, kernel_rows
-- The one read of the trace's launch and kernel tables for `mfu inspect` / `mfu init` (issue 34): the
-- SQLite scanner reads the whole file table for every query that names it, and inspect's counts,
-- devices, processes, kernel classes and region discovery each read kernels, some several times
-- (a 2 M-kernel trace took 3.4x a cold `mfu run`). Each later inspect query reads these two tables
-- (inspect_graphs.sql too: node_graph_id).
-- launch_keys: one row per launch key (process, correlationId, docs/figures.md §4), its first launch time
-- and how many runtime rows carry it (duplicate rows of one launch: cudaLaunchKernel and _v7000).
-- kernel_rows: every GPU-work row of the `kernels` view with the columns inspect uses, and launch_ns,
-- the first launch time of its key: NULL when no runtime row of its key is in its process (never a
-- match for a NULL process or correlationId). A runtime row's start is never NULL (integrity.py
-- refuses such an export when it is attached), so NULL means no launch row.
CREATE OR REPLACE TEMP TABLE launch_keys AS
SELECT global_pid, correlation_id, min(start_ns) AS launch_ns, count(*) AS launch_rows
FROM launches
GROUP BY global_pid, correlation_id;

CREATE OR REPLACE TEMP TABLE kernel_rows AS
SELECT k.global_pid, k.device_id, k.name_id, k.detail_id, k.graph_id, k.node_graph_id,
       k.start_ns, k.end_ns, l.launch_ns
FROM kernels AS k
LEFT JOIN launch_keys AS l
  ON l.global_pid = k.global_pid AND l.correlation_id = k.correlation_id;
