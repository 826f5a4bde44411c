-- reads: classified
-- creates: class_ids, classified_unions
-- unions (classified_unions): class = class_id; class_device = class_id, device_id; busy = kernel, device_id; part = kernel, comm, device_id
-- The unions of the classified kernels and memory operations over all selected occurrences
-- (SEMANTICS §6), from one sorted copy (trace/unions.py): per class across devices and per
-- class and device (class_times.sql); per device over kernels only (kernel = 1), all of them
-- ('busy') and split by communication or not ('part', comm = class is $comm_class) for
-- comm_overlap.sql. Classes get integer ids (class_ids); a missing device is -1.
CREATE OR REPLACE TEMP TABLE class_ids AS
SELECT class, row_number() OVER (ORDER BY class) AS class_id
FROM (SELECT DISTINCT class FROM classified);

SELECT i.class_id, coalesce(c.device_id, -1) AS device_id, CAST(c.kind = 'kernel' AS BIGINT) AS kernel,
       CAST(c.class = $comm_class AS BIGINT) AS comm, c.start_ns, c.end_ns
FROM classified AS c
JOIN class_ids AS i ON i.class = c.class;
