-- reads: raw_memcpy, raw_memset, launched, range_buckets, overlapping_ranges
-- creates: attributed_memops
-- Memory copies and sets (CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET) attributed to the selected
-- occurrences by the same rules as kernels (docs/figures.md §4): through the launch keys that
-- attribute_launch.sql kept in `launched` (process or thread rule, duplicates removed);
-- $mode = 'window' instead takes every operation of the process overlapping the range,
-- clipped to it (attribute_window.sql leaves `launched` empty), paired through time buckets
-- (overlapping_ranges, macros.sql: linear in ranges). As for kernels there, an operation with no
-- process id is the range's process's only when the window holds one process: with several,
-- giving it to each counted it once per rank.
-- Stream and correlationId stay for duplicate_memops.sql (a row recorded twice).
CREATE OR REPLACE TEMP TABLE attributed_memops AS
WITH ops AS (
    SELECT start AS start_ns, "end" AS end_ns, deviceId AS device_id, streamId AS stream_id,
           correlationId AS correlation_id, globalPid AS global_pid, '[CUDA memcpy]' AS name
    FROM raw_memcpy
    UNION ALL
    SELECT start, "end", deviceId, streamId, correlationId, globalPid, '[CUDA memset]'
    FROM raw_memset
)
SELECT a.occurrence, o.global_pid, o.device_id, o.stream_id, o.correlation_id, o.name, o.start_ns, o.end_ns
FROM ops AS o
JOIN launched AS a
  ON o.global_pid = a.global_pid
 AND o.correlation_id = a.correlation_id
UNION ALL
SELECT occurrence, range_pid, device_id, stream_id, correlation_id, name,
       greatest(start_ns, range_start_ns), least(end_ns, range_end_ns)
FROM overlapping_ranges(ops)
WHERE $mode = 'window'
  AND (global_pid = range_pid
       OR (global_pid IS NULL AND (SELECT count(DISTINCT global_pid) FROM range_buckets) = 1));
