-- reads: ranges, range_buckets, overlapping_ranges
-- creates: operator_inside, label_spans, operator_ranges, occurrence_places
-- FLOPs counted from the shapes PyTorch records in operator range names (issue #31):
-- `torch.autograd.profiler.emit_nvtx(record_shapes=True)` names each operator's range
--   aten::mm, seq = 10290, op_id = 88690, sizes = [[2048, 768], [768, 3072]], input_op_ids = [...]
-- (`seq` and `sizes` only when known; a tensor's shape per input, [] for a non-tensor argument).
-- One row per GEMM- or attention-class operator range (an op with `::` whose name is a matrix
-- product, a convolution or attention) that starts inside an occurrence in that occurrence's
-- process, any thread (the backward pass runs on the autograd thread).
-- Leaves only: a range with another GEMM-class range nested inside it on the same thread is a
-- wrapper (aten::linear -> aten::matmul -> aten::mm) and is left out, so nothing counts twice.
-- On one thread NVTX push/pop ranges nest, so with the ranges ordered by start (the longer first) a
-- range holds another exactly when the next one starts before it ends.
-- Each leaf gets FLOPs from its shapes by the rule of its operator (`rules` below), else status
-- 'not_covered' and a reason, never a guess:
--   mm [m,k]x[k,n] and addmm (2nd, 3rd tensors): 2mkn; bmm [b,m,k]x[b,k,n] and baddbmm (2nd, 3rd): 2bmkn
--   (the inner dimensions must agree); bias and scaling are not matrix-product FLOPs (docs/figures.md §7).
--   attention from q [b,h,sq,d], k [b,hk,sk,d], v [b,hk,sk,dv] (BHSD; the BSHD layout of the flash and
--   efficient kernels' own ops is read as [b,s,h,d]): forward QKᵀ and ×V, 2·b·h·sq·sk·(d + dv); backward
--   with the recomputed QKᵀ, 5 products, 2·b·h·sq·sk·(3d + 2dv) (FlashAttention-2 §3.1.2). Every
--   query-key pair counts here: the causal flag is not in the shapes, so halving is the analysis's
--   choice (counted_flops.sql, by the job's convention).
--   elements: the fewest a counted leaf moves to and from memory (docs/figures.md §9: each input read once, the
--   output written once): mm m·k + k·n + m·n (b times that for bmm); attention q, k, v and the output,
--   backward twice that (q, k, v, the output and its gradient read, three gradients written).
--   convolution: not counted, its output size depends on stride, padding and dilation, which the
--   shapes do not record. A GEMM-class leaf with no `sizes =` (shapes not recorded) is not covered.
-- label_spans: where each label holds on each thread, so operators and kernels (operator_work.sql) are
-- labelled by one rule. A label is the innermost named range (a name that is no operator's) holding a
-- point in time on its thread: the named ranges are cut into segments at every start and end, each
-- segment labelled by the latest-started range covering it. Inside an autograd backward node
-- (`MmBackward0, seq = N`, outermost ones only) the label is that of the first forward range with the
-- same seq N in the process (emit_nvtx's forward-backward correlation), so backward work lands on the layer
-- whose forward made it; a node whose seq names no labelled forward range leaves the segment's label.
-- An operator's label is the one holding its start; pass: backward inside a node or for a `*_backward`
-- op, else forward.
CREATE OR REPLACE TEMP TABLE operator_inside AS
WITH process_ranges AS (
    SELECT global_pid, global_tid, start_ns, end_ns, name FROM ranges
)
SELECT occurrence, global_tid, start_ns, end_ns, name,
       regexp_matches(name, '^[^,]+, (seq|op_id|sizes) = ')
           OR regexp_full_match(name, '[A-Za-z_][A-Za-z0-9_.]*::[A-Za-z0-9_.]+') AS is_operator,
       regexp_matches(name, '^[A-Za-z0-9_]+Backward[0-9]*, seq = ') AS is_node,
       split_part(name, ', ', 1) AS op,
       nullif(regexp_extract(name, ', seq = ([0-9]+)', 1), '') AS seq
FROM overlapping_ranges(process_ranges)
WHERE global_pid = range_pid AND start_ns BETWEEN range_start_ns AND range_end_ns AND end_ns >= start_ns;

CREATE OR REPLACE TEMP TABLE label_spans AS
WITH named AS (
    SELECT occurrence, global_tid, start_ns, end_ns, name FROM operator_inside WHERE NOT is_operator
),
points AS (
    SELECT occurrence, global_tid, start_ns AS t FROM named
    UNION SELECT occurrence, global_tid, end_ns FROM named
),
cuts AS (
    SELECT occurrence, global_tid, t AS start_ns, lead(t) OVER (PARTITION BY occurrence, global_tid ORDER BY t) AS end_ns
    FROM points
),
segments AS (
    SELECT c.occurrence, c.global_tid, c.start_ns, c.end_ns, first(n.name ORDER BY n.start_ns DESC, n.end_ns) AS label
    FROM cuts AS c
    JOIN named AS n
      ON n.occurrence = c.occurrence AND n.global_tid = c.global_tid
     AND n.start_ns <= c.start_ns AND n.end_ns >= c.end_ns
    WHERE c.end_ns IS NOT NULL
    GROUP BY ALL
),
nodes AS (
    SELECT occurrence, global_tid, start_ns, end_ns, seq,
           coalesce(max(end_ns) OVER (PARTITION BY occurrence, global_tid ORDER BY start_ns, end_ns DESC
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) >= end_ns, false) AS nested
    FROM operator_inside
    WHERE is_node
),
forward AS (             -- the first forward range of each seq a node carries
    SELECT occurrence, seq, arg_min(global_tid, start_ns) AS global_tid, min(start_ns) AS start_ns
    FROM operator_inside
    WHERE NOT is_node AND seq IN (SELECT seq FROM nodes)
    GROUP BY occurrence, seq
),
seq_labels AS (
    SELECT f.occurrence, f.seq, CASE WHEN f.start_ns < g.end_ns THEN g.label END AS label
    FROM forward AS f
    ASOF LEFT JOIN segments AS g
      ON g.occurrence = f.occurrence AND g.global_tid = f.global_tid AND f.start_ns >= g.start_ns
)
SELECT occurrence, global_tid, start_ns, end_ns, label, false AS node FROM segments
UNION ALL
SELECT n.occurrence, n.global_tid, n.start_ns, n.end_ns, s.label, true
FROM nodes AS n
LEFT JOIN seq_labels AS s USING (occurrence, seq)
WHERE NOT n.nested;

CREATE OR REPLACE TEMP TABLE operator_ranges AS
WITH rules(op, kind, first, layout) AS (
    VALUES ('aten::mm', 'mm', 1, NULL), ('aten::addmm', 'mm', 2, NULL),
           ('aten::bmm', 'bmm', 1, NULL), ('aten::baddbmm', 'bmm', 2, NULL),
           ('aten::scaled_dot_product_attention', 'attention', 1, 'bhsd'),
           ('aten::_scaled_dot_product_flash_attention', 'attention', 1, 'bhsd'),
           ('aten::_scaled_dot_product_efficient_attention', 'attention', 1, 'bhsd'),
           ('aten::_scaled_dot_product_cudnn_attention', 'attention', 1, 'bhsd'),
           ('aten::_flash_attention_forward', 'attention', 1, 'bshd'),
           ('aten::_efficient_attention_forward', 'attention', 1, 'bshd'),
           ('flash_attn::_flash_attn_forward', 'attention', 1, 'bshd'),
           ('aten::_scaled_dot_product_flash_attention_backward', 'attention_backward', 2, 'bhsd'),
           ('aten::_scaled_dot_product_efficient_attention_backward', 'attention_backward', 2, 'bhsd'),
           ('aten::_scaled_dot_product_cudnn_attention_backward', 'attention_backward', 2, 'bhsd'),
           ('aten::_flash_attention_backward', 'attention_backward', 2, 'bshd'),
           ('aten::_efficient_attention_backward', 'attention_backward', 2, 'bshd'),
           ('flash_attn::_flash_attn_backward', 'attention_backward', 2, 'bshd')
),
gemm_class AS (
    SELECT i.*, r.kind, r.first, r.layout,
           regexp_extract(i.name, ', sizes = (\[(\[[0-9, ]*\](, )?)*\])', 1) AS shapes,
           coalesce(lead(i.start_ns) OVER (PARTITION BY i.occurrence, i.global_tid ORDER BY i.start_ns, i.end_ns DESC)
                    <= i.end_ns, false) AS wrapper
    FROM operator_inside AS i
    LEFT JOIN rules AS r ON r.op = i.op
    WHERE i.is_operator AND contains(i.op, '::')
      AND (r.kind IS NOT NULL
           OR regexp_matches(i.op, '::(matmul|linear|addbmm|addmv|mv|dot|einsum|tensordot|bilinear|_scaled_mm|_int_mm)$')
           OR regexp_matches(i.op, 'conv|attention|attn'))
),
leaves AS (
    SELECT *, list_transform(regexp_extract_all(shapes, '\[([0-9, ]*)\]', 1),
                             t -> list_transform(list_filter(string_split(t, ', '), x -> x <> ''),
                                                 x -> CAST(x AS BIGINT))) AS dims
    FROM gemm_class
    WHERE NOT wrapper
),
shaped AS (
    SELECT *, dims[first] AS a, dims[first + 1] AS b, dims[first + 2] AS c FROM leaves
),
counted AS (
    SELECT *,
        CASE
            WHEN kind = 'mm' AND len(a) = 2 AND len(b) = 2 AND a[2] = b[1] THEN 2 * a[1] * a[2] * b[2]
            WHEN kind = 'bmm' AND len(a) = 3 AND len(b) = 3 AND a[1] = b[1] AND a[3] = b[2]
                THEN 2 * a[1] * a[2] * a[3] * b[3]
            WHEN kind LIKE 'attention%' AND len(a) = 4 AND len(b) = 4 AND len(c) = 4 THEN
                (CASE layout WHEN 'bhsd' THEN a[1] * a[2] * a[3] * b[3] ELSE a[1] * a[3] * a[2] * b[2] END)
                * (CASE WHEN kind = 'attention' THEN 2 * (a[4] + c[4]) ELSE 2 * (3 * a[4] + 2 * c[4]) END)
        END AS flops,
        CASE
            WHEN kind = 'mm' THEN a[1] * a[2] + b[1] * b[2] + a[1] * b[2]
            WHEN kind = 'bmm' THEN a[1] * (a[2] * a[3] + b[2] * b[3] + a[2] * b[3])
            WHEN kind LIKE 'attention%' THEN
                (CASE WHEN kind = 'attention' THEN 1 ELSE 2 END)
                * (list_reduce(a, (x, y) -> x * y) // a[4] * (a[4] + c[4]) + list_reduce(b, (x, y) -> x * y)
                   + list_reduce(c, (x, y) -> x * y))
        END AS all_elements
    FROM shaped
),
node_of AS (
    SELECT c.occurrence, c.global_tid, c.start_ns, c.end_ns,
           CASE WHEN c.start_ns <= n.end_ns THEN n.node END AS in_node, n.label AS node_label
    FROM counted AS c
    ASOF LEFT JOIN (SELECT * FROM label_spans WHERE node) AS n
      ON n.occurrence = c.occurrence AND n.global_tid = c.global_tid AND c.start_ns >= n.start_ns
),
segment_of AS (
    SELECT c.occurrence, c.global_tid, c.start_ns, c.end_ns,
           CASE WHEN c.start_ns < g.end_ns THEN g.label END AS segment_label
    FROM counted AS c
    ASOF LEFT JOIN (SELECT * FROM label_spans WHERE NOT node) AS g
      ON g.occurrence = c.occurrence AND g.global_tid = c.global_tid AND c.start_ns >= g.start_ns
)
SELECT row_number() OVER (ORDER BY c.occurrence, c.global_tid, c.start_ns, c.end_ns) AS op_key,
       c.occurrence, c.global_tid, c.start_ns, c.end_ns, c.op, nullif(c.shapes, '') AS shapes,
       c.kind, c.flops, CASE WHEN c.flops IS NOT NULL THEN c.all_elements END AS elements,
       CASE WHEN c.flops IS NOT NULL THEN 'counted' ELSE 'not_covered' END AS status,
       CASE WHEN c.flops IS NOT NULL THEN NULL
            WHEN c.shapes = '' THEN 'no shapes recorded'
            WHEN regexp_matches(c.op, 'conv') THEN 'convolution: stride, padding and dilation are not in the shapes'
            WHEN c.kind IS NULL THEN 'no formula for this operator'
            ELSE 'shapes not as the operator takes them' END AS reason,
       CASE WHEN n.in_node THEN coalesce(n.node_label, g.segment_label) ELSE g.segment_label END AS label,
       CASE WHEN n.in_node OR contains(c.op, 'backward') THEN 'backward' ELSE 'forward' END AS pass
FROM counted AS c
JOIN node_of AS n USING (occurrence, global_tid, start_ns, end_ns)
JOIN segment_of AS g USING (occurrence, global_tid, start_ns, end_ns);

DROP TABLE operator_inside;

-- The last statement's two counts per occurrence, its operator ranges and its distinct labels, for a window shared
-- by several jobs (analysis/sharing.py): each job decides from its own occurrences' whether its own window would
-- place kernels (measure.places), which the window's counts over every job's occurrences do not say.
CREATE OR REPLACE TEMP TABLE occurrence_places AS
SELECT occurrence, sum(operator) AS operators, list(DISTINCT label ORDER BY label) FILTER (label IS NOT NULL) AS labels
FROM (SELECT occurrence, 1 AS operator, CAST(NULL AS VARCHAR) AS label FROM operator_ranges
      UNION ALL
      SELECT occurrence, 0, label FROM label_spans)
GROUP BY occurrence;

SELECT (SELECT count(*) FROM operator_ranges) AS operators, (SELECT count(DISTINCT label) FROM label_spans) AS labels
