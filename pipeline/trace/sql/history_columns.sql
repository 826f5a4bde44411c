-- reads: -
-- creates: -
-- The columns of the table `history` in one database ('temp' for a loaded copy), in order: what
-- history.table_version reads the format from.
SELECT column_name, data_type
FROM duckdb_columns()
WHERE database_name = $database AND schema_name = 'main' AND table_name = 'history'
ORDER BY column_index;
