-- reads: attributed
-- creates: attributed_unions
-- unions (attributed_unions): occurrence = occurrence; device = occurrence, device_id; rank = occurrence, global_pid; total = ; total_device = device_id
-- Every union of attributed kernels the report needs, from one sorted copy (trace/unions.py):
--   occurrence    per occurrence, over all devices ("at least one GPU busy", SEMANTICS §5)
--   device        per occurrence and device
--   rank          per occurrence and process (rank_union.sql)
--   total         over all selected occurrences at once (SEMANTICS §6: overlapping occurrences
--                 count once), and total_device the same per device (occurrence_totals.sql)
-- Keys must be integers: a missing device or process is -1 here.
SELECT occurrence, coalesce(device_id, -1) AS device_id, coalesce(global_pid, -1) AS global_pid, start_ns, end_ns
FROM attributed;
