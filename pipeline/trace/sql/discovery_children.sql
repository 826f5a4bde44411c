-- reads: kernel_rows, discovery_occ_work, discovery_groups, discovery_depth, discovery_warmup
-- creates: -
-- What a range that occurs once per process holds (`mfu init`'s one-step and loop proposals, proposal.py):
-- per (parent group, child group), the child's occurrences inside the parent's, per process: how many (a loop
-- of N steps repeats its child N times), which (the child's own 1-based occurrence numbers, for a job selecting
-- them), the kernel time launched inside them against the parent's, and the steadiness of their period
-- (start-to-start inside the parent; CV as inspect_regions.sql computes it, from exact integer sums).
-- parent_share: the parent's kernel time of the trace's after the warm-up (less the warm-up group holding most).
-- A parent is a candidate only after the named warm-up (discovery_warmup.after_warmup), holding at most
-- $max_warmup_held of its kernel time inside the warm-up, and not itself named warm-up. Children: every
-- group with GPU work inside, or a step-part name (forward / backward / optimizer / loss); $limit rows,
-- the most child kernel time first.
WITH once AS (
    SELECT gid, sum(kernel_sum_ns) AS kernel_ns FROM discovery_occ_work GROUP BY gid HAVING max(occurrence) = 1
),
parents AS (
    SELECT o.* FROM discovery_occ_work AS o
    JOIN once USING (gid)
    JOIN discovery_groups AS g USING (gid)
    JOIN discovery_warmup AS w USING (gid)
    WHERE NOT g.warmup_named AND w.after_warmup = 1 AND w.warmup_held_ns <= $max_warmup_held * once.kernel_ns
),
inside AS (
    SELECT p.gid AS parent, c.gid AS child, c.global_pid, c.occurrence, c.kernel_sum_ns,
           lead(c.start_ns) OVER (PARTITION BY p.gid, c.gid, c.global_pid ORDER BY c.occurrence) - c.start_ns
               AS period_ns
    FROM parents AS p
    JOIN discovery_occ_work AS c
      ON c.global_pid = p.global_pid AND c.start_ns >= p.start_ns AND c.end_ns <= p.end_ns AND c.gid <> p.gid
),
per_process AS (
    SELECT parent, child, global_pid, count(*) AS repeats, min(occurrence) AS first, max(occurrence) AS last,
           sum(kernel_sum_ns) AS kernel_ns
    FROM inside GROUP BY ALL
),
pairs AS (
    SELECT parent, child, min(repeats) AS repeats_min, max(repeats) AS repeats_max, min(first) AS first_min,
           max(first) AS first_max, min(last) AS last_min, max(last) AS last_max, sum(kernel_ns) AS kernel_ns,
           count(*) AS processes
    FROM per_process GROUP BY ALL
),
periods AS (
    SELECT parent, child, count(period_ns) AS periods,
           CASE WHEN count(period_ns) >= 2
                THEN sqrt(CAST(count(period_ns) * sum(CAST(period_ns AS HUGEINT) * period_ns)
                               - sum(period_ns) * sum(period_ns) AS DOUBLE))
                     / nullif(CAST(sum(period_ns) AS DOUBLE), 0) END AS period_cv
    FROM inside GROUP BY ALL
),
parent_work AS (
    SELECT gid AS parent, sum(kernel_sum_ns) AS parent_kernel_ns, count(*) AS parent_processes
    FROM parents GROUP BY gid
),
-- The kernel time after the warm-up: the trace's, less what the warm-up group holding the most launched.
measured AS (
    SELECT t.ns - coalesce(w.ns, 0) AS kernel_ns
    FROM (SELECT sum(end_ns - start_ns) AS ns FROM kernel_rows) AS t,
         (SELECT max(ns) AS ns FROM (SELECT sum(o.kernel_sum_ns) AS ns
                                     FROM discovery_occ_work AS o JOIN discovery_groups AS g USING (gid)
                                     WHERE g.warmup_named GROUP BY gid)) AS w
)
SELECT pg.name_group AS parent_name, pg.domain AS parent_domain, pd.min_depth AS parent_depth,
       pg.numbered AS parent_numbered, pg.has_suffix AS parent_has_suffix, pg.names AS parent_names,
       w.parent_kernel_ns / nullif(m.kernel_ns, 0) AS parent_share,
       cg.name_group AS name_group, cg.domain, cg.numbered, cg.names, cg.has_suffix, cg.warmup_named,
       pr.repeats_min, pr.repeats_max, pr.first_min, pr.first_max, pr.last_min, pr.last_max,
       pr.kernel_ns, w.parent_kernel_ns, pr.processes = w.parent_processes AS in_every_process,
       pe.periods, pe.period_cv
FROM pairs AS pr
JOIN parent_work AS w USING (parent)
JOIN periods AS pe USING (parent, child)
JOIN discovery_groups AS pg ON pg.gid = pr.parent
JOIN discovery_groups AS cg ON cg.gid = pr.child
JOIN discovery_depth AS pd ON pd.gid = pr.parent
CROSS JOIN measured AS m
WHERE pr.kernel_ns > 0 OR regexp_matches(lower(cg.name_group), 'forward|backward|optimi[sz]er|fwd|bwd|loss')
ORDER BY pr.kernel_ns DESC, pr.repeats_min DESC, parent_name, name_group, cg.domain NULLS FIRST
LIMIT $limit;
