-- reads: kernel_rows
-- creates: -
-- Devices that ran kernels, with how many and their busy span (kernel_rows: inspect_read.sql).
SELECT device_id, count(*) AS kernels, count(DISTINCT global_pid) AS processes,
       min(start_ns) AS first_ns, max(end_ns) AS last_ns
FROM kernel_rows
GROUP BY device_id
ORDER BY device_id;
