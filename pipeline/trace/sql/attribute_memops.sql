-- reads: raw_memcpy, raw_memset, launched, selected_ranges
-- creates: attributed_memops
-- Memory copies and sets (CUPTI_ACTIVITY_KIND_MEMCPY / _MEMSET) attributed to the selected
-- occurrences by the same rules as kernels (SEMANTICS §4): through the launch keys that
-- attribute_launch.sql kept in `launched` (process or thread rule, duplicates removed);
-- $mode = 'window' instead takes every operation of the process overlapping the range,
-- clipped to it (attribute_window.sql leaves `launched` empty).
CREATE OR REPLACE TEMP TABLE attributed_memops AS
WITH ops AS (
    SELECT start AS start_ns, "end" AS end_ns, deviceId AS device_id,
           correlationId AS correlation_id, globalPid AS global_pid, '[CUDA memcpy]' AS name
    FROM raw_memcpy
    UNION ALL
    SELECT start, "end", deviceId, correlationId, globalPid, '[CUDA memset]'
    FROM raw_memset
)
SELECT a.occurrence, o.global_pid, o.device_id, o.name, o.start_ns, o.end_ns
FROM ops AS o
JOIN launched AS a
  ON o.global_pid = a.global_pid
 AND o.correlation_id = a.correlation_id
UNION ALL
SELECT s.occurrence, o.global_pid, o.device_id, o.name,
       greatest(o.start_ns, s.start_ns), least(o.end_ns, s.end_ns)
FROM ops AS o
JOIN selected_ranges AS s
  ON (o.global_pid = s.global_pid OR o.global_pid IS NULL)
 AND o.start_ns < s.end_ns
 AND o.end_ns > s.start_ns
WHERE $mode = 'window';
