-- reads: discovery_buckets, kernel_rows
-- creates: discovery_work
-- unions (discovery_work): occurrence = occ_id
-- Kernels launched inside an occurrence by its process (process attribution, docs/figures.md §4), as the run
-- pairs launches with its selected ranges (attribute_launch.sql): the occurrences listed by time bucket
-- (macros.sql time_buckets), a launch looked up under its own bucket and process, an equality join linear
-- in occurrences. Each kernel has its launch time once (kernel_rows, inspect_read.sql: duplicate runtime
-- rows of one launch key give the first), then falls in at most one occurrence per name group: a launch
-- exactly at the end of an occurrence that the next one starts at goes to the next.
-- Their union, sum, count and last end per occurrence come from trace/unions.py's sort and sweep, as the
-- run's kernel unions do (docs/figures.md §5): a SQL window re-sorted every pair (half of inspect's time at 2 M kernels).
WITH width AS (
    SELECT any_value(width_ns) AS width_ns FROM discovery_buckets
),
launched AS (
    SELECT k.global_pid, k.launch_ns, k.launch_ns // w.width_ns AS bucket, k.start_ns, k.end_ns
    FROM kernel_rows AS k, width AS w
    WHERE k.launch_ns IS NOT NULL
)
SELECT o.occ_id, k.start_ns, k.end_ns
FROM launched AS k
JOIN discovery_buckets AS o
  ON o.global_pid = k.global_pid AND o.bucket = k.bucket
 AND k.launch_ns >= o.start_ns AND k.launch_ns <= o.end_ns
WHERE k.launch_ns < o.end_ns OR NOT o.shared_end;
