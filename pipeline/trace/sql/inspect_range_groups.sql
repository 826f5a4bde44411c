-- reads: ranges
-- creates: -
-- How many distinct range-name groups exist (to say when the listing is cut).
SELECT count(*) AS groups
FROM (SELECT DISTINCT regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', ''), domain FROM ranges);
