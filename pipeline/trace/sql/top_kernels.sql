-- The $limit kernel names (memory copies and sets included) with the most summed time
-- in the selected occurrences, with their class.
SELECT name, class, count(*) AS kernel_count, CAST(sum(end_ns - start_ns) AS BIGINT) AS sum_ns
FROM classified
GROUP BY name, class
ORDER BY sum_ns DESC, name
LIMIT $limit;
