-- reads: classified, kernel_names
-- creates: class_ids, window_unions
-- unions (window_unions): occurrence = kernel, occurrence; device = kernel, occurrence, device_id; rank = kernel, occurrence, global_pid; total = kernel; total_device = kernel, device_id; part = kernel, comm, device_id; class = class_id; class_device = class_id, device_id; stream = kernel, device_id, stream_id
-- Every union the report needs, from one sorted copy of the window (trace/unions.py): the
-- classified kernels and memory operations are fetched and sorted once. kernel = 1 for kernels,
-- 0 for memory operations; the first five groupings are read with kernel = 1 only:
--   occurrence    per occurrence, over all devices ("at least one GPU busy", docs/figures.md §5)
--   device        per occurrence and device
--   rank          per occurrence and process (rank_union.sql, rank_times.sql)
--   total         over all selected occurrences at once (docs/figures.md §6: overlapping occurrences
--                 count once), and total_device the same per device (occurrence_totals.sql; it is
--                 also the busy time of comm_overlap.sql)
--   part          per device, split by communication or not (comm = class is $comm_class), for
--                 comm_overlap.sql
-- and over kernels and memory operations alike, per class across devices and per class and
-- device, over all selected occurrences (class_times.sql). Classes get integer ids (class_ids).
--   stream        per device and CUDA stream over all selected occurrences (stream_times.sql reads kernel = 1):
--                 in this pass, not a file of its own, so the window's rows are fetched and sorted once for it
--                 too (its own pass cost a cold run 0.1 CPU s at 2 M kernels, bench/RESULTS.md)
-- Keys must be integers: a missing device, process or stream is -1 here.
-- Kind and class come from each row's name (kernel_names, a few rows), joined on the integer name_id.
CREATE OR REPLACE TEMP TABLE class_ids AS
SELECT class, row_number() OVER (ORDER BY class) AS class_id
FROM (SELECT DISTINCT class FROM kernel_names);

-- Flags are fetched as 1-byte integers, class ids and occurrences as 4-byte ones (memory: 3.2 M rows at 8 M kernels).
WITH name_keys AS (
    SELECT n.name_id, CAST(n.kind = 'kernel' AS UTINYINT) AS kernel, CAST(n.class = $comm_class AS UTINYINT) AS comm,
           CAST(i.class_id AS INTEGER) AS class_id
    FROM kernel_names AS n
    JOIN class_ids AS i ON i.class = n.class
)
SELECT k.kernel, CAST(c.occurrence AS INTEGER) AS occurrence, coalesce(c.device_id, -1) AS device_id,
       coalesce(c.global_pid, -1) AS global_pid, k.comm, k.class_id, coalesce(c.stream_id, -1) AS stream_id,
       c.start_ns, c.end_ns
FROM classified AS c
JOIN name_keys AS k ON k.name_id = c.name_id;
