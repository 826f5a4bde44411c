-- reads: ranges, numbered_key
-- creates: -
-- How many distinct range-name groups exist (to say when the listing is cut), grouped as
-- inspect_ranges.sql groups them.
SELECT count(*) AS groups
FROM (SELECT DISTINCT numbered_key(name), domain FROM ranges);
