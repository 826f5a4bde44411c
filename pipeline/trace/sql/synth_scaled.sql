-- reads: -
-- creates: synth_p, synth_steps, synth_launch
-- Large synthetic export written by DuckDB straight into the attached SQLite file `out`
-- (pipeline/synth_scaled.py). Every row is a pure function of its index, so nothing is
-- held in memory and no Python touches a row. Layout per rank r, step s, launch i:
--   launch start = step start + 3 us + i * spacing;  kernel start = launch + 4 us
--   every $nccl_every-th launch an NCCL kernel on stream 13 (overlaps compute on stream 7),
--   every $second_thread_every-th from the autograd thread, every $duplicate_every-th
--   recorded twice (cudaLaunchKernel_v7000); the last kernel of a step outlives the range.
-- correlationIds count per process from 1 (they repeat across ranks, as in real exports).
-- $k = kernels per step per rank; string ids: 1 region, 2 cudaLaunchKernel,
-- 3 cudaLaunchKernel_v7000, 4 NCCL, 5.. compute names (see synth_scaled.generate_scaled).
-- One run writes steps $first_step..$last_step (0-based) of all ranks: DuckDB holds memory in
-- proportion to the rows one INSERT writes into SQLite (about 60 MB per 0.3 M kernels), so
-- generate_scaled runs this file once per chunk of steps, inside one transaction.
-- The parameters once, as a one-row table: views cannot hold prepared parameters.
CREATE OR REPLACE TEMP TABLE synth_p AS SELECT
    $host AS host,
    $first_pid AS first_pid,
    $ranks AS ranks,
    $steps AS steps,
    $k AS k,
    $step_ns AS step_ns,
    $step_gap_ns AS step_gap_ns,
    $tail_ns AS tail_ns,
    $rank_skew_ns AS rank_skew_ns,
    $busy_fraction AS busy_fraction,
    $nccl_every AS nccl_every,
    $second_thread_every AS second_thread_every,
    $duplicate_every AS duplicate_every,
    $seed AS seed,
    $compute_names AS compute_names,
    $first_step AS first_step,
    $last_step AS last_step;

CREATE OR REPLACE TEMP TABLE synth_steps AS
SELECT
    r AS rank,
    s AS step,
    p.host + ((p.first_pid + r) << 24) AS gpid,
    p.first_pid + r AS pid,
    1000000000 + r * p.rank_skew_ns + s * (p.step_ns + p.step_gap_ns) AS start_ns,
    1000000000 + r * p.rank_skew_ns + s * (p.step_ns + p.step_gap_ns) + p.step_ns - p.tail_ns AS cpu_end_ns
FROM synth_p AS p, range(p.first_step, p.last_step + 1) AS t(s), range(p.ranks) AS u(r);

CREATE OR REPLACE TEMP VIEW synth_launch AS
WITH idx AS (
    SELECT n, n // (p.ranks * p.k) AS step, (n // p.k) % p.ranks AS rank, n % p.k AS i
    FROM synth_p AS p, range(p.first_step * p.ranks * p.k, (p.last_step + 1) * p.ranks * p.k) AS t(n)
)
SELECT
    idx.n, idx.i, st.rank, st.gpid, st.pid,
    st.step * p.k + idx.i + 1 AS corr,
    st.start_ns + 3000 + idx.i * ((st.cpu_end_ns - st.start_ns - 6000) // p.k) AS launch_ns,
    st.cpu_end_ns,
    p.nccl_every > 0 AND idx.i % p.nccl_every = p.nccl_every - 1 AS nccl,
    st.gpid | (st.pid + CASE WHEN p.second_thread_every > 0 AND idx.i % p.second_thread_every = 1
                             THEN 1 ELSE 0 END) AS tid,
    -- mean busy time per kernel times a uniform factor in [0.5, 1.5) from a hash of the index
    CAST(((p.step_ns - 4000) * p.busy_fraction / p.k)
         * (0.5 + (hash(idx.n, p.seed) % 1000000) / 1000000.0) AS BIGINT) AS dur_ns
FROM idx CROSS JOIN synth_p AS p
JOIN synth_steps AS st ON st.step = idx.step AND st.rank = idx.rank;

INSERT INTO out.CUPTI_ACTIVITY_KIND_KERNEL
    (start, "end", deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName,
     gridX, gridY, gridZ, blockX, blockY, blockZ)
SELECT
    launch_ns + 4000,
    launch_ns + 4000 + CASE WHEN i = p.k - 1
                            THEN greatest(dur_ns, cpu_end_ns - launch_ns + p.tail_ns - 4000)
                            ELSE greatest(dur_ns, 1000) END,
    rank, 1, CASE WHEN nccl THEN 13 ELSE 7 END, corr, gpid,
    CASE WHEN nccl THEN 4 ELSE 5 + i % p.compute_names END,
    CASE WHEN nccl THEN 4 ELSE 5 + i % p.compute_names END,
    128, 1, 1, 256, 1, 1
FROM synth_launch, synth_p AS p;

INSERT INTO out.CUPTI_ACTIVITY_KIND_RUNTIME (start, "end", eventClass, globalTid, correlationId, nameId, returnValue)
SELECT launch_ns, launch_ns + 3000, 1, tid, corr, 2, 0 FROM synth_launch
UNION ALL
SELECT launch_ns + 200, launch_ns + 2800, 1, tid, corr, 3, 0 FROM synth_launch, synth_p AS p
WHERE p.duplicate_every > 0 AND i % p.duplicate_every = 0;

INSERT INTO out.NVTX_EVENTS (start, "end", eventType, text, textId, globalTid, domainId)
SELECT start_ns, cpu_end_ns, 59, NULL, 1, gpid | pid, 0 FROM synth_steps
UNION ALL
SELECT start_ns + 100, start_ns + 1000, 59, 'aten::mm, seq = ' || step || ', op_id = ' || rank, NULL, gpid | pid, 0
FROM synth_steps;
