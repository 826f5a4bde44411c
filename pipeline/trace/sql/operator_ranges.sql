-- reads: ranges, range_buckets, overlapping_ranges
-- creates: operator_ranges
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
--   (the inner dimensions must agree); bias and scaling are not matrix-product FLOPs (SEMANTICS §7).
--   attention from q [b,h,sq,d], k [b,hk,sk,d], v [b,hk,sk,dv] (BHSD; the BSHD layout of the flash and
--   efficient kernels' own ops is read as [b,s,h,d]): forward QKᵀ and ×V, 2·b·h·sq·sk·(d + dv); backward
--   with the recomputed QKᵀ, 5 products, 2·b·h·sq·sk·(3d + 2dv) (FlashAttention-2 §3.1.2). Every
--   query-key pair counts here: the causal flag is not in the shapes, so halving is the analysis's
--   choice (counted_flops.sql, by the job's convention).
--   convolution: not counted, its output size depends on stride, padding and dilation, which the
--   shapes do not record. A GEMM-class leaf with no `sizes =` (shapes not recorded) is not covered.
-- label: the innermost named range (no operator name) holding the op on its thread; for an op inside an
-- autograd backward node (`MmBackward0, seq = N`), the label of the forward ranges with the same
-- seq N in the process (emit_nvtx's forward-backward correlation), so backward FLOPs land on the layer
-- whose forward made them. pass: backward inside such a node or for a `*_backward` op, else forward.
CREATE OR REPLACE TEMP TABLE operator_ranges AS
WITH process_ranges AS (
    SELECT global_pid, global_tid, start_ns, end_ns, name FROM ranges
),
inside AS (
    SELECT occurrence, global_tid, start_ns, end_ns, name,
           regexp_matches(name, '^[^,]+, (seq|op_id|sizes) = ')
               OR regexp_full_match(name, '[A-Za-z_][A-Za-z0-9_.]*::[A-Za-z0-9_.]+') AS is_operator,
           split_part(name, ', ', 1) AS op,
           CAST(regexp_extract(name, ', seq = ([0-9]+)', 1) AS VARCHAR) AS seq
    FROM overlapping_ranges(process_ranges)
    WHERE global_pid = range_pid AND start_ns BETWEEN range_start_ns AND range_end_ns
),
rules(op, kind, first, layout) AS (
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
    FROM inside AS i
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
        END AS flops
    FROM shaped
),
named AS (
    SELECT occurrence, global_tid, start_ns, end_ns, name FROM inside WHERE NOT is_operator
),
nodes AS (
    SELECT occurrence, global_tid, start_ns, end_ns, seq FROM inside
    WHERE regexp_matches(name, '^[A-Za-z0-9_]+Backward[0-9]*, seq = ')
),
in_node AS (
    SELECT c.occurrence, c.global_tid, c.start_ns, c.end_ns,
           first(n.seq ORDER BY n.start_ns DESC, n.end_ns) AS node_seq
    FROM counted AS c
    JOIN nodes AS n
      ON n.occurrence = c.occurrence AND n.global_tid = c.global_tid
     AND n.start_ns <= c.start_ns AND n.end_ns >= c.end_ns
    GROUP BY ALL
),
forward_of AS (          -- the forward ranges each backward node's seq points to
    SELECT DISTINCT i.occurrence, i.global_tid, i.start_ns, i.end_ns, i.seq
    FROM inside AS i
    SEMI JOIN in_node AS b ON b.occurrence = i.occurrence AND b.node_seq = i.seq
    WHERE NOT regexp_matches(i.name, '^[A-Za-z0-9_]+Backward[0-9]*, ')
),
labelled AS (            -- the innermost named range holding each leaf and each such forward range
    SELECT x.occurrence, x.global_tid, x.start_ns, x.end_ns,
           first(n.name ORDER BY n.start_ns DESC, n.end_ns) AS label
    FROM (SELECT occurrence, global_tid, start_ns, end_ns FROM counted
          UNION SELECT occurrence, global_tid, start_ns, end_ns FROM forward_of) AS x
    JOIN named AS n
      ON n.occurrence = x.occurrence AND n.global_tid = x.global_tid
     AND n.start_ns <= x.start_ns AND n.end_ns >= x.end_ns
    GROUP BY ALL
),
seq_labels AS (
    SELECT f.occurrence, f.seq, min(l.label) AS label
    FROM forward_of AS f
    JOIN labelled AS l USING (occurrence, global_tid, start_ns, end_ns)
    GROUP BY ALL
)
SELECT row_number() OVER (ORDER BY c.occurrence, c.global_tid, c.start_ns) AS op_key,
       c.occurrence, c.global_tid, c.start_ns, c.end_ns, c.op, nullif(c.shapes, '') AS shapes,
       c.kind, c.flops,
       CASE WHEN c.flops IS NOT NULL THEN 'counted' ELSE 'not_covered' END AS status,
       CASE WHEN c.flops IS NOT NULL THEN NULL
            WHEN c.shapes = '' THEN 'no shapes recorded'
            WHEN regexp_matches(c.op, 'conv') THEN 'convolution: stride, padding and dilation are not in the shapes'
            WHEN c.kind IS NULL THEN 'no formula for this operator'
            ELSE 'shapes not as the operator takes them' END AS reason,
       CASE WHEN b.node_seq IS NOT NULL THEN coalesce(s.label, l.label) ELSE l.label END AS label,
       CASE WHEN b.node_seq IS NOT NULL OR contains(c.op, 'backward') THEN 'backward' ELSE 'forward' END AS pass
FROM counted AS c
LEFT JOIN in_node AS b USING (occurrence, global_tid, start_ns, end_ns)
LEFT JOIN seq_labels AS s ON s.occurrence = c.occurrence AND s.seq = b.node_seq
LEFT JOIN labelled AS l USING (occurrence, global_tid, start_ns, end_ns);

SELECT count(*) AS operators FROM operator_ranges
