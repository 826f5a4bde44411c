-- reads: ranges
-- creates: -
-- NVTX range names, grouped so PyTorch's ", seq = N, op_id = M" suffixes (or ", op_id = M"
-- alone, as recent PyTorch writes for most ops) collapse into one row per operator; with
-- count, processes and median duration. Top $limit by count.
SELECT
    regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', '') AS name_group,
    (regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', '') <> name) AS has_suffix,
    domain,
    count(*) AS ranges,
    count(DISTINCT global_pid) AS processes,
    CAST(median(end_ns - start_ns) AS BIGINT) AS median_ns
FROM ranges
GROUP BY ALL
ORDER BY ranges DESC, name_group, domain NULLS FIRST
LIMIT $limit;
