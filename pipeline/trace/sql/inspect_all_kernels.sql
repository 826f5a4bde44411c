-- reads: kernel_rows
-- creates: attributed, attributed_memops
-- Every kernel of the trace as one pseudo-occurrence (no region, no attribution), so that
-- `mfu inspect` classifies them with the very rules `mfu run` uses (classify.sql) and reads
-- the precision the matrix kernels' names say over the whole capture. No memory operations, no stream and no
-- communicator:
-- inspect shows none (a damaged streamId does not stop it). A view over inspect_read.sql's kernel_rows:
-- classify.sql reads it once, so no copy is made.
CREATE OR REPLACE TEMP VIEW attributed AS
SELECT 1 AS occurrence, global_pid, device_id, CAST(NULL AS BIGINT) AS stream_id, name_id, start_ns, end_ns, graph_id,
       detail_id, CAST(NULL AS UBIGINT) AS comm_key
FROM kernel_rows;

CREATE OR REPLACE TEMP TABLE attributed_memops AS
SELECT CAST(NULL AS BIGINT) AS occurrence, CAST(NULL AS BIGINT) AS global_pid, CAST(NULL AS BIGINT) AS device_id,
       CAST(NULL AS BIGINT) AS stream_id, CAST(NULL AS VARCHAR) AS name, CAST(NULL AS BIGINT) AS start_ns,
       CAST(NULL AS BIGINT) AS end_ns
WHERE false;
