-- reads: kernels
-- creates: -
-- Devices that ran kernels, with how many and their busy span.
SELECT device_id, count(*) AS kernels, count(DISTINCT global_pid) AS processes,
       min(start_ns) AS first_ns, max(end_ns) AS last_ns
FROM kernels
GROUP BY device_id
ORDER BY device_id;
