-- reads: raw_nvtx__all, raw_runtime__all, raw_kernel__all, raw_graph_trace__all, raw_memcpy__all, raw_memset__all, raw_processes__all, raw_gpu__all, raw_strings__all
-- creates: merged_keys
-- Several small trace files measured as one (analysis/merged.py, issue 34): can their ids be made unique by
-- putting the file's 0-based index ($file in the raw_*__all views) in bits no id of theirs uses? A process key
-- (globalTid / globalPid) keeps its pid and tid in bits 0-47 and its host (VM id) in bits 48+: the file takes
-- the host's place, so each file must hold one host (merged_keys.host, given back by merge_split.sql) and no
-- negative key (which a measurement refuses, naming the file: the per-file path says so). Device ids take the
-- file in bits 32+, string ids in bits 40+: each must be below. The last statement says whether all holds;
-- merged.py builds the files one by one otherwise.
CREATE OR REPLACE TEMP TABLE merged_keys AS
WITH keys AS (
    SELECT file, globalTid AS g FROM raw_nvtx__all
    UNION ALL SELECT file, globalTid FROM raw_runtime__all
    UNION ALL SELECT file, globalPid FROM raw_kernel__all
    UNION ALL SELECT file, globalPid FROM raw_graph_trace__all
    UNION ALL SELECT file, globalPid FROM raw_memcpy__all
    UNION ALL SELECT file, globalPid FROM raw_memset__all
    UNION ALL SELECT file, globalPid FROM raw_processes__all
)
SELECT file, min(g >> 48) AS host, max(g >> 48) AS last_host, min(g) AS least
FROM keys
WHERE g IS NOT NULL
GROUP BY file;

WITH devices AS (
    SELECT deviceId AS d FROM raw_kernel__all
    UNION ALL SELECT deviceId FROM raw_graph_trace__all
    UNION ALL SELECT deviceId FROM raw_memcpy__all
    UNION ALL SELECT deviceId FROM raw_memset__all
    UNION ALL SELECT id FROM raw_gpu__all
),
strings AS (
    SELECT id AS s FROM raw_strings__all
    UNION ALL SELECT textId FROM raw_nvtx__all
    UNION ALL SELECT nameId FROM raw_runtime__all
    UNION ALL SELECT shortName FROM raw_kernel__all
    UNION ALL SELECT demangledName FROM raw_kernel__all
)
SELECT (SELECT count(*) FROM merged_keys) AS files,
       (SELECT coalesce(bool_and(host = last_host AND least >= 0), true) FROM merged_keys) AS one_host_each,
       (SELECT coalesce(min(d) >= 0 AND max(d) < 4294967296, true) FROM devices) AS devices_fit,
       (SELECT coalesce(min(s) >= 0 AND max(s) < 1099511627776, true) FROM strings) AS strings_fit
