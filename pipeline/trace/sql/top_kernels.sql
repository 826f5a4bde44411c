-- reads: name_times, kernel_names
-- creates: -
-- The $limit kernel names (memory copies and sets included) with the most summed time
-- in the selected occurrences, with their class; only those of class $class unless it is
-- NULL (the unclassified names a user may want to name with analysis.kernel_classes).
-- Rows are summed per name_id first (integers, name_times.sql), then per name and class
-- (kernel_names: a name may have several ids, one per precision).
WITH per_id AS (
    SELECT name_id, sum(kernel_count) AS kernel_count, sum(sum_ns) AS sum_ns
    FROM name_times
    GROUP BY name_id
)
SELECT n.name, n.class, CAST(sum(p.kernel_count) AS BIGINT) AS kernel_count, CAST(sum(p.sum_ns) AS BIGINT) AS sum_ns
FROM per_id AS p
JOIN kernel_names AS n ON n.name_id = p.name_id
WHERE $class IS NULL OR n.class = $class
GROUP BY n.name, n.class
ORDER BY sum_ns DESC, n.name
LIMIT $limit;
