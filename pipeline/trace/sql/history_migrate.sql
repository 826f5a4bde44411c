-- reads: history
-- creates: -
-- Bring an older history table to the current columns; each column is added only when missing, so it
-- runs on any table history.table_version accepts. A format-1 table (the columns up to straggler_s):
-- its rows keep what they had, no label, no samples (the change detection says "cannot decide" for
-- them), format_version 1. A format-2 table from before the MFU threshold was kept: threshold NULL.
-- A format-1 or 2 table gains comparability_inputs NULL: its runs' inputs are unknown, so the trend calls
-- their figures not comparable (as `mfu compare` does with an unknown input) rather than guess.
-- A format-1 to 3 table gains exit_code and error NULL: only format 4 records failed jobs, so its rows all
-- have results. A table from before what_ran (a nullable column within format 4) gains it NULL: those runs'
-- flagged changes are not decomposed.
ALTER TABLE history ADD COLUMN IF NOT EXISTS label VARCHAR;
ALTER TABLE history ADD COLUMN IF NOT EXISTS samples_field VARCHAR;
ALTER TABLE history ADD COLUMN IF NOT EXISTS step_samples_s DOUBLE[];
ALTER TABLE history ADD COLUMN IF NOT EXISTS mfu_samples_pct DOUBLE[];
ALTER TABLE history ADD COLUMN IF NOT EXISTS format_version INTEGER DEFAULT 1;
ALTER TABLE history ADD COLUMN IF NOT EXISTS mfu_pct_wall_min DOUBLE;
ALTER TABLE history ADD COLUMN IF NOT EXISTS comparability_inputs VARCHAR;
ALTER TABLE history ADD COLUMN IF NOT EXISTS exit_code INTEGER;
ALTER TABLE history ADD COLUMN IF NOT EXISTS error VARCHAR;
ALTER TABLE history ADD COLUMN IF NOT EXISTS what_ran VARCHAR;
