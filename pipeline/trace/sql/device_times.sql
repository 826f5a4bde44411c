-- reads: kernel_union
-- creates: -
-- Per-device busy time (union), kernel sum and count, per selected occurrence.
SELECT occurrence, device_id, union_ns, sum_ns, kernel_count
FROM kernel_union
WHERE device_id IS NOT NULL
ORDER BY occurrence, device_id;
