-- reads: region_ranges
-- creates: selected_ranges
-- The job's occurrences $first..$last of the matched ranges (region_ranges.sql), kept once:
-- every attribution and time query reads this table, so "selected" has one definition.
CREATE OR REPLACE TEMP TABLE selected_ranges AS
SELECT *
FROM region_ranges
WHERE occurrence BETWEEN $first AND $last;
