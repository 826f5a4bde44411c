-- reads: all_classified, rank_keys, device_keys
-- creates: classified
-- The combined `classified` table of several files (collected by classify_collect.sql), on
-- the keys rank_combine.sql gave ranks and devices, so class_times, top_kernels,
-- comm_overlap and pattern_times read it exactly as they read one file's. A device that ran
-- memory operations but no attributed kernel has no device key; it gets its own key after
-- the kernel devices, so its copies still union per (file, device), never across files.
CREATE OR REPLACE TEMP TABLE classified AS
WITH extra_devices AS (
    SELECT file, device_id,
           (SELECT count(*) FROM device_keys) + row_number() OVER (ORDER BY file, device_id) - 1 AS device_key
    FROM (SELECT DISTINCT file, device_id FROM all_classified WHERE device_id IS NOT NULL
          EXCEPT SELECT file, device_id FROM device_keys)
)
SELECT c.occurrence, k.rank_key AS global_pid, coalesce(d.device_key, x.device_key) AS device_id,
       c.name, c.class, c.kind, c.start_ns, c.end_ns, c.precision
FROM all_classified AS c
LEFT JOIN rank_keys AS k ON k.file = c.file AND k.global_pid = c.global_pid
LEFT JOIN device_keys AS d ON d.file = c.file AND d.device_id = c.device_id
LEFT JOIN extra_devices AS x ON x.file = c.file AND x.device_id = c.device_id;
