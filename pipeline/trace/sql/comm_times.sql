-- reads: comm_unions, comm_ids
-- creates: -
-- Per device and NCCL communicator (comm_unions.sql): its communication kernels' count and union, and how
-- much of that ran with no compute kernel on the device (docs/figures.md §6, as comm_overlap.sql per device):
--   exposed = union(communicator's kernels, compute) - union(compute)
--   hidden  = communicator's union - exposed
-- Most exposed first; a device -1 is back to NULL.
WITH comm AS (
    SELECT k2 AS device_id, k3 AS comm_id, union_ns, interval_count FROM comm_unions WHERE scope = 'alone' AND k1 = 1
),
compute AS (
    SELECT k2 AS device_id, k3 AS comm_id, union_ns FROM comm_unions WHERE scope = 'alone' AND k1 = 0
),
with_compute AS (
    SELECT k1 AS device_id, k2 AS comm_id, union_ns FROM comm_unions WHERE scope = 'with_compute'
),
figures AS (
    SELECT c.device_id, i.comm_key, CAST(c.interval_count AS BIGINT) AS kernel_count,
           CAST(c.union_ns AS BIGINT) AS comm_ns,
           CAST(w.union_ns - coalesce(p.union_ns, 0) AS BIGINT) AS exposed_ns
    FROM comm AS c
    JOIN with_compute AS w ON w.device_id = c.device_id AND w.comm_id = c.comm_id
    LEFT JOIN compute AS p ON p.device_id = c.device_id AND p.comm_id = c.comm_id
    JOIN comm_ids AS i ON i.comm_id = c.comm_id
)
SELECT nullif(device_id, -1) AS device_id, comm_key, kernel_count, comm_ns, exposed_ns, comm_ns - exposed_ns AS hidden_ns
FROM figures
ORDER BY exposed_ns DESC, device_id, comm_key;
