-- reads: classified, kernel_names
-- creates: comm_ids, comm_unions
-- unions (comm_unions): alone = comm, device_id, comm_id; with_compute = device_id, comm_id
-- Communication time per device and NCCL communicator (classified.comm_key; a communication kernel whose
-- communicator the export does not say is left out), over all selected occurrences at once (docs/figures.md
-- §6), for comm_times.sql. Kernels only. The rows: each communication kernel ($comm_class) of a known
-- communicator (comm = 1), and each compute kernel (comm = 0, every other class) once for every communicator
-- whose kernels ran on its device, so that per device and communicator
--   alone, comm = 1     the union of the communicator's kernels
--   alone, comm = 0     the union of the device's compute kernels
--   with_compute        the union of both
-- Communicator keys are unsigned 64-bit; the unions take int64 keys, so each gets a dense id (comm_ids).
-- A missing device is -1. Each row's occurrence comes along: a window shared by several jobs (analysis/sharing.py)
-- sorts its rows once and cuts each job's occurrences from them (trace/unions.py `cut`); its communicators'
-- compute rows are then those of every device a communicator ran on in the window, which adds groups no
-- communicator's own row joins in comm_times.sql, and changes none that one does.
-- The compute rows' EXISTS changes no row (no communicator: no device_comms); without it DuckDB 1.5 scans the
-- window's kernels to join them to no communicator (0.04-0.07 CPU s at 2 M kernels), with it not at all.
CREATE OR REPLACE TEMP TABLE comm_ids AS
SELECT comm_key, CAST(row_number() OVER (ORDER BY comm_key) AS BIGINT) AS comm_id
FROM (SELECT DISTINCT comm_key FROM classified WHERE comm_key IS NOT NULL);

WITH names AS (
    SELECT name_id, CAST(class = $comm_class AS UTINYINT) AS comm FROM kernel_names WHERE kind = 'kernel'
),
comm_rows AS (
    SELECT coalesce(c.device_id, -1) AS device_id, i.comm_id, c.occurrence, c.start_ns, c.end_ns
    FROM classified AS c
    JOIN names AS n ON n.name_id = c.name_id AND n.comm = 1
    JOIN comm_ids AS i ON i.comm_key = c.comm_key
),
device_comms AS (
    SELECT DISTINCT device_id, comm_id FROM comm_rows
)
SELECT CAST(1 AS UTINYINT) AS comm, device_id, comm_id, occurrence, start_ns, end_ns FROM comm_rows
UNION ALL
SELECT CAST(0 AS UTINYINT), d.device_id, d.comm_id, c.occurrence, c.start_ns, c.end_ns
FROM classified AS c
JOIN names AS n ON n.name_id = c.name_id AND n.comm = 0
JOIN device_comms AS d ON d.device_id = coalesce(c.device_id, -1)
WHERE EXISTS (SELECT 1 FROM comm_ids);
