-- reads: ranges
-- creates: -
-- PyTorch operator ranges (`aten::mm, seq = 10290, op_id = 88690, ...`: a namespaced operator and the
-- suffixes torch.autograd.profiler.emit_nvtx writes) and those of them naming their input shapes
-- (`sizes = [[2048, 768], [768, 3072]]`, record_shapes=True), from which `mfu run` counts FLOPs
-- (operator_ranges.sql): `mfu inspect` says which a trace has, `mfu init` what the shapes enable.
SELECT count(*) AS operator_ranges, count(*) FILTER (WHERE contains(name, ', sizes = [')) AS shaped_ranges
FROM ranges
WHERE regexp_matches(name, '^[A-Za-z_][A-Za-z0-9_.]*::[^,]+, (seq|op_id|sizes) = ')
