-- reads: history
-- creates: -
-- Bring a format-1 history table (the columns up to straggler_s) to format 2. Its rows keep what they
-- had: no label, no samples (the change detection says "cannot decide" for them), format_version 1.
ALTER TABLE history ADD COLUMN label VARCHAR;
ALTER TABLE history ADD COLUMN samples_field VARCHAR;
ALTER TABLE history ADD COLUMN step_samples_s DOUBLE[];
ALTER TABLE history ADD COLUMN mfu_samples_pct DOUBLE[];
ALTER TABLE history ADD COLUMN format_version INTEGER DEFAULT 1;
