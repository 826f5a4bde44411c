-- reads: ranges, time_buckets
-- creates: discovery_ranges, discovery_groups, discovery_depth, discovery_occ, discovery_buckets
-- Region discovery for `mfu inspect` / `mfu init`: every NVTX range-name group ranked by the GPU
-- work it encloses, with what makes a name look like one training/inference step.
-- Names are grouped with PyTorch's ", seq = N, op_id = M" suffixes removed (select them with
-- `match: prefix`). All set-based: no per-range loop, so millions of ranges are fine.
--
-- Occurrences of a group are counted per process as in a job (SEMANTICS §3, §6): ranges of the
-- group that overlap in one process fold into the outermost (an island); islands open on a
-- strict overlap, so back-to-back steps stay two occurrences.
-- gid: a hash of (name group, domain), so windows partition on an integer, not on strings; the
-- per-range table keeps numbers only, the names live once per distinct name in discovery_groups.
-- A range without a name (no text, and a textId in no StringIds row: a damaged export) is no
-- candidate: no job can select it, and all such ranges would form one group of unrelated ranges.
CREATE OR REPLACE TEMP TABLE discovery_ranges AS
SELECT hash(regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', ''), domain) AS gid,
       global_pid, pid, global_tid, start_ns, end_ns
FROM ranges
WHERE name IS NOT NULL;

CREATE OR REPLACE TEMP TABLE discovery_groups AS
WITH names AS (
    SELECT DISTINCT name, domain FROM ranges WHERE name IS NOT NULL
),
named AS (
    SELECT regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', '') AS name_group, name, domain FROM names
)
SELECT hash(name_group, domain) AS gid, any_value(name_group) AS name_group, any_value(domain) AS domain,
       bool_or(name <> name_group) AS has_suffix, min(name) AS example
FROM named
GROUP BY hash(name_group, domain);

-- Nesting depth in the range's own thread: ranges open when it starts (push/pop ranges nest per
-- thread). A sweep over start (+1) and end (-1) events; at equal times ends go first, and of two
-- ranges starting together the longer one is the outer.
CREATE OR REPLACE TEMP TABLE discovery_depth AS
WITH events AS (
    SELECT global_tid, start_ns AS t, 1 AS ord, -end_ns AS tie, 1 AS delta, gid FROM discovery_ranges
    UNION ALL
    SELECT global_tid, end_ns, 0, 0, -1, NULL FROM discovery_ranges
),
swept AS (
    SELECT gid, delta,
           sum(delta) OVER (PARTITION BY global_tid ORDER BY t, ord, tie ROWS UNBOUNDED PRECEDING) - 1 AS depth
    FROM events
)
SELECT gid, min(depth) AS min_depth, max(depth) AS max_depth
FROM swept WHERE delta = 1
GROUP BY gid;

CREATE OR REPLACE TEMP TABLE discovery_occ AS
WITH marked AS (
    SELECT gid, global_pid, pid, start_ns, end_ns,
           max(end_ns) OVER (PARTITION BY gid, global_pid ORDER BY start_ns, end_ns DESC
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM discovery_ranges
),
islands AS (
    SELECT *, sum(CASE WHEN prev_end_ns IS NULL OR start_ns >= prev_end_ns THEN 1 ELSE 0 END)
                  OVER (PARTITION BY gid, global_pid ORDER BY start_ns, end_ns DESC
                        ROWS UNBOUNDED PRECEDING) AS occurrence
    FROM marked
)
SELECT row_number() OVER () AS occ_id, *,
       coalesce(lead(start_ns) OVER (PARTITION BY gid, global_pid ORDER BY occurrence) = end_ns, false) AS shared_end
FROM (SELECT gid, global_pid, pid, occurrence, min(start_ns) AS start_ns, max(end_ns) AS end_ns, count(*) AS ranges
      FROM islands
      GROUP BY gid, global_pid, pid, occurrence);

-- The occurrences by time bucket (macros.sql time_buckets), for discovery_work.sql's join.
CREATE OR REPLACE TEMP TABLE discovery_buckets AS
SELECT occ_id, global_pid, start_ns, end_ns, shared_end, width_ns, bucket
FROM time_buckets(discovery_occ);
