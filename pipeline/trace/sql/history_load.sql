-- reads: -
-- creates: history
-- A history folder's Parquet files (one per run) as one temporary `history` table, the form
-- history_trend reads. Files of both formats may be mixed: union_by_name leaves the format-2 columns
-- NULL in format-1 rows; a folder of format-1 files only is migrated like a DuckDB table
-- (history.table_version checks the columns, and refuses files that are no history).
CREATE TEMP TABLE history AS
SELECT * FROM read_parquet($files, union_by_name = true);
