-- reads: all_ranges, all_classified, all_kernel_names, all_operator_work
-- creates: rank_keys, device_keys, selected_ranges, operator_work
-- Combine the files collected by rank_collect.sql into the selected_ranges table every later
-- query reads, and key the ranks and the devices that ran kernels for classify_combine.sql.
-- pids and device ids repeat across files (each node has its device 0, pids collide across
-- hosts), so a rank is (file, global_pid) and a device is (file, device_id); both get a dense
-- surrogate key here, mapped back through rank_keys and device_keys. Occurrence k stays per process (docs/figures.md §3): numbered within each file.
CREATE OR REPLACE TEMP TABLE rank_keys AS
SELECT file, global_pid, row_number() OVER (ORDER BY file, global_pid) AS rank_key
FROM (SELECT DISTINCT file, global_pid FROM all_ranges);
CREATE OR REPLACE TEMP TABLE device_keys AS
SELECT file, device_id, row_number() OVER (ORDER BY file, device_id) - 1 AS device_key
FROM (SELECT DISTINCT c.file, c.device_id
      FROM all_classified AS c
      JOIN all_kernel_names AS n ON n.file = c.file AND n.name_id = c.name_id
      WHERE n.kind = 'kernel' AND c.device_id IS NOT NULL);
CREATE OR REPLACE TEMP TABLE selected_ranges AS
SELECT r.occurrence, k.rank_key AS global_pid, r.pid, r.global_tid, r.start_ns, r.end_ns, r.name, r.period_ns
FROM all_ranges AS r
JOIN rank_keys AS k ON k.file = r.file AND k.global_pid = r.global_pid;
CREATE OR REPLACE TEMP TABLE operator_work AS
SELECT * EXCLUDE (file) FROM all_operator_work;
SELECT 'rank' AS kind, file, global_pid AS original, rank_key AS key FROM rank_keys
UNION ALL
SELECT 'device', file, device_id, device_key FROM device_keys
ORDER BY kind, key;
