-- reads: selected_ranges, kernel_union
-- creates: occurrence_times
-- One row per selected occurrence (docs/figures.md §5), integer nanoseconds throughout:
-- cpu range = longest range among processes (cpu_start_ns: that range's start); wall =
-- envelope of the ranges and the kernels they launched, max(range end, last kernel end) -
-- min(range start). step = the period to the next selected occurrence's start when that one
-- starts before this envelope ends (the CPU ran ahead: envelopes overlap), else the wall
-- (docs/figures.md §6).
CREATE OR REPLACE TEMP TABLE occurrence_times AS
WITH longest AS (
    SELECT occurrence, start_ns AS cpu_start_ns,
           row_number() OVER (PARTITION BY occurrence ORDER BY end_ns - start_ns DESC, start_ns) AS nth
    FROM selected_ranges
),
r AS (
    SELECT occurrence,
           count(*) AS processes,
           min(start_ns) AS start_ns,
           max(end_ns) AS range_end_ns,
           max(end_ns - start_ns) AS cpu_range_ns,
           list(pid ORDER BY pid) AS pids
    FROM selected_ranges
    GROUP BY occurrence
),
t AS (
    SELECT
        r.occurrence,
        r.processes,
        r.pids,
        r.start_ns,
        r.cpu_range_ns,
        l.cpu_start_ns,
        greatest(r.range_end_ns, coalesce(u.last_end_ns, r.range_end_ns)) - r.start_ns AS wall_ns,
        coalesce(u.sum_ns, 0) AS kernel_sum_ns,
        coalesce(u.union_ns, 0) AS kernel_union_ns,
        coalesce(u.kernel_count, 0) AS kernel_count
    FROM r
    JOIN longest AS l ON l.occurrence = r.occurrence AND l.nth = 1
    LEFT JOIN kernel_union AS u
           ON u.occurrence = r.occurrence AND u.device_id IS NULL
)
SELECT *,
       CASE WHEN lead(start_ns) OVER w < start_ns + wall_ns THEN lead(start_ns) OVER w - start_ns
            ELSE wall_ns END AS step_ns
FROM t
WINDOW w AS (ORDER BY occurrence);

SELECT occurrence, processes, pids, start_ns, cpu_range_ns, wall_ns, kernel_sum_ns, kernel_union_ns,
       kernel_count, step_ns
FROM occurrence_times
ORDER BY occurrence;
