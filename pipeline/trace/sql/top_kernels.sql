-- reads: classified
-- creates: -
-- The $limit kernel names (memory copies and sets included) with the most summed time
-- in the selected occurrences, with their class; only those of class $class unless it is
-- NULL (the unclassified names a user may want to name with analysis.kernel_classes).
SELECT name, class, count(*) AS kernel_count, CAST(sum(end_ns - start_ns) AS BIGINT) AS sum_ns
FROM classified
WHERE $class IS NULL OR class = $class
GROUP BY name, class
ORDER BY sum_ns DESC, name
LIMIT $limit;
