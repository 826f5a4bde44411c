-- reads: classified
-- creates: name_times
-- Count and summed time of each kernel name id (memory copies and sets included) per occurrence:
-- the one pass over the window's rows that top_kernels.sql and precision_times.sql (three
-- queries per report) then read instead of grouping every row again. Per occurrence, so that a
-- window shared by several jobs (analysis/sharing.py) builds it once and cuts it per job.
CREATE OR REPLACE TEMP TABLE name_times AS
SELECT occurrence, name_id, count(*) AS kernel_count, sum(end_ns - start_ns) AS sum_ns
FROM classified
GROUP BY occurrence, name_id;
