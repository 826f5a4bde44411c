-- reads: attributed_memops
-- creates: memop_copies
-- Attributed memory copies and sets that are exact copies of another (same occurrence, process, device,
-- stream, start, end, correlationId and kind), per occurrence, by duplicate_kernels.sql's rule: one
-- stream runs one operation at a time, so a second row of one call on one stream over the very same
-- nanoseconds is the same operation recorded twice, not GPU work. Every copy but one is deleted from
-- `attributed_memops` before classify.sql reads it, so the memory class's time and the summed GPU time
-- count it once; the rows returned say how many were dropped and the time they would have added
-- (duplicate_ns), for the warning.
-- Memory operations are few beside kernels: one aggregate on every column that tells them apart.
CREATE OR REPLACE TEMP TABLE memop_copies AS
SELECT occurrence, global_pid, device_id, stream_id, correlation_id, name, start_ns, end_ns, count(*) - 1 AS extra
FROM attributed_memops
GROUP BY occurrence, global_pid, device_id, stream_id, correlation_id, name, start_ns, end_ns
HAVING count(*) > 1;

DELETE FROM attributed_memops
WHERE rowid IN (
    SELECT rowid FROM (
        SELECT a.rowid,
               row_number() OVER (PARTITION BY a.occurrence, a.global_pid, a.device_id, a.stream_id,
                                               a.correlation_id, a.name, a.start_ns, a.end_ns) AS nth
        FROM attributed_memops AS a
        SEMI JOIN memop_copies AS c
          ON a.occurrence IS NOT DISTINCT FROM c.occurrence AND a.global_pid IS NOT DISTINCT FROM c.global_pid
         AND a.device_id IS NOT DISTINCT FROM c.device_id AND a.stream_id IS NOT DISTINCT FROM c.stream_id
         AND a.correlation_id IS NOT DISTINCT FROM c.correlation_id
         AND a.name = c.name AND a.start_ns = c.start_ns AND a.end_ns = c.end_ns
    )
    WHERE nth > 1
);

SELECT occurrence, CAST(sum(extra) AS BIGINT) AS rows, CAST(sum(extra * (end_ns - start_ns)) AS BIGINT) AS duplicate_ns
FROM memop_copies
GROUP BY occurrence
ORDER BY occurrence;
