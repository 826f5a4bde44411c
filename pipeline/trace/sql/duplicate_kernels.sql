-- reads: attributed
-- creates: kernel_copies
-- Attributed kernel rows that are exact copies of another (same occurrence, process, device, stream,
-- start, end and correlationId), per occurrence: one stream runs one kernel at a time, so a second row
-- of one launch on one stream over the very same nanoseconds is the same execution recorded twice
-- (a damaged or merged export), not GPU work. Every copy but one is deleted from `attributed` before
-- classify.sql reads it, so sums, counts, class times and the roofline count the kernel once (the
-- union is unchanged either way); the rows returned say how many were dropped and the time they
-- would have added (duplicate_ns), for the warning. Two kernels of one launch on two streams (the
-- nodes of a CUDA graph) differ in stream and are both kept.
-- Most windows hold no copy, so the window's rows are aggregated once on two columns only: two copies
-- share device and start, and the (device, start) pairs held by several rows (usually none: one
-- device starts few kernels in the same nanosecond) are the only candidates. Only their rows are
-- grouped on all seven columns, and the delete touches only the copied groups: with no copy, 0.65-0.75
-- of the time of one seven-column aggregate over every row (0.8 M and 3.2 M rows, 8 devices).
CREATE OR REPLACE TEMP TABLE kernel_copies AS
WITH shared_starts AS (
    SELECT device_id, start_ns
    FROM attributed
    GROUP BY device_id, start_ns
    HAVING count(*) > 1
)
SELECT a.occurrence, a.global_pid, a.device_id, a.stream_id, a.correlation_id, a.start_ns, a.end_ns,
       count(*) - 1 AS extra
FROM attributed AS a
SEMI JOIN shared_starts AS s ON a.device_id IS NOT DISTINCT FROM s.device_id AND a.start_ns = s.start_ns
GROUP BY a.occurrence, a.global_pid, a.device_id, a.stream_id, a.correlation_id, a.start_ns, a.end_ns
HAVING count(*) > 1;

DELETE FROM attributed
WHERE rowid IN (
    SELECT rowid FROM (
        SELECT a.rowid,
               row_number() OVER (PARTITION BY a.occurrence, a.global_pid, a.device_id, a.stream_id,
                                               a.correlation_id, a.start_ns, a.end_ns) AS nth
        FROM attributed AS a
        SEMI JOIN kernel_copies AS c
          ON a.occurrence IS NOT DISTINCT FROM c.occurrence AND a.global_pid IS NOT DISTINCT FROM c.global_pid
         AND a.device_id IS NOT DISTINCT FROM c.device_id AND a.stream_id IS NOT DISTINCT FROM c.stream_id
         AND a.correlation_id IS NOT DISTINCT FROM c.correlation_id
         AND a.start_ns = c.start_ns AND a.end_ns = c.end_ns
    )
    WHERE nth > 1
);

SELECT occurrence, CAST(sum(extra) AS BIGINT) AS rows, CAST(sum(extra * (end_ns - start_ns)) AS BIGINT) AS duplicate_ns
FROM kernel_copies
GROUP BY occurrence
ORDER BY occurrence;
