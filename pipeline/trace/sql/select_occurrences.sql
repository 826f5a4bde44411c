-- reads: region_ranges
-- creates: selected_ranges, range_buckets
-- The job's occurrences $first..$last of the matched ranges (region_ranges.sql), kept once:
-- every attribution and time query reads this table, so "selected" has one definition.
CREATE OR REPLACE TEMP TABLE selected_ranges AS
SELECT *
FROM region_ranges
WHERE occurrence BETWEEN $first AND $last;

-- The selected ranges by time bucket, so that attributing launches and kernels to ranges is linear
-- in ranges (issue #10: 20,000 occurrences) with no join on the process alone, which would pair
-- every launch or kernel with every range of its process (attribute_launch.sql; macros.sql
-- overlapping_ranges). The time axis is cut into buckets of the ranges' mean length, or of the
-- envelope's length over the number of ranges where that is longer (sparse ranges: an interval
-- across the envelope then touches about one bucket per range), and each range is listed under
-- every bucket it touches: at most three per range on average, so at most 3x as many rows as ranges.
-- The buckets only narrow the candidates; the joins' own tests decide, so any width gives the same rows.
CREATE OR REPLACE TEMP TABLE range_buckets AS
WITH width AS (
    SELECT CAST(greatest(1, sum(end_ns - start_ns) // count(*), (max(end_ns) - min(start_ns)) // count(*)) AS BIGINT)
           AS width_ns
    FROM selected_ranges
)
SELECT s.*, w.width_ns, unnest(range(s.start_ns // w.width_ns, s.end_ns // w.width_ns + 1)) AS bucket
FROM selected_ranges AS s, width AS w;

-- Hosts (VM ids, bits 48+ of the process key) the selected ranges come from: device ids are per
-- host, so in a file holding several hosts per-device figures add up device k of every host.
SELECT count(DISTINCT global_pid >> 48) AS hosts FROM selected_ranges;
