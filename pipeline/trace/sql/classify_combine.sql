-- reads: all_classified, all_kernel_names, rank_keys, device_keys
-- creates: kernel_names, classified
-- The combined `classified` and `kernel_names` tables of several files (collected by
-- classify_collect.sql), on the keys rank_combine.sql gave ranks and devices, so class_times,
-- top_kernels, comm_overlap and pattern_times read them exactly as they read one file's. Each
-- file numbered its names itself: (file, name_id) is mapped onto one id per distinct (name,
-- class, kind, precision), numbered as classify.sql numbers them. A device that ran memory
-- operations but no attributed kernel has no device key; it gets its own key after the kernel
-- devices, so its copies still union per (file, device), never across files. Stream ids stay as each
-- file has them: a stream is named within its device, and device keys are per (file, device). A
-- communicator key is the same on every rank of the communicator: it stays as it is.
CREATE OR REPLACE TEMP TABLE kernel_names AS
SELECT row_number() OVER (ORDER BY name, class, kind, precision NULLS FIRST) AS name_id, name, class, kind, precision
FROM (SELECT DISTINCT name, class, kind, precision FROM all_kernel_names);

CREATE OR REPLACE TEMP TABLE classified AS
WITH name_keys AS (
    SELECT a.file, a.name_id, n.name_id AS name_key
    FROM all_kernel_names AS a
    JOIN kernel_names AS n
      ON n.name = a.name AND n.class = a.class AND n.kind = a.kind AND n.precision IS NOT DISTINCT FROM a.precision
),
extra_devices AS (
    SELECT file, device_id,
           (SELECT count(*) FROM device_keys) + row_number() OVER (ORDER BY file, device_id) - 1 AS device_key
    FROM (SELECT DISTINCT file, device_id FROM all_classified WHERE device_id IS NOT NULL
          EXCEPT SELECT file, device_id FROM device_keys)
)
SELECT c.occurrence, k.rank_key AS global_pid, coalesce(d.device_key, x.device_key) AS device_id,
       m.name_key AS name_id, c.start_ns, c.end_ns, c.stream_id, c.comm_key
FROM all_classified AS c
JOIN name_keys AS m ON m.file = c.file AND m.name_id = c.name_id
LEFT JOIN rank_keys AS k ON k.file = c.file AND k.global_pid = c.global_pid
LEFT JOIN device_keys AS d ON d.file = c.file AND d.device_id = c.device_id
LEFT JOIN extra_devices AS x ON x.file = c.file AND x.device_id = c.device_id;
