-- reads: ranges, time_buckets, range_group, numbered_key, numbered_label
-- creates: discovery_ranges, discovery_groups, discovery_depth, discovery_occ, discovery_buckets, discovery_warm
-- Region discovery for `mfu inspect` / `mfu init`: every NVTX range-name group ranked by the GPU
-- work it encloses, with what makes a name look like one training/inference step.
-- Names are grouped with PyTorch's ", seq = N, op_id = M" suffixes removed (select them with
-- `match: prefix`), and names that differ only in their number ('ProfilerStep#7', 'step 12') are one
-- group (numbered_key, macros.sql; selected with an anchored `match: regex`). All set-based: no
-- per-range loop, so millions of ranges are fine.
--
-- Occurrences of a group are counted per process as in a job (docs/figures.md §3, §6): ranges of the
-- group that overlap in one process fold into the outermost (an island); islands open on a
-- strict overlap, so back-to-back steps stay two occurrences.
-- gid: a hash of (name key, domain), so windows partition on an integer, not on strings; the
-- per-range table keeps numbers only, the names live once per distinct name in discovery_groups.
-- A range without a name (no text, and a textId in no StringIds row: a damaged export) is no
-- candidate: no job can select it, and all such ranges would form one group of unrelated ranges.
CREATE OR REPLACE TEMP TABLE discovery_ranges AS
SELECT hash(numbered_key(name), domain) AS gid, global_pid, pid, global_tid, start_ns, end_ns
FROM ranges
WHERE name IS NOT NULL;

-- numbered: more than one name differing only in the number (listed as the label, 'ProfilerStep#<n>');
-- warmup_named: the name says warm-up ('warm', 'warmup', 'warm-up', any case): never the measured steps.
CREATE OR REPLACE TEMP TABLE discovery_groups AS
WITH names AS (
    SELECT DISTINCT name, domain FROM ranges WHERE name IS NOT NULL
),
named AS (
    SELECT hash(numbered_key(name), domain) AS gid, range_group(name) AS plain, numbered_label(name) AS label,
           name, domain
    FROM names
),
grouped AS (
    SELECT gid, any_value(domain) AS domain, count(DISTINCT plain) > 1 AS numbered, count(DISTINCT plain) AS names,
           min(plain) AS plain, any_value(label) AS label, bool_or(name <> plain) AS has_suffix, min(name) AS example
    FROM named
    GROUP BY gid
)
SELECT gid, CASE WHEN numbered THEN label ELSE plain END AS name_group, domain, has_suffix, example, numbered, names,
       contains(lower(CASE WHEN numbered THEN label ELSE plain END), 'warm') AS warmup_named
FROM grouped;

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

-- Named warm-up: per process, the end of its last range whose name says warm-up. A group's occurrences
-- ending by then are warm-up too, or before it (Forward inside 'Warm-up Step 1'...'5'); one still open
-- then holds the warm-up ('Run Benchmark' around it and the benchmark; 'distributed_training' around a
-- short NCCL 'warmup' and the step): discovery_warmup says how much of the warm-up's GPU work it holds.
CREATE OR REPLACE TEMP TABLE discovery_warm AS
SELECT r.global_pid, max(r.end_ns) AS warm_end_ns
FROM discovery_ranges AS r JOIN discovery_groups AS g USING (gid)
WHERE g.warmup_named
GROUP BY r.global_pid;
