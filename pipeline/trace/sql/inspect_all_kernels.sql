-- reads: kernel_rows
-- creates: kernel_keys, attributed, attributed_memops
-- Every kernel of the trace, no region and no attribution, classified by `mfu inspect` with the very rules
-- `mfu run` uses (classify.sql), for the precision the matrix kernels' names say over the whole capture.
-- A class and a precision depend on a kernel's name ids alone (short, demangled, graph), so classify.sql is
-- given one row per distinct id triple (`kernel_keys`, with its kernels' count and summed time), not one per
-- kernel: classifying 2 M kernel rows made a 2 M-row `classified` only to be summed per name again
-- (0.25 of inspect's 5 CPU seconds at 2 M kernels). Each triple is its own pseudo-occurrence (its key_id), so
-- inspect_name_times.sql finds each classified row's triple and sums the kernels per name id, as
-- name_times.sql does per kernel. No memory operations, no stream, device, process or communicator: inspect
-- reads none of them here (a damaged streamId does not stop it).
CREATE OR REPLACE TEMP TABLE kernel_keys AS
SELECT row_number() OVER () AS key_id, name_id, detail_id, graph_id, count(*) AS kernel_count,
       sum(end_ns - start_ns) AS sum_ns
FROM kernel_rows
GROUP BY name_id, detail_id, graph_id;

CREATE OR REPLACE TEMP VIEW attributed AS
SELECT key_id AS occurrence, CAST(NULL AS BIGINT) AS global_pid, CAST(NULL AS BIGINT) AS device_id,
       CAST(NULL AS BIGINT) AS stream_id, name_id, CAST(0 AS BIGINT) AS start_ns, CAST(0 AS BIGINT) AS end_ns,
       graph_id, detail_id, CAST(NULL AS UBIGINT) AS comm_key
FROM kernel_keys;

CREATE OR REPLACE TEMP TABLE attributed_memops AS
SELECT CAST(NULL AS BIGINT) AS occurrence, CAST(NULL AS BIGINT) AS global_pid, CAST(NULL AS BIGINT) AS device_id,
       CAST(NULL AS BIGINT) AS stream_id, CAST(NULL AS VARCHAR) AS name, CAST(NULL AS BIGINT) AS start_ns,
       CAST(NULL AS BIGINT) AS end_ns
WHERE false;
