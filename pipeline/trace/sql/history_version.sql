-- reads: history
-- creates: -
-- The newest format any row of `history` was written in (rows of format 1 carry no marker).
SELECT max(coalesce(format_version, 1)) AS version FROM history;
