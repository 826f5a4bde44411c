-- reads: ranges, range_group, numbered_key, numbered_label
-- creates: -
-- NVTX range names, grouped so PyTorch's ", seq = N, op_id = M" suffixes (or ", op_id = M"
-- alone, as recent PyTorch writes for most ops) collapse into one row per operator, and names that
-- differ only in their number into one row labelled 'ProfilerStep#<n>' (numbered_key, macros.sql); with
-- count, processes and median duration. Top $limit by count.
SELECT
    CASE WHEN count(DISTINCT range_group(name)) > 1 THEN any_value(numbered_label(name))
         ELSE any_value(range_group(name)) END AS name_group,
    range_group(name) <> name AS has_suffix,
    domain,
    count(*) AS ranges,
    count(DISTINCT global_pid) AS processes,
    CAST(median(end_ns - start_ns) AS BIGINT) AS median_ns
FROM ranges
GROUP BY numbered_key(name), has_suffix, domain
ORDER BY ranges DESC, name_group, domain NULLS FIRST
LIMIT $limit;
