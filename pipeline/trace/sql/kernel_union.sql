-- reads: window_unions
-- creates: kernel_union
-- Sum, count, union and last end of attributed kernels per occurrence, over all devices
-- (device_id NULL: "at least one GPU busy") and per device (docs/figures.md §5), for
-- occurrence_times.sql and device_times.sql; computed in window_unions.sql (kernel = 1).
CREATE OR REPLACE TEMP TABLE kernel_union AS
SELECT k2 AS occurrence, CASE WHEN scope = 'device' THEN k3 END AS device_id,
       union_ns, sum_ns, interval_count AS kernel_count, last_end_ns
FROM window_unions
WHERE k1 = 1 AND (scope = 'occurrence' OR (scope = 'device' AND k3 <> -1));
