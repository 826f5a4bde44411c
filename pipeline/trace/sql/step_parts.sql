-- reads: step_unions, occurrence_times
-- creates: -
-- What ran at each instant of each occurrence's step (docs/compare.md, "what changed"): every instant of
-- the step [start_ns, start_ns + step_ns) of occurrence_times.sql gets one part by what ran in it, on at
-- least one GPU, tried in this order:
--   comm_overlap    communication ($comm_class) and some compute kernel at once
--   comm            communication without compute (memory operations may run too)
--   gemm            compute of the gemm group only (step_unions.sql: gemm, convolution)
--   attention       compute of the attention group only
--   other_compute   compute of the other kernel classes only (elementwise, norms, fused, other, ...)
--   mixed_compute   compute of two or more of these three groups at once
--   memory          memory copies and sets only
--   idle            no attributed kernel and no memory operation
-- From the unions of step_unions.sql (U(x): time some row of x ran), by inclusion and exclusion:
--   compute without communication = U(kernels) - U(comm);   comm = U(kernels) - U(compute)
--   comm_overlap = U(comm) - comm;   gemm = U(kernels) - U(no_gemm), and so attention, other_compute
--   mixed_compute = compute without communication - gemm - attention - other_compute
--   memory = U(any) - U(kernels);   idle = step - U(any)
-- Each is a set of instants, and together they are all of the step, so the parts of an occurrence add up
-- to its step_ns exactly (integer ns). One row per occurrence, every part a column.
WITH u AS (
    SELECT k1 AS occurrence,
           coalesce(sum(union_ns) FILTER (WHERE scope = 'any'), 0) AS u_any,
           coalesce(sum(union_ns) FILTER (WHERE scope = 'kernels'), 0) AS u_kernels,
           coalesce(sum(union_ns) FILTER (WHERE scope = 'compute'), 0) AS u_compute,
           coalesce(sum(union_ns) FILTER (WHERE scope = 'comm'), 0) AS u_comm,
           coalesce(sum(union_ns) FILTER (WHERE scope = 'no_gemm'), 0) AS u_no_gemm,
           coalesce(sum(union_ns) FILTER (WHERE scope = 'no_attention'), 0) AS u_no_attention,
           coalesce(sum(union_ns) FILTER (WHERE scope = 'no_other'), 0) AS u_no_other
    FROM step_unions
    WHERE k2 = 1
    GROUP BY k1
),
p AS (
    SELECT o.occurrence, o.step_ns,
           coalesce(u.u_kernels - u.u_compute, 0) AS comm,
           coalesce(u.u_comm - (u.u_kernels - u.u_compute), 0) AS comm_overlap,
           coalesce(u.u_kernels - u.u_no_gemm, 0) AS gemm,
           coalesce(u.u_kernels - u.u_no_attention, 0) AS attention,
           coalesce(u.u_kernels - u.u_no_other, 0) AS other_compute,
           coalesce(u.u_kernels - u.u_comm, 0) AS compute_alone,
           coalesce(u.u_any - u.u_kernels, 0) AS memory,
           o.step_ns - coalesce(u.u_any, 0) AS idle
    FROM occurrence_times AS o
    LEFT JOIN u ON u.occurrence = o.occurrence
)
SELECT occurrence, CAST(step_ns AS BIGINT) AS step_ns,
       CAST(gemm AS BIGINT) AS gemm_ns, CAST(attention AS BIGINT) AS attention_ns,
       CAST(other_compute AS BIGINT) AS other_compute_ns,
       CAST(compute_alone - gemm - attention - other_compute AS BIGINT) AS mixed_compute_ns,
       CAST(comm AS BIGINT) AS comm_ns, CAST(comm_overlap AS BIGINT) AS comm_overlap_ns,
       CAST(memory AS BIGINT) AS memory_ns, CAST(idle AS BIGINT) AS idle_ns
FROM p
ORDER BY occurrence;
