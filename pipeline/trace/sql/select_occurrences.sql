-- reads: region_ranges, time_buckets
-- creates: selected_ranges, range_buckets
-- The job's occurrences $first..$last of the matched ranges (region_ranges.sql), kept once:
-- every attribution and time query reads this table, so "selected" has one definition.
CREATE OR REPLACE TEMP TABLE selected_ranges AS
SELECT *
FROM region_ranges
WHERE occurrence BETWEEN $first AND $last;

-- The selected ranges by time bucket (macros.sql time_buckets), so that attributing launches and kernels
-- to ranges is linear in ranges (attribute_launch.sql; macros.sql overlapping_ranges).
CREATE OR REPLACE TEMP TABLE range_buckets AS
SELECT * FROM time_buckets(selected_ranges);

-- Hosts (VM ids, bits 48+ of the process key) the selected ranges come from: device ids are per
-- host, so in a file holding several hosts per-device figures add up device k of every host.
SELECT count(DISTINCT global_pid >> 48) AS hosts FROM selected_ranges;
