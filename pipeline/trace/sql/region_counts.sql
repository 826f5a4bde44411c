-- reads: region_ranges
-- creates: -
-- How many occurrences each process has: used to check the job's range and name it in errors.
SELECT pid, global_pid, count(*) AS occurrences
FROM region_ranges
GROUP BY pid, global_pid
ORDER BY pid, global_pid;
